"""NVRTC -> cubin through cuda.core, with an on-disk cache and the ptxas resource report.

Works with no GPU (an explicit ``arch`` such as ``sm_90``): CI compiles every kernel this way.
Never PTX: a newer NVRTC than the driver would make PTX the driver cannot load.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from ..errors import ArchError, CompileError, NoDeviceError, UsageError
from ..kernels import KernelSpec, source_text
from .cubin import usage_from_cubin

CACHE_FORMAT = 3  # bump when what is stored next to a cubin changes

# The archs every kernel is built and checked for (CI: `gpumemlab kernels --arch X` for each): Turing T4,
# Ampere A100 / RTX 30, Ada L4 / RTX 40, Hopper, Blackwell B200 / GB300 / RTX 50. sm_103 needs NVRTC >= 12.9.
SUPPORTED_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120")


@dataclass(frozen=True)
class ResourceUsage:
    """What ``ptxas -v`` reports for one kernel (the seeds' ``--ptxas-options=-v``)."""

    kernel: str
    registers: int
    shared_bytes: int
    spill_store_bytes: int | None  # None: unknown (read from the cubin, which has a stack frame)
    spill_load_bytes: int | None
    local_bytes: int  # stack frame: local memory per thread
    barriers: int = 0
    constant_bytes: int = 0
    from_cubin: bool = False  # ptxas printed no report; registers/shared/frame come from the ELF

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class CompiledModule:
    arch: str
    cubin: bytes
    symbol_mapping: dict[str, str]  # name expression -> mangled name
    log: str
    usage: dict[str, ResourceUsage]  # name expression -> usage (absent if ptxas did not report it)


def cache_dir() -> Path:
    root = os.environ.get("GPUMEMLAB_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpumemlab" / "cubin"


INSTALL_HINT = "pip install 'gpumemlab[cuda]' installs them"


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # the light install (no `cuda` extra): the analyzer works, compiling does not
        raise NoDeviceError(f"cannot import the CUDA Python packages ({exc}); {INSTALL_HINT}") from None
    return nvrtc


def nvrtc_version() -> tuple[int, int]:
    err, major, minor = _nvrtc().nvrtcVersion()
    return int(major), int(minor)


@cache
def nvrtc_build() -> str | None:
    """The installed NVRTC wheel's full version (13.5.37): its ptxas may change code between releases that
    nvrtcVersion reports alike (13.5); None when NVRTC comes from elsewhere (a CUDA toolkit)."""
    from importlib import metadata

    for dist in ("nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu13", "nvidia-cuda-nvrtc-cu12"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")
_BARRIERS = re.compile(r"used (\d+) barriers")


def parse_ptxas_log(log: str) -> dict[str, dict]:
    """Parse ``ptxas -v`` output into {mangled name: {registers, shared_bytes, ...}}."""
    out: dict[str, dict] = {}
    current = None
    for line in log.splitlines():
        m = _ENTRY.search(line) or _PROPS.search(line)
        if m:
            current = m.group(1)
            out.setdefault(current, dict(registers=0, shared_bytes=0, spill_store_bytes=0,
                                         spill_load_bytes=0, local_bytes=0, barriers=0,
                                         constant_bytes=0))
            continue
        if current is None:
            continue
        rec = out[current]
        if m := _FRAME.search(line):
            rec["local_bytes"], rec["spill_store_bytes"], rec["spill_load_bytes"] = map(int, m.groups())
        if m := _USED.search(line):
            rec["registers"] = int(m.group(1))
            rec["shared_bytes"] = int(s.group(1)) if (s := _SMEM.search(line)) else 0
            rec["constant_bytes"] = int(c.group(1)) if (c := _CMEM.search(line)) else 0
            rec["barriers"] = int(b.group(1)) if (b := _BARRIERS.search(line)) else 0
    return out


_CACHE_ENV = dict(lock=threading.Lock(), users=0, old=None)  # compiles in threads share one setting


@contextmanager
def _nvrtc_cache_disabled():
    """NVRTC's own compute cache skips ptxas, and with it the -v report, for code it has seen
    (cuda-python issue 1124); we cache cubins ourselves, so turn it off while compiling (until the last of
    the threads compiling at once is done)."""
    env = _CACHE_ENV
    with env["lock"]:
        if env["users"] == 0:
            env["old"] = os.environ.get("CUDA_CACHE_DISABLE")
            os.environ["CUDA_CACHE_DISABLE"] = "1"
        env["users"] += 1
    try:
        yield
    finally:
        with env["lock"]:
            env["users"] -= 1
            if env["users"] == 0:
                if env["old"] is None:
                    os.environ.pop("CUDA_CACHE_DISABLE", None)
                else:
                    os.environ["CUDA_CACHE_DISABLE"] = env["old"]


def _text(x) -> str:
    return x.decode() if isinstance(x, (bytes, bytearray)) else str(x)


def _program_options(arch: str, options: tuple, defines: tuple):
    from cuda.core import ProgramOptions

    kwargs = dict(arch=arch, std="c++17", ptxas_options=["-v"], lineinfo=True,
                  name="gpumemlab")
    kwargs.update(dict(options))
    if defines:
        kwargs["define_macro"] = [(k, str(v)) for k, v in defines]
    return ProgramOptions(**kwargs)


def _cache_key(text: str, names: list[str], arch: str, options: tuple, defines: tuple) -> str:
    payload = json.dumps(
        dict(fmt=CACHE_FORMAT, src=text, names=sorted(names), arch=arch,
             options=[list(map(str, o)) for o in options], defines=[list(d) for d in defines],
             nvrtc=nvrtc_version(), build=nvrtc_build()),
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def compile_group(source: str, names: list[str], arch: str, options: tuple = (),
                  defines: tuple = (), use_cache: bool = True, text: str | None = None) -> CompiledModule:
    """Compile the name expressions ``names`` of one source file with one option set to a cubin.

    ``text`` replaces the package file's contents (generated kernels); ``source`` then only names it.
    """
    names = sorted(set(names))
    check_arch(arch)
    text = source_text(source) if text is None else text
    key = _cache_key(text, names, arch, options, defines)
    cdir = cache_dir()
    cubin_path, meta_path = cdir / f"{key}.cubin", cdir / f"{key}.json"
    if use_cache and cubin_path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            usage = {n: ResourceUsage(**u) for n, u in meta["usage"].items() if u}
            return CompiledModule(arch, cubin_path.read_bytes(), meta["symbol_mapping"], meta["log"], usage)
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a corrupt entry is rebuilt below

    from cuda.core import Program

    log = io.StringIO()
    try:
        prog = Program(text, code_type="c++",
                       options=_program_options(arch, options, defines))
        with _nvrtc_cache_disabled():
            obj = prog.compile("cubin", name_expressions=names, logs=log)
    except Exception as exc:  # NVRTC reports errors as exceptions carrying the log
        full = str(exc).strip()
        raise CompileError(f"{source} for {arch}: {first_error(full)}", log=full) from None
    raw = {_text(k): _text(v) for k, v in (obj.symbol_mapping or {}).items()}
    mapping = {n: raw.get(n, n) for n in names}
    text = log.getvalue()
    parsed = parse_ptxas_log(text)
    cubin = bytes(obj.code)
    usage = {n: ResourceUsage(kernel=n, **parsed[mapping[n]]) for n in names if mapping[n] in parsed}
    missing = [n for n in names if n not in usage]
    if missing:  # NVRTC's compute cache skipped ptxas for these: read what the cubin records
        elf = usage_from_cubin(cubin)
        for n in missing:
            e = elf.get(mapping[n])
            if e and "registers" in e:
                spills = 0 if e.get("local_bytes", 0) == 0 else None  # no stack frame: no spills
                usage[n] = ResourceUsage(kernel=n, registers=e["registers"], shared_bytes=e.get("shared_bytes", 0),
                                         spill_store_bytes=spills, spill_load_bytes=spills,
                                         local_bytes=e.get("local_bytes", 0), from_cubin=True)
    if use_cache:
        try:
            _atomic_write(cubin_path, cubin)
            _atomic_write(meta_path, json.dumps(dict(symbol_mapping=mapping, log=text,
                                                     usage={n: u.to_dict() for n, u in usage.items()})).encode())
        except OSError:
            pass  # a read-only cache directory only costs a recompile
    return CompiledModule(arch, cubin, mapping, text, usage)


def compile_text(text: str, names: list[str], arch: str, options: tuple = ()) -> CompiledModule:
    """Compile generated CUDA C (e.g. the analyzer's microkernels)."""
    return compile_group("<generated>", names, arch, tuple(options), (), True, text=text)


def group_specs(specs: list[KernelSpec]) -> dict[tuple, list[KernelSpec]]:
    """Specs that share source, options and defines compile together into one cubin."""
    groups: dict[tuple, list[KernelSpec]] = {}
    for s in specs:
        groups.setdefault((s.source, s.options, s.defines), []).append(s)
    return groups


CHUNK = 32  # name expressions per NVRTC program: a large family compiles in parallel parts, each cached on its own


REPORT_FIELDS = ("registers", "shared_bytes", "spill_store_bytes", "spill_load_bytes", "local_bytes", "barriers",
                 "constant_bytes", "from_cubin")  # a ResourceUsage as a list in reports (see compile_specs)


def compile_specs(specs: list[KernelSpec], arch: str, use_cache: bool = True, progress: bool = False,
                  reports: dict | None = None) -> dict[KernelSpec, tuple[CompiledModule | None, ResourceUsage | None]]:
    """Compile ``specs`` for ``arch``; ArchError (before any compiling) if one needs a newer arch. ``progress``:
    say on stderr which source is compiling and how far along (a cold cache takes about a minute per arch).

    Each group of specs sharing source, options and defines is built in parts of at most CHUNK kernels, the
    parts in threads (NVRTC releases the GIL while it compiles).

    ``reports`` (for the resource check alone): part key -> {name expression: REPORT_FIELDS values}, the cubin
    cache's key (a hash of the source with its headers, the names, arch, options, defines and NVRTC version). A
    part found there is not compiled (its module is None); a part compiled is added, and ``reports`` is left
    holding exactly this call's parts."""
    from .._progress import StepLine

    for s in specs:
        if not runs_on(s, arch):
            raise ArchError(f"{s.label} needs sm_{s.min_sm} or newer; not built for {arch}")
    parts = [(key, members[i:i + CHUNK]) for key, members in group_specs(specs).items()
             for i in range(0, len(members), CHUNK)]
    if len(parts) > 1:  # import before the threads do: cuda.core's first import is not thread-safe
        nvrtc_version()
        from cuda.core import Program  # noqa: F401

    known = dict(reports or {})
    with StepLine(f"compiling {len(specs)} kernels for {arch} with NVRTC (cached after the first time)", len(parts),
                  "parts", min_total=2 if progress else len(parts) + 1, logs=True) as line:
        def build(part):
            (source, options, defines), members = part
            names = sorted({m.name for m in members})
            key = None if reports is None else _cache_key(source_text(source), names, arch, options, defines)
            if key in known:
                line.step(f"{source} ({len(members)} kernels, reported)")
                return members, None, {n: ResourceUsage(n, **dict(zip(REPORT_FIELDS, values)))
                                       for n, values in known[key].items()}, key
            line.step(f"{source} ({len(members)} kernels)")
            mod = compile_group(source, names, arch, options, defines, use_cache)
            return members, mod, mod.usage, key

        if len(parts) > 1:
            with ThreadPoolExecutor(max_workers=min(len(parts), os.cpu_count() or 1)) as pool:
                built = list(pool.map(build, parts))
        else:  # one kernel (the runtime's own loads): no threads
            built = [build(p) for p in parts]
    if reports is not None:
        reports.clear()
        reports.update({key: {n: [getattr(u, f) for f in REPORT_FIELDS] for n, u in sorted(usage.items())}
                        for _, _, usage, key in built})
    return {m: (mod, usage.get(m.name)) for members, mod, usage, _ in built for m in members}


def load_reports(path: Path) -> dict:
    """compile_specs' ``reports`` from a file save_reports wrote ({} if there is none); UsageError in one line for
    one that is not such a file."""
    try:
        reports = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"--reports {path}: cannot read it ({exc})") from None
    good = isinstance(reports, dict) and all(
        isinstance(part, dict) and all(isinstance(v, list) and len(v) == len(REPORT_FIELDS) for v in part.values())
        for part in reports.values())
    if not good:
        raise UsageError(f"--reports {path}: not a file of ptxas reports (gpumemlab kernels --reports writes them)")
    return reports


def save_reports(path: Path, reports: dict) -> None:
    """One part a line, in key order: a changed kernel changes its own lines of a committed file."""
    lines = ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(reports.items()))
    _atomic_write(Path(path), f"{{\n{lines}\n}}\n".encode())


def resource_usage(spec: KernelSpec, arch: str) -> ResourceUsage:
    """Registers, shared memory and spills of one kernel for ``arch`` (no GPU needed)."""
    usage = compile_specs([spec], arch)[spec][1]
    if usage is None:
        raise CompileError(f"{spec.label}: ptxas reported no resource usage for {arch}")
    return usage


def parse_arch(arch: str) -> str:
    """Accept ``sm_90``, ``90``, ``9.0`` or ``compute_90``; return ``sm_XY``. ArchError for anything else."""
    a = str(arch).strip().lower()
    m = (re.fullmatch(r"(\d{1,2})\.(\d)([af]?)", a)  # 9.0, 12.0
         or re.fullmatch(r"(?:sm_|compute_)?(\d{1,2})(\d)([af]?)", a))  # sm_90, 120, compute_80, sm_90a
    if not m:
        raise ArchError(f"bad arch {arch!r}: expected e.g. sm_90, 9.0 or 90")
    return f"sm_{m.group(1)}{m.group(2)}{m.group(3)}"


def arch_number(arch: str) -> int:
    """``sm_90a`` -> 90."""
    return int(re.sub(r"\D", "", parse_arch(arch)))


def runs_on(spec: KernelSpec, arch: str) -> bool:
    """Whether ``spec`` can be built for ``arch`` (a variant using sm_80+ PTX cannot be built for sm_75)."""
    return arch_number(arch) >= spec.min_sm


@cache
def nvrtc_archs() -> tuple[int, ...]:
    """The SM numbers this NVRTC can compile for (75, 80, ..., 120, ...)."""
    err, archs = _nvrtc().nvrtcGetSupportedArchs()
    return tuple(int(a) for a in archs)


def check_arch(arch: str) -> str:
    """``arch`` if this NVRTC can compile for it, else ArchError naming the archs it can."""
    sm = arch_number(arch)
    known = nvrtc_archs()
    if sm not in known:
        major, minor = nvrtc_version()
        raise ArchError(f"NVRTC {major}.{minor} cannot compile for {arch}; it knows "
                        f"{', '.join(f'sm_{a}' for a in known)} (gpumemlab supports {', '.join(SUPPORTED_ARCHS)})")
    return arch


_PTXAS_ERROR = re.compile(r"(?:error|fatal)\s*:\s*(.+)", re.IGNORECASE)


def first_error(log: str) -> str:
    """The first compiler error of an NVRTC/ptxas log, with how many more there are."""
    errors = [m.group(1).strip() for line in log.splitlines() if (m := _PTXAS_ERROR.search(line))]
    errors = [e for e in errors if not e.startswith("Ptx assembly aborted")] or errors
    if not errors:
        return log.strip().splitlines()[0] if log.strip() else "compilation failed"
    more = len(errors) - 1
    return errors[0] + (f" (and {more} more error{'s' if more > 1 else ''})" if more else "")


def kernel_resources(name: str, cc) -> dict:
    """Registers, shared memory and barriers of a built-in kernel from its ptxas report for ``cc``."""
    from ..kernels import all_specs

    specs = all_specs()
    exact = [s for s in specs if name in (s.name, s.label)]
    loose = [s for s in specs if name.lower() in s.label.lower()]
    found = exact or loose
    if len(found) != 1:
        listed = ", ".join(s.label for s in (found or specs)[:12])
        what = "is ambiguous" if found else "is not a built-in kernel"
        raise UsageError(f"--kernel {name!r} {what} (e.g. {listed})")
    spec = found[0]
    usage = resource_usage(spec, f"sm_{cc[0]}{cc[1]}")
    return dict(name=spec.label, registers=usage.registers, shared_bytes=usage.shared_bytes,
                barriers=usage.barriers, arch=f"sm_{cc[0]}{cc[1]}")

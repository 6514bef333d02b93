"""``gpumemlab lint``: the model applied to every load and store of the user's own CUDA C++ kernels, no GPU.

The file is parsed by clang (libclang, the ``lint`` extra; :mod:`.frontend`), each kernel's body runs once for
every thread of one block with values symbolic in the launch and parameters (:mod:`.interp`), and each access
goes through :mod:`gpumemlab.model` (:mod:`.analysis`). The JSON schema is documented in docs/lint.md.
"""

from __future__ import annotations

from dataclasses import asdict

from ..errors import GpumemlabError
from . import analysis as _analysis
from .analysis import Finding, KernelReport, Options

SCHEMA = "gpumemlab.lint/1"
RULES = ("uncoalesced", "bank-conflict", "constant-serialized", "spill", "unknown")
RECURSION = 6000

__all__ = ["lint_file", "Options", "Finding", "KernelReport", "to_json", "SCHEMA", "RULES"]


def lint_file(path: str, opts: Options | None = None, resources: bool = True) -> list[KernelReport]:
    """Lint every kernel of ``path`` (UsageError, one line, for input lint cannot read)."""
    from . import frontend

    import sys

    opts = opts or Options()
    if sys.getrecursionlimit() < RECURSION:  # deep expressions (long unrolled index chains) recurse per node
        sys.setrecursionlimit(RECURSION)
    arch = int(_analysis._cc_of(opts.arch).replace(".", ""))
    parsed = frontend.parse(path, opts.defines, arch)
    reports = _analysis.lint_parsed(parsed, opts)
    if resources:
        from .resources import attach

        attach(parsed, reports, opts)
    if opts.launch_average:
        from ..model.cc import parse_cc
        from . import launch

        for r in reports:  # the SASS memory instructions where NVRTC and nvdisasm gave them
            launch.attach(r, getattr(r, "sass", None), parse_cc(_analysis._cc_of(opts.arch)))
    return reports


def finding_dict(f: Finding) -> dict:
    d = asdict(f)
    d["rule"] = f.rule
    return d


def to_json(path: str, opts: Options, reports: list[KernelReport]) -> dict:
    kernels = []
    for r in reports:
        kernels.append(dict(name=r.name, line=r.line, template=r.template, block=r.block, grid=r.grid,
                            launch_bounds=list(r.launch_bounds) if r.launch_bounds else None, error=r.error,
                            notes=r.notes, resources=r.resources, occupancy=r.occupancy,
                            accesses=[finding_dict(f) for f in r.findings]))
    return dict(schema=SCHEMA, file=path, arch=opts.arch, block=_dims(opts.block), grid=_dims(opts.grid),
                kernels=kernels)


def _dims(v):
    from ..model.access import dim3

    return None if v is None else list(dim3(v, "shape"))


class LintError(GpumemlabError):
    """The file could not be linted completely (a compile error in a kernel)."""

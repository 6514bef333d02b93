"""NVRTC compile with no GPU: the ptxas report parser, the on-disk cache, template instantiation."""

import pytest

from gpumemlab.errors import CompileError
from gpumemlab.gpu import compile as C
from gpumemlab.kernels import KernelSpec

LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4tileILi32EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z4tileILi32EEvPf
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 8192 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 1.0 ms
ptxas info    : Compiling entry function 'plain' for 'sm_90'
ptxas info    : Function properties for plain
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
"""


def test_parse_ptxas_log():
    got = C.parse_ptxas_log(LOG)
    assert got["_Z4tileILi32EEvPf"] == dict(registers=64, shared_bytes=8192, spill_store_bytes=8,
                                             spill_load_bytes=12, local_bytes=24, barriers=1, constant_bytes=368)
    assert got["plain"] == dict(registers=10, shared_bytes=0, spill_store_bytes=0, spill_load_bytes=0,
                                local_bytes=0, barriers=0, constant_bytes=0)


SRC = r"""
template <int N> __global__ void fill(float* out) { __shared__ float s[N]; s[threadIdx.x % N] = N;
  __syncthreads(); out[threadIdx.x] = s[(threadIdx.x + 1) % N]; }
extern "C" __global__ void stack(float* out, int k) { float a[64] = {};
  for (int i = 0; i < 64; ++i) a[(i * k) & 63] += out[i]; out[threadIdx.x] = a[(k + threadIdx.x) & 63]; }
"""


def test_compile_text_instantiates_templates_and_reports_usage(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))
    mod = C.compile_text(SRC, ["fill<32>", "fill<128>", "stack"], "sm_90")
    assert mod.cubin[:4] == b"\x7fELF"
    assert mod.usage["fill<32>"].shared_bytes == 32 * 4
    assert mod.usage["fill<128>"].shared_bytes == 128 * 4
    assert mod.usage["stack"].local_bytes == 64 * 4  # a run-time indexed array lives in local memory
    assert mod.symbol_mapping["fill<32>"].startswith("_Z")
    assert len(list(tmp_path.glob("*.cubin"))) == 1


def test_cache_hit_and_key_depends_on_options_and_arch(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))
    a = C.compile_text(SRC, ["stack"], "sm_90")
    b = C.compile_text(SRC, ["stack"], "sm_90")
    assert a.cubin == b.cubin and len(list(tmp_path.glob("*.cubin"))) == 1
    C.compile_text(SRC, ["stack"], "sm_80")
    C.compile_text(SRC, ["stack"], "sm_90", (("max_register_count", 32),))
    assert len(list(tmp_path.glob("*.cubin"))) == 3


def test_kernel_code_ignores_the_source_layout_and_sees_a_code_change(tmp_path, monkeypatch):
    """tools/kernel_code_diff.py's premise: a source laid out anew (lines moved, so another line table) keeps each
    kernel's .text bytes; a changed statement does not."""
    from gpumemlab.gpu.cubin import kernel_code

    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))

    def code(text):
        mod = C.compile_text(text, ["fill<32>", "stack"], "sm_90")
        return mod.cubin, {n: kernel_code(mod.cubin)[mod.symbol_mapping[n]] for n in ("fill<32>", "stack")}

    cubin, base = code(SRC)
    relaid_cubin, relaid = code("\n\n" + SRC.replace("; ", ";\n"))
    assert relaid_cubin != cubin and relaid == base  # the line table differs, the code does not
    assert all(len(c) > 0 and len(c) % 16 == 0 for c in base.values())  # 128-bit instructions
    _, changed = code(SRC.replace("+= out[i]", "-= out[i]"))
    assert changed["stack"] != base["stack"] and changed["fill<32>"] == base["fill<32>"]

def test_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))
    C.compile_text(SRC, ["stack"], "sm_90")
    meta = next(tmp_path.glob("*.json"))
    meta.write_text("{not json")
    again = C.compile_text(SRC, ["stack"], "sm_90")
    assert again.usage["stack"].registers > 0


def test_compile_error_is_typed(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))
    with pytest.raises(CompileError, match="sm_90"):
        C.compile_text("__global__ void broken( { }", [], "sm_90")


def test_resource_usage_of_a_catalog_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))
    u = C.resource_usage(KernelSpec("coalescing.cu", "aos_shared<256>"), "sm_90")
    assert u.shared_bytes == 3 * 256 * 4 and u.spill_store_bytes == 0


@pytest.mark.parametrize("text,want", [("sm_90", "sm_90"), ("9.0", "sm_90"), ("86", "sm_86"), ("sm_100a", "sm_100a"),
                                       ("12.0", "sm_120"), ("compute_80", "sm_80")])
def test_parse_arch(text, want):
    assert C.parse_arch(text) == want


@pytest.mark.parametrize("bad", ["", "sm_", "90x", "gpu"])
def test_parse_arch_rejects(bad):
    with pytest.raises(ValueError, match="bad arch"):
        C.parse_arch(bad)


@pytest.mark.parametrize("arch", ["sm_90"])
def test_cubin_usage_matches_the_ptxas_report_for_the_catalog(arch):
    """Every family's first eight instantiations (every .cu file; static and dynamic shared memory, the spill demo's
    stack frames): the whole catalog for every arch is .ci/run's compile."""
    import importlib

    from gpumemlab.gpu.cubin import usage_from_cubin
    from gpumemlab.kernels import family_modules

    specs = [s for m in family_modules() for s in importlib.import_module(f"gpumemlab.kernels.{m}").KERNELS[:8]]
    compiled = C.compile_specs([s for s in dict.fromkeys(specs) if C.runs_on(s, arch)], arch)
    for spec, (mod, u) in compiled.items():
        e = usage_from_cubin(mod.cubin)[mod.symbol_mapping[spec.name]]
        assert (e["registers"], e["local_bytes"], e.get("shared_bytes", 0)) == \
            (u.registers, u.local_bytes, u.shared_bytes), spec.label


def test_missing_ptxas_report_falls_back_to_the_cubin(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMEMLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(C, "parse_ptxas_log", lambda log: {})  # as when NVRTC's cache skipped ptxas
    mod = C.compile_text(SRC, ["fill<128>", "stack"], "sm_90")
    fill, stack = mod.usage["fill<128>"], mod.usage["stack"]
    assert fill.from_cubin and fill.shared_bytes == 128 * 4 and fill.spill_store_bytes == 0
    assert stack.local_bytes == 64 * 4 and stack.spill_store_bytes is None  # a frame: spills unknown

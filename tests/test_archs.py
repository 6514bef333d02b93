"""Supported archs: every one known to NVRTC, the reduction family built without spills on the two archs it
needed fixing for (sm_75: no L2::256B; sm_100/103: 40 registers for x4), newer-arch variants skipped with a note.
(CI compiles every family for every arch: .ci/run.)"""

from __future__ import annotations

import json

import pytest

from gpumemlab.errors import ArchError, CompileError
from gpumemlab.gpu import compile as C
from gpumemlab.kernels import KernelSpec
from gpumemlab.kernels import reduce as R

L2_HINT = list(dict.fromkeys(c.spec() for c in R.VECTORIZED + R.TUNING if c.load == 1))  # the L2::256B loads


def test_supported_archs_are_known_to_this_nvrtc():
    assert set(C.SUPPORTED_ARCHS) <= {f"sm_{a}" for a in C.nvrtc_archs()}
    assert C.SUPPORTED_ARCHS[0] == "sm_75" and "sm_120" in C.SUPPORTED_ARCHS


def test_only_the_l2_hint_variants_need_sm80():
    assert {s.name for s in R.KERNELS if s.min_sm} == {s.name for s in L2_HINT}
    assert {s.min_sm for s in L2_HINT} == {80} and len(L2_HINT) == 3
    assert all(C.runs_on(s, "sm_80") and not C.runs_on(s, "sm_75") for s in L2_HINT)
    assert C.runs_on(R.LIBRARY.spec(), "sm_75")  # gpumemlab.sum itself runs everywhere


@pytest.mark.parametrize("arch, skipped", [("sm_75", 3), ("sm_100", 0)])
def test_kernels_reduce_family_has_no_spills(run_cli, monkeypatch, arch, skipped):
    """The L2-hint variants and the library's sum (.ci/run builds the whole family for every supported arch)."""
    import gpumemlab.kernels as kernels

    specs = [R.LIBRARY.spec()] + L2_HINT
    monkeypatch.setattr(kernels, "all_specs", lambda: specs)
    code, out, err = run_cli("kernels", "--arch", arch, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == len(specs) - skipped
    assert all(r["spill_store_bytes"] == 0 and r["spill_load_bytes"] == 0 for r in rows)
    if skipped:
        assert err.strip() == ("gpumemlab kernels: skipped 3 variant(s) that need sm_80 or newer on sm_75: "
                               + ", ".join(s.label for s in L2_HINT))


def test_x4_sums_get_40_registers_on_blackwell_and_32_on_hopper():
    spec = R.VecConfig("reduce7", 4, 0, 256, 0).spec()
    assert C.resource_usage(spec, "sm_90").registers <= 32  # 2048 threads: the register file allows 32
    usage = C.resource_usage(spec, "sm_100")
    assert 32 < usage.registers <= 40 and usage.spill_store_bytes == 0  # 1536 threads: up to 40


def test_forcing_the_l2_hint_on_sm75_is_a_clear_compile_error():
    with pytest.raises(CompileError) as info:
        C.compile_group("reduce.cu", [L2_HINT[0].name], "sm_75", use_cache=False)
    assert "LOAD 1 (the L2::256B hint) needs sm_80 or newer" in str(info.value) and "\n" not in str(info.value)
    assert "static assertion" in info.value.log


def test_compile_specs_refuses_a_variant_too_new_for_the_arch():
    with pytest.raises(ArchError, match=r"reduce6<float, float, 256, 8, 1, 0> needs sm_80 or newer; not built for sm_75"):
        C.compile_specs([L2_HINT[0]], "sm_75")


@pytest.mark.parametrize("arch, words", [("sm_999", "NVRTC 13"), ("sm_50", "cannot compile for sm_50"),
                                         ("bogus", "bad arch 'bogus'")])
def test_unknown_arch_is_one_line_not_an_nvrtc_log(arch, words):
    with pytest.raises(ArchError) as info:
        C.compile_group("copy.cu", ["offset_copy"], arch)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_first_error_keeps_one_line_and_counts_the_rest():
    log = ("\nptxas application ptx input, line 3; error   : Modifier '.L2::256B' requires .target sm_80 or higher\n"
           "ptxas application ptx input, line 9; error   : Modifier '.L2::256B' requires .target sm_80 or higher\n"
           "ptxas fatal   : Ptx assembly aborted due to errors\n")
    assert C.first_error(log) == "Modifier '.L2::256B' requires .target sm_80 or higher (and 1 more error)"
    assert C.first_error("kernel.cu(4): error: identifier \"x\" is undefined") == 'identifier "x" is undefined'
    assert C.first_error("") == "compilation failed"


def test_a_real_syntax_error_is_one_line_with_the_log_kept():
    with pytest.raises(CompileError) as info:
        C.compile_text('extern "C" __global__ void k() { undefined_name = 1; }', ["k"], "sm_90")
    assert str(info.value) == '<generated> for sm_90: identifier "undefined_name" is undefined'
    assert "undefined_name" in info.value.log


def test_spec_min_sm_survives_with_options():
    s = KernelSpec("reduce.cu", "x", min_sm=80).with_options(max_register_count=32)
    assert s.min_sm == 80

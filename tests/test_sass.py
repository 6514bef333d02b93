"""gpu.sass: the static SASS reader (no GPU; the last test needs NVRTC and nvdisasm)."""

import pytest

from gpumemlab.gpu import sass


def test_finds_the_loop_and_each_loads_first_use():
    ins = [(0x00, "MOV R1, R2"),
           (0x10, "LDS.128 R8, [R3]"),          # R8..R11: first read 3 instructions later
           (0x20, "FFMA R20, R4, R5, R20"),
           (0x30, "@P0 LDS R12, [R3+0x10]"),    # R12: read after the wrap (by the FFMA at 0x20)
           (0x40, "FFMA R21, R11, R5, R21"),
           (0x50, "@P1 BRA 0x10"),
           (0x60, "EXIT")]
    body = sass.main_loop(ins)
    assert [a for a, _ in body] == [0x10, 0x20, 0x30, 0x40, 0x50]
    cover = sass.load_cover(body)
    assert [(a, d) for a, _, d, _ in cover] == [(0x10, 3), (0x30, None)]
    ins[2] = (0x20, "FFMA R20, R12, R5, R20")
    assert [d for _, _, d, _ in sass.load_cover(sass.main_loop(ins))] == [3, 4]
    assert sass.opcode("@!UP0 UIADD3 UR4, UR4, 0x1, URZ") == "UIADD3"


def test_counts_global_loads_in_flight_at_each_first_use():
    ins = [(0x00, "LDG.E.128 R4, desc[UR6][R2.64]"),      # B0: R4..R7
           (0x10, "LDG.E.128 R8, desc[UR6][R2.64+0x10]"),  # B1
           (0x20, "@P0 LDG.E.CONSTANT R12, desc[UR6][R14.64]"),
           (0x30, "FFMA R20, R4, R12, R20"),              # first use of B0: B0 and B1 in flight
           (0x40, "LDG.E.EF.128 R4, desc[UR6][R16.64]"),   # B2
           (0x50, "FFMA R21, R11, R12, R21"),             # first use of B1
           (0x60, "FFMA R22, R7, R12, R22"),              # first use of B2
           (0x70, "BRA 0x0"),
           (0x80, "EXIT")]
    body = sass.main_loop(ins, containing=r"LDG.*\.128")
    assert len(body) == 8 and sass.main_loop(ins, containing="LDS") == []
    assert [(a, d, f) for a, _, d, f in sass.load_cover(body, "LDG")] == [(0x00, 3, 2), (0x10, 4, 2), (0x20, 1, 1),
                                                                       (0x40, 2, 1)]
    assert [sass.load_width(q) for q in (".E.128", ".E.64", ".E.CONSTANT", ".U16")] == [128, 64, 32, 32]


def test_gemv_cols_keeps_gemv_depth_rows_of_b_in_flight():
    """ptxas once issued each 128-bit row of B only after the FMAs of the previous one (one read in flight per
    warp: 8 x 8192 x 8192 ran at 0.74x of cuBLAS); the loads must all be out before the first is used."""
    import re

    pytest.importorskip("cuda.core")
    from gpumemlab.gpu.compile import compile_group, source_text

    nvdisasm = sass.find_nvdisasm()
    if nvdisasm is None:
        pytest.skip("no nvdisasm (the test extra installs nvidia-cuda-nvdisasm)")
    depth = int(re.search(r"constexpr int GEMV_DEPTH = (\d+);", source_text("gemv.cu")).group(1))
    names = [f"gemv_cols<4, {split}, {rows}>" for split in ("false", "true") for rows in (1, 2, 4, 8)]
    for arch, kernels in (("sm_90", names), ("sm_80", names[-1:]), ("sm_120", names[-1:])):
        mod = compile_group("gemv.cu", kernels, arch)
        for name in kernels:
            code = sass.disassemble(mod.cubin, nvdisasm, mod.symbol_mapping[name])
            flights = [f for _, t, _, f in sass.load_cover(sass.main_loop(code, containing=r"LDG.*\.128"), "LDG")
                       if ".128" in t]
            assert flights and max(flights) >= depth, (arch, name, flights)


def test_copy_vec_keeps_exactly_unroll_loads_in_flight():
    """copy_vec<T, U> is the occupancy sweep's loads-in-flight axis: a thread must have U loads out when it first
    waits, no more (ptxas unrolled the U = 1 stride loop 4x, which made float x1 the float x4 curve)."""
    pytest.importorskip("cuda.core")
    from gpumemlab.gpu.compile import compile_group
    from gpumemlab.kernels import copy as K

    nvdisasm = sass.find_nvdisasm()
    if nvdisasm is None:
        pytest.skip("no nvdisasm (the test extra installs nvidia-cuda-nvdisasm)")
    names = [f"copy_vec<{t}, {u}>" for t in K.VECTOR_TYPES for u in K.UNROLLS]
    mod = compile_group("copy.cu", names, "sm_90")
    got = {}
    for name in names:
        body = sass.main_loop(sass.disassemble(mod.cubin, nvdisasm, mod.symbol_mapping[name]), "LDG")
        got[name] = max(f for _, _, _, f in sass.load_cover(body, "LDG"))
    assert got == {f"copy_vec<{t}, {u}>": u for t in K.VECTOR_TYPES for u in K.UNROLLS}

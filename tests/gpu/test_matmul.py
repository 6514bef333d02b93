"""Every matmul variant against a float64 reference, element by element within gamma_k |A||B| (tests/gpu/_checks.py):
random non-zero inputs, odd shapes, the output poisoned before every call (NaN never passes), plus the public API's
behaviour and errors on the GPU."""

import _checks as C
import numpy as np
import pytest

from gpumemlab.ops.matmul import gemv as G

pytestmark = pytest.mark.gpu

ODD_SHAPES = [(1, 1, 1), (7, 7, 7), (1, 513, 7), (513, 1, 33), (33, 65, 1), (1000, 777, 1023), (64, 128, 96),
              (129, 260, 36)]


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.work_stream()
    return cupy


def operands(cp, m, n, k, seed=0):
    from gpumemlab.bench.verify import device_random_nonzero

    return (device_random_nonzero((m, k), np.float32, seed), device_random_nonzero((k, n), np.float32, seed + 1))


def check_plan(cp, variant, a, b, config=None, vec=None, splits=None):
    """One plan run twice into a poisoned C (the second run must write every element again), each checked."""
    from gpumemlab.ops.matmul import launch as ops
    from gpumemlab.kernels import matmul as K

    m = a.shape[0]
    aat = K.VARIANTS[variant].op == "aat"
    n = m if aat else b.shape[1]
    out = C.poisoned(cp, (m, n), cp.float32)
    if variant == "register_blocked":
        p = ops.register_blocked_plan(a, b, out, config, vec, splits)
    else:
        p = ops.plan(variant, a, b, out)
    for i in range(2):
        C.run_poisoned(out, p.run)
        C.expect_matmul(out, a, None if aat else b, f"{variant} {a.shape}x{n} run {i}")


GENERAL = ["naive", "naive_col_major", "transposed_b", "tiled_8", "tiled_16", "tiled_32", "corner_turning",
           "corner_turning_unpadded", "coarsened_1", "coarsened_2", "coarsened_4", "coarsened_8", "register_blocked"]


@pytest.mark.parametrize("variant", GENERAL)
@pytest.mark.parametrize("shape", ODD_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_general_variants_any_shape(cp, variant, shape):
    m, n, k = shape
    a, b = operands(cp, m, n, k, seed=m + n + k)
    check_plan(cp, variant, a, b)


@pytest.mark.parametrize("variant", ["simple_multiply", "coalesced_multiply", "shared_ab_multiply"])
@pytest.mark.parametrize("m,n", [(32, 32), (96, 160), (256, 64)])
def test_best_practices_ab(cp, variant, m, n):
    a, b = operands(cp, m, n, 32, seed=3)
    check_plan(cp, variant, a, b)


@pytest.mark.parametrize("variant", ["aat_simple", "aat_shared", "aat_padded"])
@pytest.mark.parametrize("m", [32, 96, 320])
def test_aat(cp, variant, m):
    a, _ = operands(cp, m, 1, 32, seed=5)
    check_plan(cp, variant, a, None)


def _configs():
    from gpumemlab.kernels.matmul import CANDIDATES

    return CANDIDATES


@pytest.mark.parametrize("cfg", _configs(), ids=lambda c: c.name)
def test_register_blocked_every_config(cp, cfg):
    # vec 4: aligned sizes, full tiles and edge tiles (M, N, K multiples of 4 but not of the tile)
    for m, n, k in [(256, 256, 256), (260, 132, 36), (4, 4, 4), (300, 1000, 516)]:
        a, b = operands(cp, m, n, k, seed=m + k)
        check_plan(cp, "register_blocked", a, b, cfg, 4)
    # vec 1: any size
    for m, n, k in [(1, 1, 1), (7, 13, 5), (1000, 777, 1023), (129, 67, 9), (256, 256, 256)]:
        a, b = operands(cp, m, n, k, seed=m + n)
        check_plan(cp, "register_blocked", a, b, cfg, 1)


@pytest.mark.parametrize("cfg", _configs(), ids=lambda c: c.name)
def test_register_blocked_split_k(cp, cfg):
    """Split-K: partial tiles added with atomics into a zeroed C (poisoned before, so a missed zeroing fails)."""
    for (m, n, k), vec, splits in [((136, 72, 1000), 4, 2), ((67, 45, 777), 1, 3), ((64, 64, 64), 4, 8),
                                   ((5, 3, 41), 1, 4)]:
        a, b = operands(cp, m, n, k, seed=k)
        check_plan(cp, "register_blocked", a, b, cfg, vec, splits)


def test_register_blocked_long_k(cp):
    """Many pipeline iterations (K = 4100: 513 tiles of 8 with a ragged last one)."""
    from gpumemlab.kernels.matmul import DEFAULT

    a, b = operands(cp, 136, 132, 4100, seed=9)
    check_plan(cp, "register_blocked", a, b, DEFAULT, 4)


def test_unaligned_views_take_the_scalar_path(cp):
    """A 16-byte-misaligned base pointer must not take the float4 path."""
    from gpumemlab.ops.matmul import launch as ops

    a0, b = operands(cp, 65, 64, 64, seed=11)
    a = a0.ravel()[1:1 + 64 * 64].reshape(64, 64)  # offset by one float
    assert a.data.ptr % 16 != 0 and a.flags.c_contiguous
    out = C.poisoned(cp, (64, 64), cp.float32)
    p = ops.register_blocked_plan(a, b, out)
    assert p.vec == 1
    p.run()
    C.expect_matmul(out, a, b, "misaligned a")


def test_nan_never_passes(cp):
    from gpumemlab.errors import VerificationError
    from gpumemlab.experiments._matmul import Reference

    a, b = operands(cp, 33, 35, 37)
    ref = Reference(a, b)
    out = (a @ b).astype(cp.float32)
    ref.check(out, "cupy")
    out[5, 7] = np.nan
    with pytest.raises(VerificationError, match="NaN"):
        ref.check(out, "one NaN")
    out[5, 7] = 0.0  # a wrong but finite value is caught by the error norm
    out[3, 3] += 1.0
    with pytest.raises(VerificationError):
        ref.check(out, "wrong values")


def test_one_wrong_corner_element_is_caught(cp):
    """One product term missing from the corner of a 1000x777x1023 product: about 2e-6 of ||A|| ||B|| (the norm
    check passes it); the elementwise gamma_k |A||B| bound (about 0.06 there, the term at least 0.25) does not."""
    from gpumemlab.errors import VerificationError
    from gpumemlab.experiments._matmul import TOL, Reference

    a, b = operands(cp, 1000, 777, 1023)
    ref = Reference(a, b)
    out = (a.astype(cp.float64) @ b.astype(cp.float64)).astype(cp.float32)
    ref.check(out, "the float64 product rounded to float32")
    out[999, 776] -= a[999, 500] * b[500, 776]
    assert ref.errors(out)[0] < TOL
    with pytest.raises(VerificationError, match=r"1 of 777000 elements beyond gamma_k \|A\|\|B\|; first at \(999, 776\)"):
        ref.check(out, "one term missing")
    with pytest.raises(AssertionError, match=r"^one term missing: 1 of 777000 elements wrong; first at \(999, 776\)"):
        C.expect_matmul(out, a, b, "one term missing")  # the tests' own check, on the GPU


def test_tf32_level_error_is_rejected(cp):
    """Inputs rounded to TF32 (10-bit mantissa) pass the loose 1e-5 norm at 4096 but not the FP32 guard."""
    from gpumemlab.errors import VerificationError
    from gpumemlab.experiments._matmul import Reference

    a, b = operands(cp, 256, 256, 1024)
    ref = Reference(a, b)

    def tf32(x):
        bits = x.view(cp.uint32) & cp.uint32(0xFFFFE000)
        return bits.view(cp.float32)

    out = (tf32(a).astype(cp.float64) @ tf32(b).astype(cp.float64)).astype(cp.float32)
    assert ref.errors(out)[1] > 1e-4
    with pytest.raises(VerificationError):
        ref.check(out, "tf32-rounded")


# ---------------------------------------------------------------- public API

def test_matmul_auto_and_every_variant_name(cp, poisoned_pool):
    import gpumemlab
    from gpumemlab.kernels.matmul import AB_VARIANTS, VARIANTS

    a, b = operands(cp, 96, 64, 32)
    out = C.poisoned(cp, (96, 64), cp.float32)
    for variant in ("auto",) + AB_VARIANTS:
        poisoned_pool(cp, (96, 64), cp.float32)  # else the last variant's correct result may be reused unwritten
        new = gpumemlab.matmul(a, b, variant=variant)
        assert new.shape == (96, 64) and new.dtype == np.float32
        C.expect_matmul(new, a, b, variant)
        assert C.run_poisoned(out, lambda: gpumemlab.matmul(a, b, out=out, variant=variant)) is out
        C.expect_matmul(out, a, b, f"{variant} into out")
    a, b = operands(cp, 100, 50, 30)
    with pytest.raises(ValueError, match="K == 32"):
        gpumemlab.matmul(a, b, variant="shared_ab_multiply")
    assert VARIANTS["register_blocked"].spec is None


def test_matmul_out_argument(cp):
    import gpumemlab

    a, b = operands(cp, 70, 90, 110)
    out = C.poisoned(cp, (70, 90), cp.float32)
    got = gpumemlab.matmul(a, b, out=out)
    assert got is out
    C.expect_matmul(out, a, b, "out=")
    with pytest.raises(ValueError, match="shape"):
        gpumemlab.matmul(a, b, out=cp.empty((90, 70), cp.float32))
    with pytest.raises(TypeError, match="dtype"):
        gpumemlab.matmul(a, b, out=cp.empty((70, 90), cp.float64))
    with pytest.raises(ValueError, match="overlaps"):
        sq = operands(cp, 8, 8, 8)[0]
        gpumemlab.matmul(sq, sq.copy(), out=sq)


def test_matmul_errors(cp):
    import gpumemlab

    a, b = operands(cp, 8, 6, 4)
    with pytest.raises(TypeError, match="float64"):
        gpumemlab.matmul(a.astype(cp.float64), b)
    with pytest.raises(ValueError, match="2-D"):
        gpumemlab.matmul(a[None], b, variant="tiled_16")  # the ladder takes 2-D C-contiguous operands
    with pytest.raises(ValueError, match=r"shapes \(8, 4\) and \(24,\) do not align"):
        gpumemlab.matmul(a, b.ravel())
    with pytest.raises(ValueError, match="do not align"):
        gpumemlab.matmul(a, a)
    with pytest.raises(ValueError, match="contiguous"):
        gpumemlab.matmul(a, cp.ascontiguousarray(b.T).T, variant="tiled_16")
    with pytest.raises(TypeError, match="NumPy"):
        gpumemlab.matmul(a, b.get())


def test_matmul_empty_and_k_zero_follow_numpy(cp):
    import gpumemlab

    assert gpumemlab.matmul(cp.empty((0, 5), cp.float32), cp.ones((5, 3), cp.float32)).shape == (0, 3)
    assert gpumemlab.matmul(cp.ones((4, 5), cp.float32), cp.ones((5, 0), cp.float32)).shape == (4, 0)
    z = gpumemlab.matmul(cp.ones((4, 0), cp.float32), cp.ones((0, 3), cp.float32))
    assert z.shape == (4, 3) and bool((z == 0).all())
    np.testing.assert_array_equal(z.get(), np.ones((4, 0), np.float32) @ np.ones((0, 3), np.float32))


def test_matmul_accepts_cuda_array_interface(cp, poisoned_pool):
    import gpumemlab

    class Wrapped:
        def __init__(self, arr):
            self._arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    a, b = operands(cp, 40, 24, 16)
    poisoned_pool(cp, (40, 24), cp.float32)
    C.expect_matmul(gpumemlab.matmul(Wrapped(a), Wrapped(b)), a, b, "cuda_array_interface")


def test_choose_reads_this_device(cp):
    import gpumemlab
    from gpumemlab.kernels.matmul import CANDIDATES
    from gpumemlab.ops.matmul import launch

    for shape in [(1024, 1024, 1024), (4096, 4096, 4096), (4096, 1000, 8192), (17, 33, 9)]:
        c = launch.device_route(*shape, True).choice
        assert c.config in CANDIDATES and c.splits >= 1
    a, b = operands(cp, 1024, 1024, 1024)  # auto at a tuned shape (split-K when the entry says so)
    out = C.poisoned(cp, (1024, 1024), cp.float32)
    for i in range(2):
        C.run_poisoned(out, lambda: gpumemlab.matmul(a, b, out=out))
        C.expect_matmul(out, a, b, f"auto 1024^3 call {i}")


def test_matmul_orders_against_the_callers_stream(cp):
    """Inputs written on another stream right before the call must be seen by the kernel, and its
    result by the caller's next operation on that stream."""
    import gpumemlab
    from gpumemlab.gpu import runtime

    a, b = operands(cp, 512, 512, 512)
    runtime.synchronize()  # a and b exist before `other` reads them
    other = cp.cuda.Stream(non_blocking=True)
    with other:
        a2 = a * 1.0  # produced on `other`
        b2 = b + 0.0
        c = gpumemlab.matmul(a2, b2)
        d = c * 1.0  # consumed on `other`
    other.synchronize()
    C.expect_matmul(d, a, b, "cross-stream")


GEMV_SHAPES = [(1, 1000, 3000), (1, 1001, 37), (1, 4096, 4096), (1, 8, 4096), (1, 1, 1), (333, 1, 1000),
               (7, 1, 37), (4096, 1, 4096), (1, 260, 100_003), (1024, 1, 8192), (100, 1, 5003),  # N = 1, K split
               (2, 1001, 37), (3, 4096, 4096), (5, 1000, 3000), (8, 8192, 1024), (8, 3, 5)]  # a few rows of A


@pytest.mark.parametrize("m,n,k", GEMV_SHAPES)
def test_matrix_vector_path_against_float64(cp, m, n, k):
    """N = 1 or M <= 8 goes to the gemv kernels (float4 or scalar, one or split k ranges); FP32 accuracy."""
    import gpumemlab
    from gpumemlab.ops.matmul import launch as ops

    a, b = operands(cp, m, n, k, seed=m + n + k)
    out = C.poisoned(cp, (m, n), cp.float32)
    p = ops.plan("auto", a, b, out)
    assert p.variant == "gemv"
    assert p.vec == (4 if (k if n == 1 else n) % 4 == 0 else 1)
    p.run()
    C.expect_matmul(out, a, b, f"gemv {m}x{n}x{k}")
    C.run_poisoned(out, lambda: gpumemlab.matmul(a, b, out=out))
    C.expect_matmul(out, a, b, f"gpumemlab.matmul {m}x{n}x{k}")


def test_matrix_vector_splits_k_when_the_row_is_short(cp):
    from gpumemlab.ops.matmul import launch as ops

    a, b = operands(cp, 1, 4096, 4096)
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels import matmul as K

    p = ops.gemv_plan(a, b, cp.empty((1, 4096), cp.float32), sms=132)
    slots = 132 * runtime.max_active_blocks(K.gemv_cols(4, True, 1), G.GEMV_THREADS)
    # 32 column blocks x as many k ranges as fill one wave of the kernel's resident blocks (6 per SM: 24 ranges)
    assert slots >= 6 * 132 and 32 * p.splits <= slots < 32 * (p.splits + 2)
    with pytest.raises(Exception, match="gemv path needs M <= 8 or N == 1; got M=9, N=3"):
        ops.gemv_plan(*operands(cp, 9, 3, 4), cp.empty((9, 3), cp.float32))
    a, b = operands(cp, 1024, 1, 8192)  # 128 row blocks: fewer than 2 per SM, so the column's K is split too
    assert ops.gemv_plan(a, b, cp.empty((1024, 1), cp.float32), sms=132).splits > 1


# ---------------------------------------------------------------- split k ranges, added by the last block

SPLIT_GEMV_SHAPES = [(1, 777, 1001), (3, 1025, 4099), (1, 8192, 1024), (8, 8192, 1024), (1, 4096, 4096),
                     (1024, 1, 8192), (100, 1, 5003), (7, 1, 4099)]  # last three: N = 1 (float4, scalar, one block)


@pytest.mark.parametrize("m,n,k", SPLIT_GEMV_SHAPES)
def test_split_gemv_back_to_back(cp, m, n, k):
    """Shapes that split K: C poisoned, checked against float64; then new data in the same arrays and two launches
    back to back (the second needs the tickets the first left at 0), checked again; the same bits every run."""
    from gpumemlab.ops.matmul import launch as ops

    a, b = operands(cp, m, n, k, seed=m + n + k)
    out = C.poisoned(cp, (m, n), cp.float32)
    p = ops.gemv_plan(a, b, out)
    assert p.splits > 1
    p.run()
    C.expect_matmul(out, a, b, f"gemv {m}x{n}x{k}")
    a2, b2 = operands(cp, m, n, k, seed=7)
    a[...], b[...] = a2, b2
    for i in range(2):  # back to back: the second launch needs the tickets the first left at 0; out poisoned each time
        C.run_poisoned(out, p.run)
        C.expect_matmul(out, a, b, f"gemv {m}x{n}x{k}, back to back, launch {i}")
    first = out.copy()
    C.run_poisoned(out, p.run)
    assert bool(cp.array_equal(first, out))  # the partials are added in k order: the same bits every run
    g = G.gemv_launch(m, n, k, True, runtime_sms())
    assert int(G.gemv_workspace(*g.workspace)[1].sum()) == 0  # every ticket back at 0


def runtime_sms() -> int:
    from gpumemlab.gpu import runtime

    return int(runtime.device_info()["sm_count"])


def test_split_gemv_as_users_call_it(cp):
    """gpumemlab.matmul on split shapes, twice each into one out poisoned before each call: the cached call path,
    its workspace reused."""
    import gpumemlab

    for m, n, k in [(1, 777, 1001), (3, 1025, 4099), (1024, 1, 8192)]:
        a, b = operands(cp, m, n, k, seed=k)
        out = C.poisoned(cp, (m, n), cp.float32)
        for call in ("", "again "):
            C.run_poisoned(out, lambda: gpumemlab.matmul(a, b, out=out))
            C.expect_matmul(out, a, b, f"gpumemlab.matmul {call}{m}x{n}x{k}")


def test_ticket_gemv_after_a_call_on_another_stream(cp):
    """The work stream, a second stream, the work stream again: each stream its own workspace; each result right."""
    import gpumemlab
    from gpumemlab.gpu import runtime

    for m, n, k in [(1, 777, 1001), (1024, 1, 8192)]:
        other = runtime.new_stream()
        for i, ws in enumerate([runtime.work_stream(), other, runtime.work_stream(), other]):
            with ws:
                a, b = operands(cp, m, n, k, seed=10 * i)
                out = C.poisoned(cp, (m, n), cp.float32)
                gpumemlab.matmul(a, b, out=out)
                C.expect_matmul(out, a, b, f"ticket {m}x{n}x{k} call {i}")
                g = G.gemv_launch(m, n, k, True, runtime_sms())
                assert int(G.gemv_workspace(*g.workspace)[1].sum()) == 0
            ws.sync()


def check_on_two_streams(cp, m: int, n: int, k: int, rounds: int, what: str) -> None:
    """gpumemlab.matmul on two non-blocking streams at once, ``rounds`` calls each with its own operands, then every
    result checked (a stream's kept workspace or scratch must never serve the other)."""
    import gpumemlab
    from gpumemlab.gpu import runtime

    pairs = [operands(cp, m, n, k, seed=s) for s in (1, 2)]
    outs = [((a, b), C.poisoned(cp, (m, n), cp.float32)) for _ in range(rounds) for a, b in pairs]
    runtime.synchronize()
    streams = [cp.cuda.Stream(non_blocking=True) for _ in pairs]
    for i, ((a, b), out) in enumerate(outs):
        with streams[i % 2]:
            gpumemlab.matmul(a, b, out=out)
    for s in streams:
        s.synchronize()
    for (a, b), out in outs:
        C.expect_matmul(out, a, b, what)


def test_ticket_gemv_on_two_streams_at_once(cp):
    """Two non-blocking streams running the same split shape concurrently never share tickets or partials."""
    check_on_two_streams(cp, 1, 8192, 1024, 4, "ticket gemv, two streams")


# ---------------------------------------------------------------- N or K not a multiple of 4: scalar loads

UNALIGNED_SHAPES = [(1023, 1025, 1027), (777, 1001, 513), (33, 65, 7), (129, 260, 35), (9, 3, 5), (100, 2, 6),
                    (64, 128, 30), (64, 130, 32), (300, 301, 4097)]  # last three: K alone, N alone, a long ragged K


@pytest.mark.parametrize("m,n,k", UNALIGNED_SHAPES)
def test_unaligned_shapes_as_users_call_them(cp, m, n, k):
    """The scalar-load route; C poisoned first, checked against float64; a second call with new data."""
    import gpumemlab
    from gpumemlab.ops.matmul import launch as ops

    assert ops.device_route(m, n, k, True).kind in ("scalar", "gemv")
    out = C.poisoned(cp, (m, n), cp.float32)
    for seed in (m + n + k, 7):  # the same out again: poisoned before the second call too
        a, b = operands(cp, m, n, k, seed=seed)
        assert C.run_poisoned(out, lambda: gpumemlab.matmul(a, b, out=out)) is out
        C.expect_matmul(out, a, b, f"unaligned {m}x{n}x{k}")


def test_unaligned_shape_on_two_streams(cp):
    """Two streams running the same unaligned split shape at once stay correct."""
    check_on_two_streams(cp, 513, 515, 517, 3, "scalar route, two streams")

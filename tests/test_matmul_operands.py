"""The in-place reading of matmul operands (ops/matmul/operands.py): stride classification, NumPy's matmul shape
rules, batch folding and the vector-width rule, all pure (no GPU)."""

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.kernels import matmul as K
from gpumemlab.ops.matmul import operands as L


def strides(x):
    return tuple(s // x.itemsize for s in x.strides)


def lay(a, b):
    return L.layout(a.shape, strides(a), b.shape, strides(b))


@pytest.mark.parametrize("view, side", [
    (lambda x: x, L.Side(0, 48)),                 # C order
    (lambda x: x[:, :20], L.Side(0, 48)),         # columns sliced: the parent's pitch
    (lambda x: x.T, L.Side(1, 48)),               # transposed view: column-major, same pitch
    (lambda x: np.asfortranarray(x), L.Side(1, 32)),
    (lambda x: x[::2], L.Side(0, 96)),            # every other row: a doubled pitch
    (lambda x: x[::2].T, L.Side(1, 96)),
    (lambda x: x[:, ::2], None),                  # no unit-stride side: copied
    (lambda x: x[::-1], None),                    # negative pitch: copied
])
def test_matrix_side_of_views(view, side):
    v = view(np.zeros((32, 48), np.float32))
    assert L.matrix_side(*v.shape, *strides(v)) == side


def test_single_row_and_column_take_any_stride():
    assert L.matrix_side(1, 7, 0, 1) == L.Side(0, 7)
    assert L.matrix_side(1, 7, 0, 3) == L.Side(1, 3)   # a strided row: column-major with pitch 3
    assert L.matrix_side(7, 1, 5, 0) == L.Side(0, 5)   # a strided column: row-major with pitch 5
    assert L.matrix_side(4, 4, 0, 1) == L.Side(0, 0)   # broadcast rows: pitch 0, read in place


def test_empty_operands_take_any_strides():
    assert L.matrix_side(0, 5, 0, 0) == L.Side(0, 5) and L.matrix_side(4, 0, 7, 3) == L.Side(0, 0)
    got = L.layout((3, 0, 4), (0, 0, 0), (4, 5), (5, 1))
    assert got.shape == (3, 0, 5) and got.m == 0


def test_layout_2d_and_transposed():
    a, b = np.zeros((64, 32), np.float32), np.zeros((32, 16), np.float32)
    got = lay(a, b)
    assert (got.m, got.n, got.k, got.a, got.b, got.batch, got.shape) == (64, 16, 32, L.Side(0, 32), L.Side(0, 16),
                                                                          (), (64, 16))
    assert L.is_dense(got) and not L.gemv_swap(got)
    t = lay(np.zeros((32, 64), np.float32).T, np.zeros((16, 32), np.float32).T)
    assert (t.a, t.b, t.shape) == (L.Side(1, 64), L.Side(1, 32), (64, 16)) and not L.is_dense(t)


def test_layout_vectors_follow_numpy():
    m = np.zeros((5, 7), np.float32)
    assert lay(m, np.zeros(7, np.float32)).shape == (5,)
    assert lay(np.zeros(5, np.float32), m).shape == (7,)
    v = lay(np.zeros(7, np.float32), np.zeros(7, np.float32))
    assert v.shape == () and (v.m, v.n, v.k) == (1, 1, 7)
    # matrix^T @ vector: the vector times the matrix's storage (GEMV kernels), and vector @ matrix^T likewise
    assert L.gemv_swap(lay(np.zeros((7, 5), np.float32).T, np.zeros(7, np.float32)))
    assert L.gemv_swap(lay(np.zeros(7, np.float32), np.zeros((5, 7), np.float32).T))
    assert not L.gemv_swap(lay(np.zeros((7, 5), np.float32).T, np.zeros(14, np.float32)[::2]))


@pytest.mark.parametrize("sa, sb, shape", [
    ((3, 5, 7), (3, 7, 2), (3, 5, 2)),
    ((4, 1, 5, 7), (3, 7, 2), (4, 3, 5, 2)),
    ((5, 7), (6, 7, 2), (6, 5, 2)),
    ((2, 3, 5, 7), (7,), (2, 3, 5)),
    ((7,), (2, 7, 3), (2, 3)),
])
def test_batch_shapes_broadcast_as_numpy(sa, sb, shape):
    a, b = np.zeros(sa, np.float32), np.zeros(sb, np.float32)
    assert lay(a, b).shape == shape == np.matmul(a, b).shape


def test_batch_folding():
    # one B for a stack of dense A: a single taller product
    f = lay(np.zeros((4, 3, 5, 7), np.float32), np.zeros((7, 2), np.float32))
    assert (f.m, f.batch) == (60, ())
    # both stepped: the two batch sides fold into one launch of 12 products
    g = lay(np.zeros((4, 3, 5, 7), np.float32), np.zeros((4, 3, 7, 2), np.float32))
    assert g.batch == ((12, 35, 14, 10),) and g.products == 12
    # B broadcast over the outer side only: two sides, the outer one looped
    h = lay(np.zeros((4, 3, 5, 7), np.float32), np.zeros((1, 3, 7, 2), np.float32))
    assert h.batch == ((4, 105, 0, 30), (3, 35, 14, 10))
    # A transposed inside a stack: no folding into M
    t = lay(np.zeros((3, 7, 5), np.float32).transpose(0, 2, 1), np.zeros((7, 2), np.float32))
    assert (t.m, t.a, t.batch) == (5, L.Side(1, 5), ((3, 35, 0, 10),))


@pytest.mark.parametrize("sa, sb, message", [
    ((4, 5), (4, 4), "matmul: shapes (4, 5) and (4, 4) do not align (a.shape[-1] = 5 != b.shape[-2] = 4)"),
    ((4,), (5,), "matmul: shapes (4,) and (5,) do not align (a.shape[-1] = 4 != b.shape[-1] = 5)"),
    ((2, 4, 4), (3, 4, 4), "matmul: batch shapes (2,) and (3,) do not broadcast (a (2, 4, 4), b (3, 4, 4))"),
    ((), (4,), "matmul: operands must have at least one dimension"),
])
def test_layout_errors(sa, sb, message):
    with pytest.raises(UsageError) as e:
        L.layout(sa, (1,) * len(sa), sb, (1,) * len(sb))
    assert str(e.value).startswith(message)


def test_no_unit_stride_side_asks_for_a_copy():
    x = np.zeros((8, 8), np.float32)
    assert lay(x[:, ::2], x[:4]) == (True, False)
    assert lay(x[:4, :4], x[::2, ::2]) == (False, True)


def test_vec4_needs_every_pitch_step_and_address():
    g = lay(np.zeros((3, 8, 12), np.float32), np.zeros((3, 12, 16), np.float32))
    assert L.vec4(g, (0, 16, 32))
    assert not L.vec4(g, (0, 16, 36))
    odd = lay(np.zeros((3, 8, 12), np.float32), np.zeros((3, 12, 18), np.float32)[:, :, :16])
    assert odd.b.ld == 18 and not L.vec4(odd, (0, 0, 0))
    ta = lay(np.zeros((12, 6), np.float32).T, np.zeros((12, 16), np.float32))
    assert ta.a == L.Side(1, 6) and not L.vec4(ta, (0, 0, 0))  # a column-major A needs M % 4 == 0


def test_every_candidate_builds_every_layout():
    for cfg in K.CANDIDATES:
        for vec in (4, 1):
            for ta, tb in K.LAYOUTS:
                assert cfg.layout_problems(vec, ta, tb) == [], (cfg.name, vec, ta, tb)
    assert K.CANDIDATES[0].spec(4, ta=1, strided=1).name.endswith(", 2, 1, 1, 0, 1>")
    assert K.CANDIDATES[0].spec(4, strided=1).name.endswith(", 2, 1, 0, 0, 1>")
    assert K.CANDIDATES[0].spec(4) == K.DEFAULT.spec(4)  # the dense instantiation keeps its name
    with pytest.raises(ValueError, match="strided instantiations only"):
        K.CANDIDATES[0].spec(4, tb=1)
    assert K.CANDIDATES[0].smem_for(1) == K.CANDIDATES[0].smem_bytes + 2 * 16 * 4 * 4


def test_batched_launch_recipe():
    ops = K.Operands(1, 1, 40, 24, 7, 1000, 0)
    g = K.rb_launch(K.SMALL, 100, 30, 20, 1, 1, ops)
    assert g.grid == (2, 1, 7) and g.spec == K.SMALL.spec(1, ta=1, tb=1, strided=1)
    assert K.rb_launch(K.SMALL, 100, 30, 20, 1).spec == K.SMALL.spec(1)  # one dense product
    assert g.scalars[:6] == (100, 30, 20, 24, 40, 24) and tuple(map(int, g.scalars[6:])) == (1000, 0)
    with pytest.raises(ValueError, match="a launch takes 1 to 65535 products, not 70000"):
        K.rb_launch(K.SMALL, 100, 30, 20, 1, 1, K.Operands(batch=70000))

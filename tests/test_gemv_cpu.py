"""The matrix-vector path without a GPU: kernel names, launch shapes and split k ranges, the per-stream workspace
rule, the prepared launch's arguments, and the split kernels' registers on every arch."""

import threading

import numpy as np
import pytest

from gpumemlab.kernels import matmul as K
from gpumemlab.ops import _workspace as W
from gpumemlab.ops.matmul import gemv as ops

SMS = 132  # an H100 / H200


def test_kernel_names():
    assert K.gemv_cols(4, True, 1).name == "gemv_cols<4, true, 1>"
    assert K.gemv_cols(1, False, 8).name == "gemv_cols<1, false, 8>"
    assert K.gemv_rows(4, True).name == "gemv_rows<4, true>" and K.gemv_rows(1, False).name == "gemv_rows<1, false>"
    with pytest.raises(ValueError, match=r"gemv_cols rows is one of \(1, 2, 4, 8\)"):
        K.gemv_cols(4, True, 3)


def test_catalog_holds_every_gemv_kernel_once():
    names = [s.name for s in K.GEMV_KERNELS]
    assert len(names) == len(set(names)) == 2 * 2 + 2 * 2 * len(K.SKINNY_ROWS)  # (unsplit, split) x vec
    for vec in (4, 1):
        assert K.gemv_rows(vec, True) in K.GEMV_KERNELS
        assert all(K.gemv_cols(vec, True, r) in K.GEMV_KERNELS for r in K.SKINNY_ROWS)
    assert set(K.GEMV_KERNELS) <= set(K.KERNELS)  # what `gemv kernels --arch` (CI) and the compile tests build


def test_one_row_8192_by_1024_splits_into_12_ranges():
    """On an H100/H200 (6 resident blocks of the float4 one-row kernel per SM): 64 column blocks x 12 k ranges of
    88 rows, added from 12 x 8192 partials with 64 tickets."""
    t = ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6)
    assert (t.grid, t.scalars, t.splits) == ((64, 12), (1, 8192, 1024, 88), 12)
    assert t.spec == K.gemv_cols(4, True, 1) and t.workspace == (12 * 8192, 64)


@pytest.mark.parametrize("shape, bps, grid, scalars, workspace", [
    ((1, 777, 1001), 4, (25, 14), (1, 777, 1001, 72), (14 * 777, 25)),           # scalar loads, partial column block
    ((3, 1025, 4099), 4, (33, 16), (3, 1025, 4099, 264), (16 * 3 * 1025, 33)),  # 3 rows in the 4-row kernel
    ((1024, 1, 8192), 8, (128, 8), (1024, 8192, 1024), (8 * 1024, 128)),       # N = 1: one ticket per 8 rows
    ((100, 1, 5003), 8, (13, 4), (100, 5003, 1280), (4 * 100, 13)),
])
def test_split_launches_and_their_workspace(shape, bps, grid, scalars, workspace):
    m, n, k = shape
    g = ops.gemv_launch(m, n, k, True, SMS, blocks_per_sm=bps)
    assert (g.grid, g.scalars, g.workspace, g.outputs) == (grid, scalars, workspace, m * n)
    assert g.spec == (K.gemv_rows(g.vec, True) if n == 1 else K.gemv_cols(1, True, K.skinny_rows(m)))


@pytest.mark.parametrize("shape, bps", [((1, 200_000, 4096), 6), ((333, 1, 1000), 8), ((3, 1001, 37), 4)])
def test_unsplit_launches_have_no_workspace(shape, bps):
    g = ops.gemv_launch(*shape, True, SMS, blocks_per_sm=bps)
    assert (g.splits, g.workspace) == (1, None)
    assert "false" in g.spec.name and g.spec.name.count(",") == (1 if shape[1] == 1 else 2)


def test_size_classes_are_powers_of_two_from_1024():
    assert [W.size_class(n) for n in (1, 1000, 1024, 1025, 98304, 98305, 1 << 20)] == \
        [1024, 1024, 1024, 2048, 131072, 131072, 1 << 20]


@pytest.fixture
def fake_streams(monkeypatch):
    """gemv_workspace with a settable current stream and device, and the workspace cache recording its keys."""
    from gpumemlab.gpu import runtime

    now = dict(stream=7, device=0)

    class Stream:
        @property
        def ptr(self):
            return now["stream"]

    monkeypatch.setattr(runtime, "_launch_api", lambda: [None, None, Stream, lambda: now["device"]])
    keys = []
    monkeypatch.setattr(W, "_workspace", lambda *key: keys.append(key) or key)
    return now, keys


def test_workspace_is_per_device_stream_and_size_class(fake_streams):
    now, keys = fake_streams
    ops.gemv_workspace(12 * 8192, 64)
    ops.gemv_workspace(98000, 60)          # same classes: the same set
    now["stream"] = 9
    ops.gemv_workspace(12 * 8192, 64)      # another stream: its own set
    now["device"] = 1
    ops.gemv_workspace(12 * 8192, 64)
    assert keys == [(0, 7, 0, "float32", 131072, 1024), (0, 7, 0, "float32", 131072, 1024),
                    (0, 9, 0, "float32", 131072, 1024), (1, 9, 0, "float32", 131072, 1024)]


def test_per_thread_default_stream_gets_a_set_per_thread(fake_streams):
    now, keys = fake_streams
    now["stream"] = W.PER_THREAD_STREAM
    ops.gemv_workspace(1, 1)
    worker = threading.Thread(target=ops.gemv_workspace, args=(1, 1))
    worker.start()
    worker.join()
    assert keys[0][2] == threading.get_ident() and keys[1][2] == worker.ident and keys[0][2] != keys[1][2]
    now["stream"] = 0  # the legacy default stream is one stream for every thread
    ops.gemv_workspace(1, 1)
    assert keys[2] == (0, 0, 0, "float32", 1024, 1024)


class FakeLauncher:
    def __init__(self, kernel, grid, block, n_arrays, *scalars, shmem=0):
        self.args = (kernel, grid, block, n_arrays, scalars)
        self.calls = []

    def __call__(self, *arrays):
        self.calls.append(arrays)


def test_prepared_launch_passes_the_workspace_or_null_pointers(monkeypatch, fake_streams):
    from gpumemlab.gpu import runtime

    _, keys = fake_streams
    monkeypatch.setattr(runtime, "Launcher", FakeLauncher)
    g = ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6)
    run = ops.GemvRun(g)
    assert run.launch.args == (g.spec, (64, 12), (32, 8), 5, (1, 8192, 1024, 88))  # work, ticket: per call
    run("out", "a", "b")
    assert run.launch.calls == [("out", "a", "b", 0, 7, 0, "float32", 131072, 1024)] and len(keys) == 1
    plain = ops.GemvRun(ops.gemv_launch(333, 1, 1000, True, SMS, blocks_per_sm=8))
    kernel, grid, block, n_arrays, scalars = plain.launch.args
    assert (n_arrays, scalars[2:]) == (3, (333, 1000, 1024)) and plain.workspace is None  # one k range: the chunk covers K
    assert [type(x) for x in scalars[:2]] == [np.uint64, np.uint64] and scalars[:2] == (0, 0)  # never dereferenced
    plain("out", "a", "b")
    assert plain.launch.calls == [("out", "a", "b")] and len(keys) == 1  # no workspace asked for


def test_ticket_kernels_build_without_spills():
    """The ticket instantiations on sm_90 (.ci/run builds the whole catalog for every supported arch).
    The ticket gemv_rows asks for 8 blocks per SM: on sm_90 it must stay at 32 registers."""
    pytest.importorskip("cuda.core")
    from kernel_sample import matmul_sample

    from gpumemlab.gpu.compile import compile_specs

    specs = [s for s in K.GEMV_KERNELS if "true" in s.name]
    built = compile_specs(matmul_sample(), "sm_90")  # the cubins test_matmul_cpu.py builds: cached once
    assert set(specs) <= set(built)
    for spec, (_mod, u) in ((s, built[s]) for s in specs):
        assert u.spill_store_bytes == 0 and u.spill_load_bytes == 0 and u.local_bytes == 0, (spec.name, u)
        if spec.name.startswith("gemv_rows<4, true"):
            assert u.registers <= 32, (spec.name, u.registers)

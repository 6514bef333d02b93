"""The matrix-vector path's split epilogues without a GPU: kernel names, launch shapes and routes per epilogue, the
options switch, the per-stream workspace rule, the prepared launch's arguments, and the new instantiations' code."""

import re
import threading

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.kernels import matmul as K
from gpumemlab.ops import _workspace as W
from gpumemlab.ops import matmul as ops
from tool_modules import load_tool

SMS = 132  # an H100 / H200


def test_epilogue_names_keep_the_ticket_as_the_template_default():
    assert K.gemv_cols(4, True, 1).name == "gemv_cols<4, true, 1>"  # the ticket: GEMV_TICKET is the default
    assert K.gemv_cols(4, True, 1, "atomic").name == "gemv_cols<4, true, 1, 0>"
    assert K.gemv_cols(1, False, 8, "atomic") == K.gemv_cols(1, False, 8)  # unsplit: no epilogue to choose
    assert K.gemv_cols(1, False, 8).name == "gemv_cols<1, false, 8>"
    assert K.gemv_rows(4, True).name == "gemv_rows<4, true>"
    assert K.gemv_rows(1, True, "atomic").name == "gemv_rows<1, true, 0>"
    assert K.gemv_rows(4, False, "atomic").name == "gemv_rows<4, false>"
    with pytest.raises(ValueError, match=r"gemv epilogue is one of \('ticket', 'atomic'\), got 'memset'"):
        K.gemv_cols(4, True, 1, "memset")
    assert K.GEMV_EPILOGUES == ("ticket", "atomic") and ops.GEMV_EPILOGUES == K.GEMV_EPILOGUES


def test_catalog_holds_every_epilogue_once():
    names = [s.name for s in K.GEMV_KERNELS]
    assert len(names) == len(set(names)) == 2 * 3 + 2 * 3 * len(K.SKINNY_ROWS)  # (unsplit, ticket, atomic) x vec
    for vec in (4, 1):
        for e in K.GEMV_EPILOGUES:
            assert K.gemv_rows(vec, True, e) in K.GEMV_KERNELS
            assert all(K.gemv_cols(vec, True, r, e) in K.GEMV_KERNELS for r in K.SKINNY_ROWS)
    assert set(K.GEMV_KERNELS) <= set(K.KERNELS)  # what `gemv kernels --arch` (CI) and the compile tests build


def test_one_row_8192_by_1024_splits_into_12_ranges_with_either_epilogue():
    """The issue's shape on an H100/H200 (6 resident blocks of the float4 one-row kernel per SM): 64 column blocks x
    12 k ranges of 88 rows; the ticket needs 12 x 8192 partials and 64 tickets, the atomic route a memset."""
    t = ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6, epilogue="ticket")
    a = ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6, epilogue="atomic")
    assert (t.grid, t.scalars, t.splits) == (a.grid, a.scalars, a.splits) == ((64, 12), (1, 8192, 1024, 88), 12)
    assert t.spec == K.gemv_cols(4, True, 1) and a.spec == K.gemv_cols(4, True, 1, "atomic")
    assert (t.epilogue, t.zero_first, t.workspace) == ("ticket", False, (12 * 8192, 64))
    assert (a.epilogue, a.zero_first, a.workspace) == ("atomic", True, None)


@pytest.mark.parametrize("shape, bps, grid, scalars, workspace", [
    ((1, 777, 1001), 4, (25, 14), (1, 777, 1001, 72), (14 * 777, 25)),           # scalar loads, partial column block
    ((3, 1025, 4099), 4, (33, 16), (3, 1025, 4099, 264), (16 * 3 * 1025, 33)),  # 3 rows in the 4-row kernel
    ((1024, 1, 8192), 8, (128, 8), (1024, 8192, 1024), (8 * 1024, 128)),       # N = 1: one ticket per 8 rows
    ((100, 1, 5003), 8, (13, 4), (100, 5003, 1280), (4 * 100, 13)),
])
def test_split_launches_and_their_workspace(shape, bps, grid, scalars, workspace):
    m, n, k = shape
    g = ops.gemv_launch(m, n, k, True, SMS, blocks_per_sm=bps, epilogue="ticket")
    assert (g.grid, g.scalars, g.workspace, g.outputs) == (grid, scalars, workspace, m * n)
    assert g.spec == (K.gemv_rows(g.vec, True) if n == 1 else K.gemv_cols(1, True, K.skinny_rows(m)))


@pytest.mark.parametrize("shape, bps", [((1, 200_000, 4096), 6), ((333, 1, 1000), 8), ((3, 1001, 37), 4)])
def test_unsplit_launches_have_no_epilogue(shape, bps):
    for e in K.GEMV_EPILOGUES:
        g = ops.gemv_launch(*shape, True, SMS, blocks_per_sm=bps, epilogue=e)
        assert (g.splits, g.epilogue, g.zero_first, g.workspace) == (1, None, False, None)
        assert "false" in g.spec.name and g.spec.name.count(",") == (1 if shape[1] == 1 else 2)


def test_options_switch_the_epilogue_for_the_block_only():
    assert ops._GEMV == {"epilogue": "ticket"}  # the default
    assert ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6).epilogue == "ticket"
    with ops.options(gemv="atomic") as got:
        assert got == ops._OPTIONS and "gemv" not in got  # the tile routes' record is unchanged
        assert ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6).spec == K.gemv_cols(4, True, 1, "atomic")
        with ops.options(route="pad"):
            assert ops._GEMV["epilogue"] == "atomic"
    assert ops._GEMV == {"epilogue": "ticket"} and ops._OPTIONS == dict(route="direct", waves="unaligned")
    with pytest.raises(UsageError, match="matmul: gemv 'memset'; expected one of ticket, atomic"):
        with ops.options(gemv="memset"):
            pass
    assert ops._GEMV == {"epilogue": "ticket"}


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
    g = ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6, epilogue="ticket")
    run = ops.GemvRun(g)
    assert run.launch.args == (g.spec, (64, 12), (32, 8), 5, (1, 8192, 1024, 88))  # work, ticket: per call
    run("out", "a", "b")
    assert run.launch.calls == [("out", "a", "b", 0, 7, 0, "float32", 131072, 1024)] and len(keys) == 1
    g = ops.gemv_launch(1, 8192, 1024, True, SMS, blocks_per_sm=6, epilogue="atomic")
    kernel, grid, block, n_arrays, scalars = ops.GemvRun(g).launch.args
    assert (n_arrays, scalars[2:]) == (3, (1, 8192, 1024, 88)) and ops.GemvRun(g).zero
    assert [type(x) for x in scalars[:2]] == [np.uint64, np.uint64] and scalars[:2] == (0, 0)  # never dereferenced
    plain = ops.GemvRun(ops.gemv_launch(333, 1, 1000, True, SMS, blocks_per_sm=8))
    assert not plain.zero and plain.workspace is None and plain.launch.args[3] == 3
    plain("out", "a", "b")
    assert plain.launch.calls == [("out", "a", "b")] and len(keys) == 1  # no workspace asked for


def _sass_loop():
    return load_tool("sass_loop")


def test_atomic_instantiations_keep_gemv_depth_rows_of_b_in_flight():
    """tests/test_tools.py checks the default (ticket) names; the atomic ones, timed against them, must not lose the
    loads in flight either (the epilogue is after the loop, but ptxas allocates registers for the whole kernel)."""
    pytest.importorskip("cuda.core")
    from gpumemlab.gpu.compile import compile_group, source_text

    s = _sass_loop()
    nvdisasm = s.find_nvdisasm()
    if nvdisasm is None:
        pytest.skip("no nvdisasm (the test extra installs nvidia-cuda-nvdisasm)")
    depth = int(re.search(r"constexpr int GEMV_DEPTH = (\d+);", source_text("matmul.cu")).group(1))
    names = [K.gemv_cols(4, True, rows, "atomic").name for rows in K.SKINNY_ROWS]
    mod = compile_group("matmul.cu", names, "sm_90")
    for name in names:
        code = s.disassemble(mod.cubin, nvdisasm, mod.symbol_mapping[name])
        flights = [f for _, t, _, f in s.load_cover(s.main_loop(code, containing=r"LDG.*\.128"), "LDG") if ".128" in t]
        assert flights and max(flights) >= depth, (name, flights)


def test_ticket_kernels_build_without_spills():
    """The ticket instantiations on sm_90 (.ci/run builds the whole catalog for every supported arch).
    The ticket gemv_rows asks for 8 blocks per SM: on sm_90 it must stay at the atomic kernel's 32 registers."""
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


def test_probe_prints_a_row_per_shape_with_both_ratios(capsys):
    probe = load_tool("gemv_probe")
    launch = dict(kernel="gemv_cols<4, true, 1>", grid=[64, 12], block=[32, 8], splits=12, epilogue="ticket",
                  zero_first=False, workspace=[98304, 64])
    timing = lambda us: dict(median_s=us * 1e-6, min_s=(us - 0.5) * 1e-6, max_s=(us + 1) * 1e-6)  # noqa: E731
    rec = dict(shape="1x8192x1024", wall_s=1.0, launches=dict(ticket=launch, atomic=dict(launch, epilogue="atomic")),
               checks={probe.CUBLAS: dict(ok=True), "atomic": dict(ok=True, repeat_bitwise=False),
                       "ticket": dict(ok=True, repeat_bitwise=True)},
               timings={probe.CUBLAS: timing(8.0), "atomic": timing(9.0), "ticket": timing(7.5),
                        probe.MEMSET: timing(1.2)},
               ratio_to_cublas=dict(atomic=8 / 9, ticket=8 / 7.5), ticket_saves_s=1.5e-6)
    probe._print_shape(rec)
    probe._print_table([rec, dict(shape="1x1x1", failed="boom")])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("     1x8192x1024 gemv_cols<4, true, 1> grid [64, 12], 12 k ranges; checks: cupy.matmul ok, "
                      "atomic ok bits vary, ticket ok same bits; 1.0 s")
    assert out[-2].split() == ["1x8192x1024", "12", "8.00", "[7.50-9.00]", "9.00", "[8.50-10.00]", "0.889", "7.50",
                               "[7.00-8.50]", "1.067", "1.20", "1.50"]
    assert out[-1].split() == ["1x1x1", "FAILED"]

"""register_blocked's split-K ticket epilogue without a GPU: kernel names (the atomic ones unchanged), the catalog's
ticket twins, the route and workspace decision with its cap, the options switch, and the prepared launches."""

import importlib.util
from pathlib import Path

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.kernels import matmul as K
from gpumemlab.ops import matmul as ops

ROOT = Path(__file__).resolve().parents[1]
SKINNY = K.RBConfig(32, 128, 16, 32, 32, 1, stages=3, aload=0, minb=4, order=2, pin=1)  # the issue's 777x1001x513 tile


def test_atomic_names_are_unchanged_and_the_ticket_spells_all_18_arguments():
    assert SKINNY in K.CANDIDATES
    atomic = "register_blocked<32, 128, 16, 32, 32, 1, 4, 4, 3, 1, 0, 4, true, 0, 2, 1>"
    assert SKINNY.spec(1, True).name == SKINNY.spec(1, True, epilogue="atomic").name == atomic
    assert SKINNY.spec(1, True, epilogue="ticket").name == \
        "register_blocked<32, 128, 16, 32, 32, 1, 4, 4, 3, 1, 0, 4, true, 0, 2, 1, 0, 1>"
    assert SKINNY.spec(4, True, pad=True, epilogue="ticket").name == \
        "register_blocked<32, 128, 16, 32, 32, 1, 4, 4, 3, 4, 0, 4, true, 0, 2, 1, 1, 1>"
    plain = K.RBConfig(128, 128, 16, 64, 64, 4, stages=2, aload=1, minb=2, ragged_minb=1, dbuf=1)  # ORDER, PIN 0
    assert plain.spec(4, True).name == "register_blocked<128, 128, 16, 64, 64, 4, 4, 4, 2, 4, 1, 2, true, 1>"
    assert plain.spec(4, True, epilogue="ticket").name == \
        "register_blocked<128, 128, 16, 64, 64, 4, 4, 4, 2, 4, 1, 2, true, 1, 0, 0, 0, 1>"
    assert plain.spec(1, True, epilogue="ticket").name.split(", ")[11] == "1"  # ragged MINB, as the atomic kernel
    assert SKINNY.spec(4, False, epilogue="ticket") == SKINNY.spec(4, False)  # unsplit: no epilogue to choose
    with pytest.raises(ValueError, match=r"split-K epilogue is one of \('atomic', 'ticket'\), got 'memset'"):
        SKINNY.spec(4, True, epilogue="memset")
    assert K.SPLITK_EPILOGUES == ops.SPLITK_EPILOGUES == ("atomic", "ticket")


def test_catalog_holds_a_ticket_twin_of_every_split_candidate():
    names = [s.name for s in K.KERNELS]
    assert len(names) == len(set(names))
    for cfg in K.CANDIDATES:
        for vec in (4, 1):
            assert cfg.spec(vec, True) in K.KERNELS and cfg.spec(vec, True, epilogue="ticket") in K.KERNELS
        assert cfg.spec(4, True, pad=True, epilogue="ticket") in K.KERNELS
    tickets = [n for n in names if n.startswith("register_blocked<") and n.count(",") == 17]
    assert len(tickets) == 3 * len(K.CANDIDATES)


def test_the_issue_shape_takes_3_splits_and_a_9_mb_workspace():
    """777 x 1001 x 513 on the 32 x 128 tile: 25 x 8 = 200 tiles, 3 k ranges of 176; the ticket's partials are
    3 x 777 x 1001 floats (9.3 MB, size class 4 Mi floats) and it needs 200 tickets."""
    assert ops.split_chunk(513, 16, 3) == (176, 3)
    got = ops.splitk_epilogue(777, 1001, 3, ops._tiles(SKINNY, 777, 1001), "ticket")
    assert got == ops.SplitK("ticket", (2_333_331, 200)) and not got.zero_first
    assert ops.size_class(2_333_331) == 1 << 22 and ops.size_class(200) == 1024
    atomic = ops.splitk_epilogue(777, 1001, 3, 200, "atomic")
    assert atomic == ops.SplitK("atomic", None) and atomic.zero_first
    assert ops.splitk_epilogue(777, 1001, 1, 200, "ticket") == ops.SplitK(None, None)  # one k range: no epilogue


def test_the_ticket_falls_back_to_atomic_past_the_workspace_or_splits_cap():
    assert ops.SPLITK_WORKSPACE_MAX == 1 << 22
    assert ops.splitk_epilogue(1024, 1024, 4, 8, "ticket") == ops.SplitK("ticket", (1 << 22, 8))  # exactly the cap
    assert ops.splitk_epilogue(1024, 1024, 5, 8, "ticket") == ops.SplitK("atomic")
    assert ops.SPLITK_TICKET_MAX_SPLITS == 16
    assert ops.splitk_epilogue(64, 64, 16, 1, "ticket") == ops.SplitK("ticket", (1 << 16, 1))
    assert ops.splitk_epilogue(64, 64, 17, 1, "ticket") == ops.SplitK("atomic")  # the last block would read 17 tiles
    with pytest.raises(UsageError, match="splitk 'memset'"):
        ops.splitk_epilogue(64, 64, 2, 1, "memset")


def test_options_switch_the_split_k_epilogue_for_the_block_only():
    assert ops._SPLITK == {"epilogue": "atomic"}  # the default until the lead's measurement flips it
    assert ops.splitk_epilogue(777, 1001, 3, 200) == ops.SplitK("atomic")
    with ops.options(splitk="ticket") as got:
        assert got == dict(route="direct", waves="unaligned")  # the tile routes' record, as before
        assert ops.splitk_epilogue(777, 1001, 3, 200) == ops.SplitK("ticket", (2_333_331, 200))
        with ops.options(gemv="atomic"):
            assert ops._SPLITK["epilogue"] == "ticket" and ops._GEMV["epilogue"] == "atomic"
    assert ops._SPLITK == {"epilogue": "atomic"} and ops._GEMV == {"epilogue": "ticket"}
    with pytest.raises(UsageError, match="splitk 'memset'"):
        with ops.options(splitk="memset"):
            pass
    assert ops._SPLITK == {"epilogue": "atomic"}


class FakeLauncher:
    def __init__(self, kernel, grid, block, n_arrays, *scalars, shmem=0):
        self.args = (kernel, grid, block, n_arrays, scalars, shmem)
        self.calls = []

    def __call__(self, *arrays):
        self.calls.append(arrays)


@pytest.fixture
def fake_gpu(monkeypatch):
    """_auto_launch without a GPU: the route fixed to the issue's choice (32 x 128 tile, 3 splits, scalar loads),
    kernels by name, Launcher recorded, the workspace keyed as gemv_workspace keys it."""
    from gpumemlab.gpu import runtime

    monkeypatch.setattr(runtime, "device_info", lambda: dict(name="fake", sm_count=132))
    monkeypatch.setattr(runtime, "get_kernel", lambda spec: spec)
    monkeypatch.setattr(runtime, "Launcher", FakeLauncher)
    monkeypatch.setattr(ops, "route", lambda m, n, k, aligned, mode=None, waves=None:
                        ops.Route("scalar", ops.Choice(SKINNY, 3)))

    class Stream:
        ptr = 7

    monkeypatch.setattr(runtime, "_launch_api", lambda: [None, None, Stream, lambda: 0])
    keys = []
    monkeypatch.setattr(ops, "_gemv_workspace", lambda *key: keys.append(key) or key)
    return keys


def test_prepared_ticket_launch_is_one_launch_with_the_workspace(fake_gpu):
    keys = fake_gpu
    launch, zero, pad = ops._auto_launch.__wrapped__(777, 1001, 513, False, "fake", "direct", "unaligned", "ticket",
                                                     "ticket")
    assert isinstance(launch, ops._TicketRun) and zero is False and pad is None
    assert launch.launch.args == (SKINNY.spec(1, True, epilogue="ticket"), (200, 3), 128, 5, (777, 1001, 513, 176),
                                  SKINNY.smem_bytes)
    launch("out", "a", "b")
    assert launch.launch.calls == [("out", "a", "b", 0, 7, 0, 1 << 22, 1024)] and len(keys) == 1
    atomic, zero, _ = ops._auto_launch.__wrapped__(777, 1001, 513, False, "fake", "direct", "unaligned", "ticket",
                                                   "atomic")
    assert zero is True and atomic.args == (SKINNY.spec(1, True), (200, 3), 128, 3, (777, 1001, 513, 176),
                                            SKINNY.smem_bytes)
    atomic("out", "a", "b")
    assert atomic.calls == [("out", "a", "b")] and len(keys) == 1  # no workspace asked for


def test_the_new_instantiations_build_for_every_supported_arch_without_spills():
    """Every ticket twin, each arch `gpumemlab kernels --arch` supports (CI compiles the whole catalog per arch)."""
    from gpumemlab.gpu import compile as C

    specs = [cfg.spec(vec, True, epilogue="ticket") for cfg in K.CANDIDATES for vec in (4, 1)] \
        + [cfg.spec(4, True, pad=True, epilogue="ticket") for cfg in K.CANDIDATES]
    for arch in ("sm_75", "sm_90", "sm_120"):
        compiled = C.compile_specs(specs, arch)
        for spec, (_mod, usage) in compiled.items():
            assert usage.spill_store_bytes == 0 and usage.local_bytes == 0, (arch, spec.name, usage)


def test_probe_prints_a_row_per_shape_with_both_ratios(capsys):
    spec = importlib.util.spec_from_file_location("splitk_probe", ROOT / "tools" / "splitk_probe.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t = {name: dict(median_s=m * 1e-6, min_s=m * 0.9e-6, max_s=m * 1.2e-6)
         for name, m in ((mod.CUBLAS, 29.3), ("atomic", 40.5), ("ticket", 36.0))}
    rec = dict(shape="777x1001x513", launches=dict(ticket=dict(splits=3, epilogue="ticket")), timings=t,
               ratio_to_cublas=dict(atomic=29.3 / 40.5, ticket=29.3 / 36.0))
    mod._print_table([rec, dict(shape="1x1x1", failed="boom")])
    out = capsys.readouterr().out
    assert "777x1001x513" in out and "0.723" in out and "0.814" in out and "1x1x1 FAILED" in out
    assert {s for s in mod.SHAPES} >= {(777, 1001, 513), (4096, 4096, 4096)}

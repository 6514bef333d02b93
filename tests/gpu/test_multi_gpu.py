"""Two GPUs (issue 15): peer copies equal their source, stream_map over devices [0, 1] equals one device and NumPy,
a failure on device 1 frees everything on both devices, the suite runs on the device it is told and says so.
Every test here skips cleanly with fewer than two GPUs."""

from __future__ import annotations

import gc
import json
import re
import threading

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp(two_gpus):
    return two_gpus


def held(cp):
    """Pinned and registered host bytes, each device's pool, and stream_map's threads (staging cache released)."""
    from gpumemlab.gpu.host import live_bytes
    from gpumemlab.ops.stream_map import _live_streams, release_staging

    gc.collect()
    release_staging()
    pools = []
    for d in (0, 1):
        with cp.cuda.Device(d):
            cp.cuda.Device().synchronize()
            pools.append(cp.get_default_memory_pool().used_bytes())
    threads = sum(t.name.startswith("gpumemlab-stream_map") for t in threading.enumerate())
    h = live_bytes()
    return h["pinned"], h["registered"], tuple(pools), threads, len(_live_streams)


def test_peer_access_matrix_sees_the_pair(cp):
    from gpumemlab.gpu import peer

    m = peer.peer_matrix()
    assert m[0][0] is None and m[1][1] is None
    assert m[0][1] == bool(cp.cuda.runtime.deviceCanAccessPeer(0, 1)) and m[1][0] == bool(
        cp.cuda.runtime.deviceCanAccessPeer(1, 0))


@pytest.mark.parametrize("access", [True, False])
@pytest.mark.parametrize("nbytes", [4096, 3 << 20])
def test_peer_copies_equal_the_source(cp, access, nbytes):
    from gpumemlab.bench.verify import device_random_nonzero, poison
    from gpumemlab.gpu import peer

    if access and not peer.can_access_peer(0, 1):
        pytest.skip("device 0 cannot access device 1")
    src = device_random_nonzero(nbytes // 4, np.int32, 7)
    with peer.on_device(1):
        dst = cp.empty_like(src)
        poison(dst)
        cp.cuda.Device().synchronize()
    with peer.peer_access((0, 1), access):
        peer.copy_peer_async(dst, 1, src, 0, nbytes)
        cp.cuda.Device(0).synchronize()
    assert np.array_equal(dst.get(), src.get())


@pytest.mark.parametrize("copier", ["x1", "x8", "bulk"])
@pytest.mark.parametrize("mode", ["pull", "push"])
def test_sm_peer_copies_equal_the_source(cp, copier, mode):
    from gpumemlab.bench.verify import device_random_nonzero, poison
    from gpumemlab.experiments.p2p import sm_copy, sync
    from gpumemlab.gpu import peer, runtime
    from gpumemlab.gpu.compile import runs_on
    from gpumemlab.kernels import peer as K

    if not peer.can_access_peer(0, 1):
        pytest.skip("no peer access between devices 0 and 1")
    if copier == "bulk" and not runs_on(K.PEER_BULK, runtime.device_arch()):
        pytest.skip("the bulk-copy unit needs sm_90")
    n = (5 << 20) // 4 + 12  # not a multiple of the grid: the tail of the grid-stride loop
    src = device_random_nonzero(n, np.int32, 3)
    with peer.on_device(1):
        dst = cp.empty_like(src)
        poison(dst)
    sync()
    with peer.peer_access((0, 1), True):
        device = 1 if mode == "pull" else 0
        run = sm_copy(copier, device, dst, src, 4 * n)
        with peer.on_device(device):
            run()
        sync()
    assert np.array_equal(dst.get(), src.get())


def heavy(c):
    import cupy

    y = c
    for _ in range(50):
        y = cupy.sin(y) * 0.5 + y
    return y


@pytest.mark.parametrize("fn", [heavy, lambda c: c * 2 + 1], ids=["heavy", "light"])
def test_stream_map_on_two_devices_equals_one_device_and_numpy(cp, fn):
    from gpumemlab import stream_map

    x = np.random.default_rng(1).random((10_000, 33), dtype=np.float32)
    one = stream_map(fn, x, chunk_bytes=64 << 10)
    two = stream_map(fn, x, chunk_bytes=64 << 10, devices=[0, 1])
    assert np.array_equal(one, two)
    if fn is not heavy:
        assert np.array_equal(two, x * np.float32(2) + np.float32(1))
    else:
        want = x.astype(np.float64)
        for _ in range(50):
            want = np.sin(want) * 0.5 + want
        assert np.allclose(two, want, rtol=1e-4, atol=1e-4)
    out, stats = stream_map(fn, x, chunk_bytes=64 << 10, devices=[1, 0], profile=True)
    assert np.array_equal(out, one) and stats["devices"] == [1, 0]
    assert sum(p["chunks"] for p in stats["per_device"]) == -(-x.nbytes // (64 << 10))


def test_a_failure_on_device_1_drains_and_frees_both_devices(cp):
    from gpumemlab import stream_map

    x = np.random.default_rng(2).random((4096, 64), dtype=np.float32)
    before = held(cp)

    class Boom(Exception):
        pass

    def fn(c):
        if cp.cuda.runtime.getDevice() == 1:
            raise Boom("device 1 refuses")
        return c + 1

    with pytest.raises(Boom) as info:
        stream_map(fn, x, chunk_bytes=16 << 10, devices=[0, 1])
    notes = getattr(info.value, "__notes__", [])
    assert any("chunk 1 " in n and "on device 1" in n for n in notes), notes
    del info
    assert held(cp) == before


@pytest.mark.parametrize("route", ["staged", "registered", "balanced", "pinned"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("error", ["Boom", "KeyboardInterrupt"])
def test_a_failure_on_two_devices_leaks_nothing_on_any_route(cp, route, where, error):
    import contextlib

    from test_stream_map import Boom, chain, route_input

    from gpumemlab import stream_map

    exc_type = Boom if error == "Boom" else KeyboardInterrupt
    with contextlib.ExitStack() as keep:
        x, register = route_input(route, keep)   # 16 chunks of ODD_CHUNK, 8 per device
        bad = {"first": 0, "middle": 7, "last": 15}[where]

        def fn(c):
            if _first(c, x, bad):
                raise exc_type("fn failed")
            return chain(c, 3)

        before = held(cp)
        with pytest.raises(exc_type) as info:
            stream_map(fn, x, chunk_bytes=(1 << 20) + 12, streams=3, register=register, devices=[0, 1])
        if exc_type is Boom:
            notes = getattr(info.value, "__notes__", [])
            assert any(f"chunk {bad} " in n and f"on device {bad % 2}" in n for n in notes), notes
        del info
        assert held(cp) == before


def _first(c, x, k: int) -> bool:
    """Chunk ``c`` is chunk ``k`` of ``x`` (its first value is that chunk's first)."""
    return bool(c[:1].get()[0] == x[k * 262147])


def test_a_cupy_chain_fn_on_two_devices_is_bit_identical_to_one(cp):
    from test_stream_map import chain

    from gpumemlab import stream_map
    from gpumemlab.gpu.host import host_array

    n = 1 << 22
    with host_array(n, np.float32) as xb, host_array(n, np.float32) as ob:
        xb.array[:] = np.random.default_rng(4).random(n, dtype=np.float32)
        one = stream_map(chain, xb.array, chunk_bytes=1 << 20)
        two, st = stream_map(chain, xb.array, out=ob.array, chunk_bytes=1 << 20, devices=[0, 1], profile=True)
        assert two.tobytes() == one.tobytes() and st["out_route"] == "pinned"
        assert [p["chunks"] for p in st["per_device"]] == [8, 8]
        assert st["fn_gpu_s"] == pytest.approx(sum(p["fn_gpu_s"] for p in st["per_device"]))


def test_bench_device_1_records_name_device_1(cp, tmp_path, run_cli):
    from gpumemlab.gpu import runtime

    try:
        code, out, err = run_cli("bench", "--quick", "--quiet", "--device", "1", "--only", "vector_copy",
                                 "--out", str(tmp_path / "r"))
    finally:
        cp.cuda.Device(0).use()  # --device switched this thread's device
    assert code == 0, err
    meta = json.loads((tmp_path / "r" / "results.json").read_text())
    info = runtime.device_info(1)
    assert meta["meta"]["device"] == dict(ordinal=1, name=info["name"], pci_bus_id=info["pci_bus_id"])
    assert meta["device"]["ordinal"] == 1


def test_p2p_experiment_runs_quick(cp, tmp_path, run_cli):
    code, out, err = run_cli("run", "p2p", "--quick", "--quiet", "--out", str(tmp_path / "p"))
    assert code == 0, err
    res = json.loads((tmp_path / "p" / "results.json").read_text())
    assert not res["errors"] and res["experiments"]["p2p"]["findings"]
    assert {r["variant"] for r in res["results"]} >= {"CE peer on", "CE peer off", "SM pull x8", "pinned H2D"}


def test_device_command_shows_the_peer_matrix(cp, run_cli):
    code, out, err = run_cli("device", "--quick")
    assert code == 0, err
    assert "peer access" in out and "links:" in out and "GPU 0-1" in out
    if cp.cuda.runtime.deviceCanAccessPeer(0, 1):  # a rate measured now by the suite's timer, for each direction
        rates = re.findall(r"^  (0->1|1->0): ([\d,.]+) GB/s$", out, re.M)
        assert "peer copy rates (measured now" in out and {d for d, _ in rates} == {"0->1", "1->0"}
        assert all(float(g.replace(",", "")) > 0 for _, g in rates)

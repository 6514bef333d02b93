"""What `gpumemlab device` says about several GPUs: the peer-access matrix, the link of each pair (NVML) and the
peer copy rate of each ordered pair, measured quickly here or read from a p2p run's records."""

from __future__ import annotations

from ..gpu import peer, runtime
from . import nvml
from .timer import TimerConfig, time_gpu

QUICK_BYTES = 256 << 20   # one copy of this size per sample: a few hundred microseconds over NVLink
QUICK = TimerConfig(max_time_s=0.3)  # the suite's timer (>= 10 samples, stop on spread), held to a short total


def copy_gbps(a: int, b: int, nbytes: int = QUICK_BYTES) -> float:
    """cudaMemcpyPeerAsync from ``a`` to ``b`` with peer access on: median GB/s by the suite's event timer."""
    import cupy

    with peer.on_device(b):
        dst = cupy.empty(nbytes, cupy.uint8)
    with peer.on_device(a), peer.peer_access((a, b), True):
        src = cupy.ones(nbytes, cupy.uint8)
        stream = runtime.work_stream()
        timing = time_gpu(lambda: peer.copy_peer_async(dst, b, src, a, nbytes, stream), stream=stream, cfg=QUICK)
    return nbytes / timing.stats.median / 1e9


def from_results(res) -> dict:
    """{direction ("0->1", "1->0", "both"): GB/s} of the p2p run's copy engine, peer access on, at its largest size."""
    recs = [r for r in res.results if r.experiment == "p2p" and r.variant == "CE peer on" and r.gbps]
    if not recs:
        return {}
    top = max(r.params["bytes"] for r in recs)
    return {r.params["direction"]: r.gbps for r in recs if r.params["bytes"] == top}


def topology(results=None, measure: bool = True) -> dict:
    """Peer access, links and copy rates between every pair of GPUs (empty pairs with one GPU)."""
    n = runtime.device_count()
    info = dict(count=n, names=[runtime.device_info(d)["name"] for d in range(n)], peer_access=peer.peer_matrix(n),
                links={}, copy_gbps={}, copy_source=None)
    for a in range(n):
        for b in range(a + 1, n):
            info["links"][f"{a}-{b}"] = nvml.pair_link(a, b)
    if results is not None:
        info["copy_gbps"], info["copy_source"] = from_results(results), "the p2p run's records (copy engine, peer on)"
    elif measure and n > 1:
        info["copy_source"] = f"measured now: cudaMemcpyPeerAsync of {QUICK_BYTES >> 20} MiB, peer access on"
        for a in range(n):
            for b in range(n):
                if a != b and info["peer_access"][a][b]:
                    info["copy_gbps"][f"{a}->{b}"] = copy_gbps(a, b)
    return info

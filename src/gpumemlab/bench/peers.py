"""What `gpumemlab device` says about several GPUs: the peer-access matrix, the link of each pair (NVML) and the
peer copy rate of each ordered pair, measured quickly here or read from a p2p run's records."""

from __future__ import annotations

import statistics

from ..gpu import peer, runtime
from . import nvml

QUICK_BYTES = 256 << 20   # one copy of this size per sample: a few hundred microseconds over NVLink
QUICK_SAMPLES = 5


def copy_gbps(a: int, b: int, nbytes: int = QUICK_BYTES, samples: int = QUICK_SAMPLES) -> float:
    """cudaMemcpyPeerAsync from ``a`` to ``b`` with peer access on: median GB/s of ``samples`` event-timed copies."""
    import cupy

    with peer.on_device(b):
        dst = cupy.empty(nbytes, cupy.uint8)
    with peer.on_device(a), peer.peer_access((a, b), True):
        src = cupy.ones(nbytes, cupy.uint8)
        stream = cupy.cuda.Stream(non_blocking=True)
        times = []
        for _ in range(samples + 1):  # the first warms up
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(stream)
            peer.copy_peer_async(dst, b, src, a, nbytes, stream)
            end.record(stream)
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return nbytes / statistics.median(times[1:]) / 1e9


def from_results(res) -> dict:
    """{"0->1": GB/s, "both": GB/s} of the p2p run's copy engine, peer access on, at its largest size."""
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

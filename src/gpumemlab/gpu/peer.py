"""Several GPUs: device scopes, peer access (cudaDeviceCanAccessPeer / cudaDeviceEnablePeerAccess), peer copies
(cudaMemcpyPeerAsync) and events that order streams of different devices.

Peer access is a property of a context: enabled from ``a`` to ``b``, kernels on ``a`` may load and store ``b``'s
memory through its UVA address, and copies between them go straight over NVLink or PCIe; disabled, a peer copy is
staged by the driver through host memory and a kernel touching the peer's memory faults.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..errors import GpumemlabError
from . import runtime

_PEER_ALREADY_ENABLED, _PEER_NOT_ENABLED = 704, 705  # cudaErrorPeerAccessAlreadyEnabled / NotEnabled


@contextmanager
def on_device(ordinal: int):
    """Make ``ordinal`` CuPy's current device inside the block (and its stream, the device's current one)."""
    import cupy

    runtime.check_ordinal(ordinal)
    with cupy.cuda.Device(ordinal):
        runtime.ensure_device()
        yield


def can_access_peer(a: int, b: int) -> bool:
    """cudaDeviceCanAccessPeer: whether device ``a`` can address device ``b``'s memory."""
    import cupy

    return a != b and bool(cupy.cuda.runtime.deviceCanAccessPeer(runtime.check_ordinal(a), runtime.check_ordinal(b)))


def peer_matrix(count: int | None = None) -> list[list[bool | None]]:
    """``m[a][b]``: can ``a`` access ``b`` (None on the diagonal)."""
    n = runtime.device_count() if count is None else count
    return [[None if a == b else can_access_peer(a, b) for b in range(n)] for a in range(n)]


def set_peer_access(a: int, b: int, enabled: bool) -> bool:
    """Enable or disable device ``a``'s access to ``b``'s memory; return whether it was enabled before."""
    import cupy

    rt = cupy.cuda.runtime
    if enabled and not can_access_peer(a, b):
        raise GpumemlabError(f"device {a} cannot access device {b}'s memory (cudaDeviceCanAccessPeer = 0)")
    with on_device(a):
        try:
            (rt.deviceEnablePeerAccess if enabled else rt.deviceDisablePeerAccess)(b)
            return not enabled  # the call changed it: it was the other way
        except rt.CUDARuntimeError as exc:
            if exc.status in (_PEER_ALREADY_ENABLED, _PEER_NOT_ENABLED):
                return enabled  # already as asked
            raise GpumemlabError(f"cudaDevice{'Enable' if enabled else 'Disable'}PeerAccess({a} -> {b}) failed: "
                                 f"{exc}") from None


@contextmanager
def peer_access(devices, enabled: bool):
    """Peer access between every pair of ``devices`` on (or off) inside the block; the state before is restored."""
    before = {}
    try:
        for a in devices:
            for b in devices:
                if a != b:
                    before[a, b] = set_peer_access(a, b, enabled)
        yield
    finally:
        for (a, b), was in before.items():
            if was != enabled:
                set_peer_access(a, b, was)


def copy_peer_async(dst, dst_device: int, src, src_device: int, nbytes: int, stream=None) -> None:
    """cudaMemcpyPeerAsync of ``nbytes`` from ``src`` on ``src_device`` to ``dst`` on ``dst_device`` (copy engine)."""
    import cupy

    handle = stream.handle if isinstance(stream, runtime.WorkStream) else (
        int(stream.ptr) if stream is not None else int(cupy.cuda.get_current_stream().ptr))
    cupy.cuda.runtime.memcpyPeerAsync(runtime.device_pointer(dst), dst_device, runtime.device_pointer(src),
                                      src_device, int(nbytes), handle)


class DeviceStreams:
    """One non-blocking stream per device, and fork/join with the current stream of the caller's device: the
    caller's events then bracket the work of every device (an event may be waited on from any device)."""

    def __init__(self, devices):
        import cupy

        self.devices = list(devices)
        self.streams = {}
        for d in self.devices:
            with on_device(d):
                self.streams[d] = cupy.cuda.Stream(non_blocking=True)

    def fork(self) -> None:
        import cupy

        ev = cupy.cuda.Event(disable_timing=True)
        ev.record(cupy.cuda.get_current_stream())
        for d, s in self.streams.items():
            with on_device(d):
                s.wait_event(ev)

    def join(self) -> None:
        import cupy

        current = cupy.cuda.get_current_stream()
        for d, s in self.streams.items():
            with on_device(d):
                ev = cupy.cuda.Event(disable_timing=True)
                ev.record(s)
            current.wait_event(ev)

    def run(self, device: int, fn) -> None:
        """``fn()`` with ``device`` current and its stream as CuPy's current stream."""
        import cupy

        with on_device(device):
            before = cupy.cuda.get_current_stream()  # `with stream:` would restore the null stream instead
            self.streams[device].use()
            try:
                fn()
            finally:
                before.use()

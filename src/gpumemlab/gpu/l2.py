"""L2 persisting accesses (CC >= 8.0, seed 003 section 9.2.2): the set-aside limit, a stream's access policy
window and the reset of persisting lines, through the driver API.

The set-aside (``CU_LIMIT_PERSISTING_L2_CACHE_SIZE``) is per context; the window is a stream attribute that
applies to work submitted to the stream after it is set. ``num_bytes == 0`` means no window.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import runtime
from .runtime import _check

MIN_CC = (8, 0)
PROPERTIES = ("normal", "streaming", "persisting")


@dataclass(frozen=True)
class AccessWindow:
    """``cudaAccessPolicyWindow``: accesses to [base_ptr, base_ptr + num_bytes) get ``hit_prop`` with
    probability ``hit_ratio`` and ``miss_prop`` otherwise."""

    base_ptr: int = 0
    num_bytes: int = 0
    hit_ratio: float = 0.0
    hit_prop: str = "normal"
    miss_prop: str = "normal"

    def __post_init__(self):
        if not 0.0 <= self.hit_ratio <= 1.0:
            raise ValueError(f"hit_ratio must be in [0, 1], got {self.hit_ratio}")
        for p in (self.hit_prop, self.miss_prop):
            if p not in PROPERTIES:
                raise ValueError(f"access property {p!r}: expected one of {', '.join(PROPERTIES)}")


NO_WINDOW = AccessWindow()
NONE, SIZED, AS_FOUND = "no window", "set-aside sized", "set-aside as found"  # persist_l2's settings


def setting(policy: str, window_bytes: int, found: int, max_set_aside: int) -> tuple[int, float]:
    """(set-aside limit, hitRatio) of a persist_l2 setting for a window of ``window_bytes`` with the limit as
    found ``found``: no window (hitRatio 0, the limit kept); the limit sized to the window (capped at the
    largest); the limit as found. The hitRatio lets the persisting lines fill the set-aside and no more."""
    if policy == NONE:
        return found, 0.0
    limit = found if policy == AS_FOUND else max(found, min(window_bytes, max_set_aside))
    return limit, min(1.0, limit / window_bytes) if limit else 0.0


def unsupported_reason(info: dict | None = None) -> str | None:
    """Why this GPU has no persisting L2 accesses (CC < 8.0 or no set-aside), or None."""
    info = info or runtime.device_info()
    cc = tuple(info["cc"])
    if cc < MIN_CC:
        return (f"L2 persisting accesses need compute capability {MIN_CC[0]}.{MIN_CC[1]} or newer; "
                f"this GPU ({info['name']}) is {cc[0]}.{cc[1]}")
    if not info.get("persisting_l2_max_bytes"):
        return f"this GPU ({info['name']}) reports no L2 set-aside for persisting accesses"
    return None


def limits() -> dict:
    """The device's bounds: L2 size, the largest set-aside, the largest window."""
    info = runtime.device_info()
    return dict(l2_bytes=int(info["l2_bytes"]), max_set_aside=int(info["persisting_l2_max_bytes"]),
                max_window=int(info["access_policy_max_window_bytes"]))


def persisting_limit() -> int:
    """The current set-aside in bytes (``cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)``)."""
    from cuda.bindings import driver

    runtime.ensure_device()
    return int(_check(driver.cuCtxGetLimit(driver.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE), "cuCtxGetLimit"))


def set_persisting_limit(nbytes: int) -> None:
    from cuda.bindings import driver

    runtime.ensure_device()
    _check(driver.cuCtxSetLimit(driver.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, int(nbytes)), "cuCtxSetLimit")


def reset_persisting_lines() -> None:
    """Demote every persisting line in L2 to normal (``cudaCtxResetPersistingL2Cache``)."""
    from cuda.bindings import driver

    runtime.ensure_device()
    _check(driver.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache")


def stream_handle(stream=None) -> int:
    """The CUstream of a CuPy stream, a cuda.core stream, a WorkStream or a raw handle; None: CuPy's current."""
    if stream is None:
        return runtime.current_stream_handle()
    if isinstance(stream, int):
        return stream
    for attr in ("ptr", "handle"):  # CuPy's Stream.ptr; WorkStream.handle / cuda.core Stream.handle
        h = getattr(stream, attr, None)
        if h is not None:
            return int(h)
    raise TypeError(f"stream: expected a CuPy or cuda.core stream, got {type(stream).__name__}")


def _prop(driver, name: str):
    return getattr(driver.CUaccessProperty, f"CU_ACCESS_PROPERTY_{name.upper()}")


def get_window(stream=None) -> AccessWindow:
    """The access policy window set on ``stream`` (NO_WINDOW when none)."""
    from cuda.bindings import driver

    runtime.ensure_device()
    value = _check(driver.cuStreamGetAttribute(driver.CUstream(stream_handle(stream)),
                                               driver.CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW), "cuStreamGetAttribute")
    w = value.accessPolicyWindow
    names = {int(_prop(driver, p)): p for p in PROPERTIES}
    if int(w.num_bytes) == 0:
        return NO_WINDOW
    return AccessWindow(int(w.base_ptr), int(w.num_bytes), float(w.hitRatio), names[int(w.hitProp)],
                        names[int(w.missProp)])


def _driver_window(driver, window: AccessWindow):
    w = driver.CUaccessPolicyWindow()
    w.base_ptr = int(window.base_ptr)
    w.num_bytes = int(window.num_bytes)
    w.hitRatio = float(window.hit_ratio)
    w.hitProp = _prop(driver, window.hit_prop)
    w.missProp = _prop(driver, window.miss_prop)
    return w


def set_window(window: AccessWindow | None, stream=None) -> None:
    """Set (or, with None / NO_WINDOW, clear) the access policy window of ``stream``."""
    from cuda.bindings import driver

    runtime.ensure_device()
    value = driver.CUstreamAttrValue()
    value.accessPolicyWindow = _driver_window(driver, window or NO_WINDOW)
    _check(driver.cuStreamSetAttribute(driver.CUstream(stream_handle(stream)),
                                       driver.CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, value), "cuStreamSetAttribute")


def persisting_window(base_ptr: int, num_bytes: int, hit_ratio: float = 1.0) -> AccessWindow:
    """The seed's window: hits persist, misses stream."""
    return AccessWindow(int(base_ptr), int(num_bytes), float(hit_ratio), "persisting", "streaming")


def _node_window_attribute(driver):
    """The kernel-node attribute id of the access policy window: cuda.bindings names it CU_KERNEL_NODE_ATTRIBUTE_... in
    newer releases and only by its launch-attribute name (the same value) in older ones."""
    ids = driver.CUkernelNodeAttrID
    return getattr(ids, "CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW", None) or \
        ids.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW


class WindowedGraph:
    """The work ``enqueue()`` submits, captured once into a CUDA graph whose kernel nodes carry an access policy
    window (seed 003, 9.2.2.1: "the access policy window on a CUDA stream or a CUDA graph kernel node");
    calling it launches the graph on the stream it was captured from. ``close()`` frees the graph."""

    def __init__(self, enqueue, window: AccessWindow, stream):
        from cuda.bindings import driver

        runtime.ensure_device()
        self._driver = driver
        self.stream = driver.CUstream(stream_handle(stream))
        mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        _check(driver.cuStreamBeginCapture(self.stream, mode), "cuStreamBeginCapture")
        try:
            enqueue()
        finally:  # a failed enqueue must not leave the stream capturing
            graph = _check(driver.cuStreamEndCapture(self.stream), "cuStreamEndCapture")
        self.graph = graph
        value = driver.CUkernelNodeAttrValue()
        value.accessPolicyWindow = _driver_window(driver, window)
        attr = _node_window_attribute(driver)
        nodes, count = _check(driver.cuGraphGetNodes(graph, 0), "cuGraphGetNodes")
        nodes, _ = _check(driver.cuGraphGetNodes(graph, count), "cuGraphGetNodes")
        self.kernel_nodes = 0
        for node in nodes:
            if _check(driver.cuGraphNodeGetType(node), "cuGraphNodeGetType") == driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL:
                _check(driver.cuGraphKernelNodeSetAttribute(node, attr, value), "cuGraphKernelNodeSetAttribute")
                self.kernel_nodes += 1
        self.exec = _check(driver.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")

    def window(self) -> AccessWindow:
        """The window the first kernel node carries, read back from the graph."""
        driver = self._driver
        attr = _node_window_attribute(driver)
        nodes, _ = _check(driver.cuGraphGetNodes(self.graph, 1), "cuGraphGetNodes")
        value = _check(driver.cuGraphKernelNodeGetAttribute(nodes[0], attr), "cuGraphKernelNodeGetAttribute")
        w = value.accessPolicyWindow  # a view into value: value must stay alive while w is read
        names = {int(_prop(driver, p)): p for p in PROPERTIES}
        return AccessWindow(int(w.base_ptr), int(w.num_bytes), float(w.hitRatio), names[int(w.hitProp)],
                            names[int(w.missProp)])

    def __call__(self) -> None:
        _check(self._driver.cuGraphLaunch(self.exec, self.stream), "cuGraphLaunch")

    def close(self) -> None:
        if self.exec is not None:
            _check(self._driver.cuGraphExecDestroy(self.exec), "cuGraphExecDestroy")
            _check(self._driver.cuGraphDestroy(self.graph), "cuGraphDestroy")
            self.exec = None

"""Library calls run on the device their arrays live on (ops/_checks.on_arrays_device), checked without a GPU:
fake arrays on named devices, a fake current device and a fake device switch."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from gpumemlab.errors import UsageError


class FakeArray:
    def __init__(self, device: int):
        self.data = SimpleNamespace(ptr=0x1000 * (device + 1), device_id=device)


class Torchish:
    """DLPack's device query only, as a torch tensor answers it."""

    def __init__(self, kind: int, ordinal: int):
        self.kind, self.ordinal = kind, ordinal

    def __dlpack_device__(self):
        return self.kind, self.ordinal


@pytest.fixture
def devices(monkeypatch):
    """(calls made: (device the wrapped function ran on, its args), switches made); device 0 is current."""
    from gpumemlab.gpu import peer
    from gpumemlab.ops import _checks

    state = {"current": 0}
    switches = []

    @contextmanager
    def on_device(ordinal):
        switches.append(ordinal)
        before, state["current"] = state["current"], ordinal
        try:
            yield
        finally:
            state["current"] = before

    monkeypatch.setattr(_checks, "_NDARRAY", FakeArray)
    monkeypatch.setattr(_checks, "_GET_DEVICE", lambda: state["current"])
    monkeypatch.setattr(peer, "on_device", on_device)
    calls = []

    @_checks.on_arrays_device
    def op(*args, **kwargs):
        """An op."""
        calls.append((state["current"], args, kwargs))
        return state["current"]

    return op, calls, switches


def test_arrays_on_the_current_device_run_without_a_switch(devices):
    op, calls, switches = devices
    assert op(FakeArray(0), FakeArray(0), out=FakeArray(0), axis=1) == 0
    assert switches == [] and len(calls) == 1 and op.__doc__ == "An op."


@pytest.mark.parametrize("where", ["first", "second", "out"])
def test_arrays_on_another_device_run_there_and_the_current_device_comes_back(devices, where):
    from gpumemlab.ops import _checks

    op, calls, switches = devices
    args = {"first": ((FakeArray(1), None), {}), "second": ((3, FakeArray(1)), {}),
            "out": ((), {"out": FakeArray(1)})}[where]
    assert op(*args[0], **args[1]) == 1
    assert switches == [1] and calls[0][0] == 1 and _checks._GET_DEVICE() == 0


def test_arrays_on_two_devices_are_refused_before_the_call(devices):
    op, calls, switches = devices
    with pytest.raises(UsageError, match=r"^arrays on devices 0, 2: pass arrays of one device"):
        op(FakeArray(2), FakeArray(0))
    with pytest.raises(UsageError, match=r"^arrays on devices 1, 3:"):
        op(FakeArray(1), out=FakeArray(3))
    assert calls == [] and switches == []


@pytest.mark.parametrize("obj, want", [
    (Torchish(2, 1), 1),            # kDLCUDA
    (Torchish(13, 3), 3),           # kDLCUDAManaged
    (Torchish(3, 0), None),         # kDLCUDAHost: pinned host memory
    (Torchish(1, 0), None),         # kDLCPU
    (SimpleNamespace(device_id=2), 2),  # ArrayImage
    (SimpleNamespace(device_id="2"), None),
    (None, None), (7, None), ("x", None),
])
def test_device_of_reads_every_kind_of_array(monkeypatch, obj, want):
    from gpumemlab.ops import _checks

    monkeypatch.setattr(_checks, "_NDARRAY", FakeArray)
    assert _checks.device_of(obj) == want


def test_device_of_asks_the_driver_for_a_cuda_array_interface_pointer(monkeypatch):
    from gpumemlab.gpu import host
    from gpumemlab.ops import _checks

    asked = []
    monkeypatch.setattr(host, "pointer_attributes", lambda p: asked.append(p) or dict(memory="device", device=1))
    x = SimpleNamespace(__cuda_array_interface__={"data": (0xBEEF00, False), "shape": (4,), "typestr": "<f4"})
    empty = SimpleNamespace(__cuda_array_interface__={"data": (0, False), "shape": (0,), "typestr": "<f4"})
    assert _checks.device_of(x) == 1 and _checks.device_of(empty) is None and asked == [0xBEEF00]


def test_a_numpy_array_reaches_the_function_and_its_own_error(devices):
    np = pytest.importorskip("numpy")
    op, calls, switches = devices
    assert op(np.ones(3)) == 0 and switches == []


def test_the_public_functions_are_wrapped():
    import gpumemlab
    from gpumemlab.ops import sample

    for name in ("matmul", "sum", "mean", "transpose", "copy", "sample2d"):
        assert getattr(gpumemlab, name).__wrapped__.__name__ == name
    assert sample.ArrayImage.__init__.__wrapped__.__name__ == "__init__"

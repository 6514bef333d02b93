"""Library calls on arrays of device 1 while device 0 is current: the right answer, computed on device 1, and the
process still works on both devices afterwards; arrays of two devices are refused in one line. Each shape is called
on device 0 first, so that every cached plan, workspace and kernel opt-in made there is met again on device 1.
Skips with fewer than two GPUs."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import UsageError

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp(two_gpus):
    return two_gpus


def _random(cp, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return cp.asarray((rng.random(shape) + 0.5).astype(dtype))


def _on(cp, device, fn):
    with cp.cuda.Device(device):
        return fn()


def _matmul_bound(a, b):
    """|C - C64| <= gamma_k |A| |B| element by element (k products summed in float32)."""
    k = a.shape[1]
    u = np.finfo(np.float32).eps / 2
    return k * u / (1 - k * u) * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


CASES = {
    # name: (inputs (shape, dtype), call, reference on the host)
    "sum_all": ([((1 << 22) + 3, np.float32)], lambda g, x: g.sum(x), lambda x: x.astype(np.float64).sum()),
    "sum_axis0": ([((4099, 3), np.float32)], lambda g, x: g.sum(x, axis=0), lambda x: x.astype(np.float64).sum(0)),
    "mean_axis1": ([((513, 1027), np.float64)], lambda g, x: g.mean(x, axis=1), lambda x: x.mean(1)),
    "transpose": ([((1000, 777), np.float32)], lambda g, x: g.transpose(x), lambda x: x.T),
    "copy": ([((12345,), np.int32)], lambda g, x: g.copy(x), lambda x: x),
    "matmul": ([((1024, 1024), np.float32), ((1024, 1024), np.float32)], lambda g, a, b: g.matmul(a, b),
               lambda a, b: a.astype(np.float64) @ b.astype(np.float64)),
    "gemv": ([((4096, 1024), np.float32), ((1024, 1), np.float32)], lambda g, a, b: g.matmul(a, b),
             lambda a, b: a.astype(np.float64) @ b.astype(np.float64)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_call_on_device_1_arrays_runs_there_with_device_0_current(cp, name):
    import gpumemlab

    specs, call, ref = CASES[name]
    for device in (0, 1):  # device 0 first: its cached plans must not leak into device 1's call
        args = _on(cp, device, lambda: [_random(cp, s, d, i) for i, (s, d) in enumerate(specs)])
        with cp.cuda.Device(0):
            got = call(gpumemlab, *args)
            assert cp.cuda.runtime.getDevice() == 0
        assert got.data.device_id == device
        host = [a.get() for a in args]
        want = ref(*host)
        out = _on(cp, device, lambda: cp.asnumpy(got))
        if name.startswith(("matmul", "gemv")):
            assert np.all(np.abs(out - want) <= _matmul_bound(*host) + 1e-30)
        elif name in ("transpose", "copy"):
            assert np.array_equal(out, want)
        else:
            assert np.allclose(out, want, rtol=1e-5, atol=0)
    # the process still works on both devices
    for device in (0, 1):
        with cp.cuda.Device(device):
            x = cp.arange(1000, dtype=cp.float32)
            assert float(gpumemlab.sum(x)) == 499500.0
            cp.cuda.Device().synchronize()


def test_sample2d_and_array_image_on_device_1(cp):
    import gpumemlab
    from gpumemlab.experiments.texture import reference_sample

    host = (np.random.default_rng(3).random((300, 500)) + 0.5).astype(np.float32)
    rc = (np.random.default_rng(4).random((4096, 2)) * [299, 499]).astype(np.float32)
    img, pts = _on(cp, 1, lambda: (cp.asarray(host), cp.asarray(rc)))
    with cp.cuda.Device(0):
        exact = gpumemlab.sample2d(img, pts, exact=True)
        image = gpumemlab.ArrayImage(img)
        tex = gpumemlab.sample2d(image, pts)
    assert image.device_id == 1 and exact.data.device_id == 1 and tex.data.device_id == 1
    want = reference_sample(host, rc, "clamp", True)
    np.testing.assert_allclose(_on(cp, 1, lambda: cp.asnumpy(exact)), want, rtol=1e-6, atol=1e-6)
    assert np.max(np.abs(_on(cp, 1, lambda: cp.asnumpy(tex)) - want)) < 0.03  # the texture unit's 8-bit weights


@pytest.mark.parametrize("name", ["sum", "matmul", "copy"])
def test_arrays_of_two_devices_are_refused_in_one_line(cp, name):
    import gpumemlab

    a = _on(cp, 0, lambda: cp.ones((64, 64), cp.float32))
    b = _on(cp, 1, lambda: cp.ones((64, 64), cp.float32))
    with pytest.raises(UsageError, match=r"^arrays on devices 0, 1: pass arrays of one device"):
        if name == "sum":
            gpumemlab.sum(a, out=_on(cp, 1, lambda: cp.empty((), cp.float32)))
        elif name == "matmul":
            gpumemlab.matmul(a, b)
        else:
            gpumemlab.copy(a, out=b)
    with cp.cuda.Device(0):
        assert float(gpumemlab.sum(a)) == 4096.0


def test_persist_l2_refuses_an_array_of_another_device(cp):
    import gpumemlab

    b = _on(cp, 1, lambda: cp.ones(1024, cp.float32))
    with cp.cuda.Device(0), pytest.raises(UsageError, match=r"^array: on device 1 while device 0 is current"):
        gpumemlab.persist_l2(b)

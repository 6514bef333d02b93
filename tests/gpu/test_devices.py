"""Library calls on arrays of device 1 while device 0 is current: the right answer, computed on device 1, and the
process still works on both devices afterwards; arrays of two devices are refused in one line. Each shape is called
on device 0 first, so that every cached plan, workspace and kernel opt-in made there is met again on device 1.
Skips with fewer than two GPUs."""

from __future__ import annotations

import _checks as C
import numpy as np
import pytest

from gpumemlab.errors import UsageError

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp(two_gpus):
    return two_gpus


def _random(cp, shape, dtype, seed):
    from gpumemlab.bench.verify import random_nonzero

    return cp.asarray(random_nonzero(shape, dtype, np.random.default_rng(seed)))  # mixed signs: no term can hide


def _on(cp, device, fn):
    with cp.cuda.Device(device):
        return fn()


CASES = {
    # name: (inputs (shape, dtype), call, check of the result against the host inputs: tests/gpu/_checks.py)
    "sum_all": ([((1 << 22) + 3, np.float32)], lambda g, x: g.sum(x), lambda got, x: C.expect_sum(got, x)),
    "sum_axis0": ([((4099, 3), np.float32)], lambda g, x: g.sum(x, axis=0),
                  lambda got, x: C.expect_sum(got, x, axis=0)),
    "mean_axis1": ([((513, 1027), np.float64)], lambda g, x: g.mean(x, axis=1),
                   lambda got, x: C.expect_sum(got, x, axis=1, mean=True)),
    "transpose": ([((1000, 777), np.float32)], lambda g, x: g.transpose(x), lambda got, x: C.expect_equal(got, x.T)),
    "copy": ([((12345,), np.int32)], lambda g, x: g.copy(x), lambda got, x: C.expect_equal(got, x)),
    "matmul": ([((1024, 1024), np.float32), ((1024, 1024), np.float32)], lambda g, a, b: g.matmul(a, b),
               lambda got, a, b: C.expect_matmul(got, a, b)),
    "gemv": ([((4096, 1024), np.float32), ((1024, 1), np.float32)], lambda g, a, b: g.matmul(a, b),
             lambda got, a, b: C.expect_matmul(got, a, b)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_call_on_device_1_arrays_runs_there_with_device_0_current(cp, name):
    import gpumemlab

    specs, call, check = CASES[name]
    for device in (0, 1):  # device 0 first: its cached plans must not leak into device 1's call
        args = _on(cp, device, lambda: [_random(cp, s, d, i) for i, (s, d) in enumerate(specs)])
        with cp.cuda.Device(0):
            got = call(gpumemlab, *args)
            assert cp.cuda.runtime.getDevice() == 0
        assert got.data.device_id == device
        host = [a.get() for a in args]
        check(_on(cp, device, lambda: cp.asnumpy(got)), *host)
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
    C.expect_texture_sample(_on(cp, 1, lambda: cp.asnumpy(tex)), host, rc, "clamp", True, "texture on device 1")


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

"""Keep intermediates on the device (seed 003, 9.1; seed 004): a four-step pipeline whose intermediates round-trip
through the host after every step, one whose low-parallelism step (a prefix sum) runs on the CPU, and one that keeps
everything on the GPU with one copy in and one out. Host clock: the host's work and its waits are the point."""

from __future__ import annotations

import numpy as np

from ..errors import VerificationError
from ..gpu import host
from ._cite import field, q, sentence
from ._declare import Case, Claim, Experiment, seed
from ._transfers import MIB

VARIANTS = ("round trip after every step", "prefix sum on the CPU", "kept on the device")


def steps_gpu(xp, a):
    """The pipeline's four steps with the array module ``xp`` (NumPy or CuPy): scale, root, prefix sum, normalize."""
    a = a * 2.0 + 1.0
    a = xp.sqrt(a)
    a = xp.cumsum(a)
    return a / a[-1]


def cases(session, params):
    import cupy

    n = (params["mib"] if not session.quick else min(params["mib"], 16)) * MIB // 8
    n = session.fit_elements(n, 8 * 4, "device_resident")
    x_dev = cupy.random.default_rng(session.seed).random(n) + 0.5
    with host.host_array(n, np.float64) as xin, host.host_array(n, np.float64) as xout:
        x, out = xin.array, xout.array
        x[:] = x_dev.get()
        want = steps_gpu(np, x.astype(np.float64))
        a = cupy.empty(n, np.float64)

        def to_device(src):
            host.copy_async(a, src)

        def to_host():
            host.copy_async(out, a)
            cupy.cuda.get_current_stream().synchronize()

        def round_trip():
            src = x
            for step in (lambda v: v * 2.0 + 1.0, cupy.sqrt, cupy.cumsum, lambda v: v / v[-1]):
                to_device(src)
                a[...] = step(a)
                to_host()
                src = out

        def cpu_scan():
            to_device(x)
            a[...] = cupy.sqrt(a * 2.0 + 1.0)
            to_host()
            np.cumsum(out, out=out)  # the low-parallelism step on the CPU
            to_device(out)
            a[...] = a / a[-1]
            to_host()

        def resident():
            to_device(x)
            a[...] = steps_gpu(cupy, a)
            to_host()

        for variant, run in zip(VARIANTS, (round_trip, cpu_scan, resident)):
            def check(run=run, variant=variant):
                out.fill(np.nan)
                run()
                if not np.allclose(out, want, rtol=1e-7, atol=0):  # two prefix sums of float64, another order
                    raise VerificationError(f"{variant}: the pipeline's output differs from NumPy's")
            transfers = {VARIANTS[0]: 8, VARIANTS[1]: 4, VARIANTS[2]: 2}[variant]
            mechanism = "CE + SM kernels" + (" + CPU" if run is cpu_scan else "")
            yield Case(variant, run, check, params=dict(n=n, mib=8 * n / MIB), reads=8 * n, writes=8 * n,
                       ceiling=None, cold_l2=False, clock="host", naive=variant == VARIANTS[0],
                       extra=dict(transfers=transfers, mechanism=mechanism))


def findings(records):
    rs = {r.variant: r for r in records}
    if all(v in rs for v in VARIANTS):
        kept = rs[VARIANTS[2]]
        for v in VARIANTS[:2]:
            r = rs[v]
            yield sentence(f"{v}: ", q(field(r, "time_s", "median") * 1e3, ".1f"), " ms with ",
                           q(field(r, "extra", "transfers"), ".0f"), " transfers = ",
                           q(field(r, "time_s", "median") / field(kept, "time_s", "median"), ".1f"),
                           "x the pipeline kept on the device (", q(field(kept, "time_s", "median") * 1e3, ".1f"),
                           " ms, ", q(field(kept, "extra", "transfers"), ".0f"), " transfers)")


EXPERIMENT = Experiment(
    name="device_resident",
    title="Intermediates kept on the device vs round trips through the host",
    claims=(Claim("Minimize data transfers between the host and the device, even if that means running kernels on "
                  "the GPU that show no speedup over the host CPU. Intermediate data structures should be created "
                  "in device memory, operated on by the device, and destroyed without ever being mapped by the host "
                  "or copied to host memory.", seed("003", "9.1, data transfer between host and device")),
            Claim("Minimize memory transfers between the host and device.",
                  seed("004", "'Minimize memory transfers between the host and device'"))),
    cases=cases,
    params=dict(mib=256),
    naive=VARIANTS[0],
    modern_note="A PCIe or C2C link moves tens of GB/s against the GPU's few TB/s: each round trip of an "
                "intermediate costs far more than the step itself, and a prefix sum, the low-parallelism step "
                "here, is still faster on the GPU once its data is there.",
    findings=findings,
    order=212,
)

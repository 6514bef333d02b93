"""Zero copy: a kernel reading mapped pinned host memory in place vs an explicit H2D copy and the same kernel,
for a read-once coalesced kernel (the seed's good case) and a kernel that reads every element several times
(its bad case); for the read-once kernel also the staged pipeline zero copy would replace (chunks copied and
processed on STAGED_STREAMS streams, seed 003 9.1.2); UVA: cudaPointerGetAttributes on every kind of pointer, and
cudaMemcpyDefault. Bandwidth counts each input byte once (each output once), however often the kernel re-reads it."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np

from ..bench.verify import check_equal_device, device_random_nonzero
from ..gpu import host, runtime
from ..kernels import blocks_for
from ..kernels import host as K
from ._cite import field, q, sentence
from ._declare import Case, Check, Claim, Experiment, Plot, seed
from ._transfers import MIB, require_equal

BLOCK = 256
STAGED_STREAMS = 4
SCALE = 2.0  # a power of two: a * x is exact in float32, so the check is exact


def expected_pointers() -> dict:
    """What cudaPointerGetAttributes must say for each kind of pointer under UVA."""
    return dict(pageable="unregistered", pinned="host", registered="host", mapped="host",
                mapped_device_pointer="host", device="device")


def pointer_report(ptrs: dict) -> dict:
    """The attributes of each named address, its expected memory type, and whether host == device address."""
    want = expected_pointers()
    out = {}
    for name, ptr in ptrs.items():
        a = host.pointer_attributes(ptr)
        out[name] = dict(a, expected=want[name], ok=a["memory"] == want[name],
                         same_address=a["device_pointer"] == a["host_pointer"] if a["host_pointer"] else None)
    return out


def cases(session, params):
    import cupy

    if not runtime.device_info()["can_map_host_memory"]:
        return
    n = (params["mib"] if not session.quick else min(params["mib"], 32)) * MIB // 4
    n = session.fit_elements(n, 12, "zero_copy")
    n -= n % (4 * BLOCK * STAGED_STREAMS)
    n4 = n // 4
    with ExitStack() as stack:
        x_dev = device_random_nonzero(n, np.float32, session.seed)
        mapped = stack.enter_context(host.host_array(n, np.float32, "mapped"))
        pinned = stack.enter_context(host.host_array(n, np.float32, "pinned"))
        for buf in (mapped, pinned):
            host.copy_async(buf.array, x_dev)
        a_dev, out = cupy.empty_like(x_dev), cupy.empty_like(x_dev)
        grid = min(blocks_for(n4, BLOCK), 32 * session.sm_count)
        scale = runtime.get_kernel(K.SCALE_VEC4)
        reread = runtime.get_kernel(K.REREAD_SUM)
        for passes in params["passes"]:
            shift = n4 // passes
            if passes == 1:
                def kernel(src):
                    runtime.launch(scale, grid, BLOCK, out, src, np.float32(SCALE), np.int64(n4))
                want = SCALE * x_dev
            else:
                def kernel(src, passes=passes, shift=shift):
                    runtime.launch(reread, grid, BLOCK, out, src, passes, np.int64(shift), np.int64(n4))
                want = _reread_reference(x_dev, passes, shift)
            common = dict(passes=passes, mib=4 * n / MIB)
            moved = dict(reads=4 * n, writes=4 * n)  # the algorithm's bytes: re-reads are the kernel's choice

            def explicit(kernel=kernel):
                host.copy_async(a_dev, pinned.array)
                kernel(a_dev)
            yield Case("copy + kernel", explicit, Check(out, want), params=common, ceiling=None, cold_l2=False,
                       extra=dict(mechanism="CE copy, then kernel on device memory"), **moved)
            yield Case("zero copy (mapped)", lambda kernel=kernel: kernel(np.uint64(mapped.device_ptr)), Check(out, want),
                       params=common, ceiling=None, cold_l2=False,
                       extra=dict(mechanism="SM: kernel loads over PCIe"), **moved)
            yield Case("kernel on device data", lambda kernel=kernel: kernel(x_dev), Check(out, want),
                       params=common, ceiling=None, cold_l2=False, kind="baseline",
                       extra=dict(mechanism="SM: device memory only"), **moved)
            if passes == 1:
                yield Case(f"staged copy + kernel ({STAGED_STREAMS} streams)",
                           _staged(scale, pinned.array, a_dev, out, n4, session.sm_count), Check(out, want),
                           params=common, ceiling=None, cold_l2=False, **moved,
                           extra=dict(mechanism=f"CE copies overlapped with kernels on {STAGED_STREAMS} streams"))
        yield _uva_case(stack, session, mapped, pinned, x_dev, a_dev)


def _staged(scale, x_host, a_dev, out, n4: int, sm_count: int):
    """The read-once kernel over STAGED_STREAMS chunks, each copied and scaled on its own stream."""
    chunk = n4 // STAGED_STREAMS  # float4s
    grid = min(blocks_for(chunk, BLOCK), 32 * sm_count)

    def run():
        streams = host.side_streams(STAGED_STREAMS)
        host.fork(streams)
        for i, s in enumerate(streams):
            lo, hi = 4 * i * chunk, 4 * (i + 1) * chunk

            def stage(lo=lo, hi=hi):
                host.copy_async(a_dev[lo:hi], x_host[lo:hi])
                runtime.launch(scale, grid, BLOCK, out[lo:hi], a_dev[lo:hi], np.float32(SCALE), np.int64(chunk))
            host.run_on_stream(s, stage)
        host.join(streams)
    return run


def _reread_reference(x_dev, passes: int, shift: int):
    """reread_sum in CuPy: the same float32 additions in the same order, so the check is exact."""
    import cupy

    x4 = x_dev.reshape(-1, 4)
    acc = cupy.zeros_like(x4)
    for p in range(passes):
        acc += cupy.roll(x4, -p * shift, axis=0)
    return acc.ravel()


def _uva_case(stack, session, mapped, pinned, x_dev, a_dev):
    """cudaMemcpyDefault from the mapped buffer's host address (UVA finds the direction), with every pointer
    kind's cudaPointerGetAttributes checked against the expected memory type."""
    pageable = np.array(pinned.array[:1024])
    registered = np.ones(1 << 16, np.float32)
    stack.enter_context(host.register(registered, mapped=True))
    extra = dict(mechanism="CE", copy_kind="cudaMemcpyDefault")

    def check():
        ptrs = dict(pageable=pageable, pinned=pinned, registered=registered, mapped=mapped,
                    mapped_device_pointer=mapped.device_ptr, device=x_dev)
        report = pointer_report(ptrs)
        extra["pointers"] = report
        for name, r in report.items():
            require_equal(r["memory"], r["expected"], f"cudaPointerGetAttributes({name})")
        a_dev.fill(np.nan)
        host.copy_async(a_dev, mapped)
        check_equal_device(a_dev, x_dev, what="cudaMemcpyDefault H2D")

    return Case("cudaMemcpyDefault H2D", lambda: host.copy_async(a_dev, mapped), check,
                params=dict(passes=0, mib=mapped.nbytes / MIB), reads=mapped.nbytes, ceiling=None, cold_l2=False,
                extra=extra)


def findings(records):
    for passes in sorted({r.params["passes"] for r in records if r.params["passes"]}):
        g = {r.variant: r for r in records if r.params["passes"] == passes}
        zc, cp = (field(g[v], "time_s", "median") for v in ("zero copy (mapped)", "copy + kernel"))
        what = (("read once",) if passes == 1 else
                ("each element read ", q(field(g["copy + kernel"], "params", "passes"), ".0f"), " times"))
        yield sentence(*what, ": zero copy ", q(zc * 1e3, ".2f"), " ms vs copy + kernel ", q(cp * 1e3, ".2f"), " ms (",
                       q(cp / zc, ".2f"), "x); the kernel on device data alone takes ",
                       q(field(g["kernel on device data"], "time_s", "median") * 1e3, ".2f"), " ms")
        staged = next((r for v, r in g.items() if v.startswith("staged copy + kernel")), None)
        if staged is not None:
            st = field(staged, "time_s", "median")
            yield sentence(*what, f": the staged pipeline zero copy would replace ({staged.variant}) ",
                           q(st * 1e3, ".2f"), " ms, zero copy ", q(st / zc, ".2f"), "x its speed")
    uva = next((r for r in records if r.variant == "cudaMemcpyDefault H2D"), None)
    if uva is not None and "pointers" in uva.extra:
        ptrs = uva.extra["pointers"]
        yield sentence("cudaPointerGetAttributes: " + ", ".join(f"{k} -> {v['memory']}" for k, v in ptrs.items()))
        yield sentence("under UVA the device address equals the host address for " +
                       (", ".join(k for k, v in ptrs.items() if v["same_address"]) or "no host allocation") +
                       "; it differs for " + (", ".join(k for k, v in ptrs.items() if v["same_address"] is False)
                                              or "none"))


EXPERIMENT = Experiment(
    name="zero_copy",
    title="Zero copy (mapped pinned memory) vs copy + kernel; UVA pointer attributes",
    claims=(
        Claim("Zero copy lets kernels access mapped pinned host memory directly (cudaHostAlloc with "
              "cudaHostAllocMapped, cudaHostGetDevicePointer). On discrete GPUs mapped memory should be read or "
              "written only once, with coalesced accesses; it overlaps the transfer with the kernel without streams. "
              "Every repeated access crosses PCIe again, so cache re-read data in device memory.",
              seed("003", "9.1.3, zero copy")),
        Claim("Under UVA, cudaPointerGetAttributes tells which memory a pointer is in; cudaHostAlloc memory has the "
              "same host and device address, while memory pinned later with cudaHostRegister keeps a different "
              "device address (cudaHostGetDevicePointer).", seed("003", "9.1.4, unified virtual addressing")),
    ),
    cases=cases,
    params=dict(mib=256, passes=[1, 8]),
    group_by=("passes",),
    modern_note="Systems that can use the host address for registered memory "
                "(cudaDevAttrCanUseHostPointerForRegisteredMem) give registered memory the same address too.",
    plot=Plot(x="passes", y="median_s", series="variant", title="zero_copy: time (s) vs reads per element"),
    findings=findings,
    requires=lambda info: None if info.get("can_map_host_memory") else "the GPU cannot map host memory",
    order=230,
)

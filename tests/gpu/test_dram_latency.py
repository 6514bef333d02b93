"""The latency chase on the GPU: the chain is one random cycle through every line, the chase ends where the host
says, and the ladder climbs from an L1-sized chain to a DRAM-sized one."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    from gpumemlab.gpu import runtime

    runtime.ensure_device()
    return cupy


@pytest.mark.parametrize("nbytes", [4096, 1 << 20, (3 << 20) + 640])
def test_the_chain_is_one_cycle_through_every_line(cp, nbytes):
    from gpumemlab.experiments.dram_latency import chain
    from gpumemlab.kernels.latency import LINE_BYTES

    nxt, slots, order = chain(nbytes, 5)
    host, stride = nxt.get(), LINE_BYTES // 4
    seen, i = set(), 0
    for _ in range(slots):
        assert i % stride == 0 and i not in seen
        seen.add(i)
        i = int(host[i])
    assert i == 0 and len(seen) == slots == nbytes // LINE_BYTES


@pytest.mark.parametrize("load", ["ld.global.ca", "ld.global.cg"])
def test_the_chase_ends_where_the_host_says(cp, load):
    from gpumemlab.experiments.dram_latency import chain, expected_end
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels.latency import CHASE

    nxt, slots, order = chain(1 << 20, 9)
    out, origin = cp.full(1, 0xFFFFFFFF, cp.uint32), cp.zeros(1, cp.uint32)
    kernel = runtime.get_kernel(CHASE[load])
    for steps in (1, slots - 1, slots, 3 * slots + 7):
        out.fill(0xFFFFFFFF)
        runtime.launch(kernel, 1, 1, out, nxt, origin, np.int32(steps))
        assert int(out.get()[0]) == expected_end(order, steps)
    out.fill(0)  # start == out: two launches of 100 steps stand where one of 200 does
    for _ in range(2):
        runtime.launch(kernel, 1, 1, out, nxt, out, np.int32(100))
    assert int(out.get()[0]) == expected_end(order, 200)


def test_a_dram_sized_chain_is_slower_per_load_than_an_l1_sized_one(cp):
    from gpumemlab.experiments.dram_latency import chain
    from gpumemlab.gpu import runtime
    from gpumemlab.kernels.latency import CHASE

    out = cp.zeros(1, cp.uint32)
    kernel = runtime.get_kernel(CHASE["ld.global.ca"])
    times = {}
    for nbytes in (16 << 10, 4 * runtime.device_info()["l2_bytes"]):
        nxt, _, _ = chain(nbytes, 3)
        out.fill(0)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        runtime.launch(kernel, 1, 1, out, nxt, out, np.int32(4096))  # warm the small chain into L1
        start.record()
        runtime.launch(kernel, 1, 1, out, nxt, out, np.int32(4096))  # the large one goes on to lines not yet read
        end.record()
        end.synchronize()
        times[nbytes] = cp.cuda.get_elapsed_time(start, end)
    small, large = times.values()
    assert large > 3 * small, times

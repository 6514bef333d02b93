"""`gpumemlab occupancy --kernel`: the kernel's static shared memory (from its ptxas report) counts, and --smem adds
dynamic shared memory to it; blocks per SM are recomputed here from the SM's shared memory (cc 9.0: 228 KiB per SM,
1 KiB reserved per block, 128-byte units)."""

from __future__ import annotations

import json

import pytest

KIB = 1024
SM90_SHARED, RESERVED = 228 * KIB, KIB


def blocks_by_shared(smem: int) -> int:
    return SM90_SHARED // (-(-(smem + RESERVED) // 128) * 128)


@pytest.fixture
def kernel_with(monkeypatch):
    """kernel_with(shared_bytes, registers): `--kernel k` reports those resources (no compiler needed)."""
    import gpumemlab.gpu.compile as compile_

    def use(shared_bytes: int, registers: int = 32):
        usage = dict(name="k", registers=registers, shared_bytes=shared_bytes, barriers=1, arch="sm_90")
        monkeypatch.setattr(compile_, "kernel_resources", lambda name, cc: dict(usage))
    return use


@pytest.mark.parametrize("static, dynamic, blocks, pct, limiter", [
    (32 * KIB, 0, 6, 75.0, ["shared_memory"]),        # 6 x 33 KiB fit in 228 KiB: not the 8 blocks of 64 warps
    (32 * KIB, 16 * KIB, 4, 50.0, ["shared_memory"]),  # 48 KiB + 1 KiB reserved per block
    (0, 32 * KIB, 6, 75.0, ["shared_memory"]),        # dynamic alone counts the same
    (0, 0, 8, 100.0, ["warps", "registers"]),          # no shared memory: 8 blocks of 8 warps
])
def test_static_and_dynamic_shared_memory_both_limit_blocks(run_cli, kernel_with, static, dynamic, blocks, pct,
                                                            limiter):
    kernel_with(static)
    code, out, err = run_cli("occupancy", "--threads", "256", "--kernel", "k", "--smem", str(dynamic), "--cc", "9.0",
                             "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["smem"] == static + dynamic and r["kernel"]["shared_bytes"] == static
    if static + dynamic:
        assert r["limits"]["shared_memory"] == blocks_by_shared(static + dynamic) == blocks
    assert (r["blocks_per_sm"], r["occupancy_pct"], r["limiters"]) == (blocks, pct, limiter)


def test_static_shared_memory_is_named_in_the_text_output(run_cli, kernel_with):
    kernel_with(32 * KIB)
    code, out, _ = run_cli("occupancy", "--threads", "256", "--kernel", "k", "--cc", "9.0")
    assert code == 0
    assert out.splitlines()[0] == "k: 256 threads (8 warps), 32 registers/thread, 32768 B shared/block on cc 9.0"
    assert "  active warps         48 of 64  (75.0% occupancy)" in out.splitlines()


def test_a_built_in_32_kib_static_shared_kernel_is_not_at_full_occupancy(run_cli):
    """bank_stride<1> declares 32 KiB of static shared memory (kernels/banks.cu): compiled with NVRTC here."""
    pytest.importorskip("cuda.core")
    from gpumemlab.gpu.compile import nvrtc_version

    try:
        nvrtc_version()
    except Exception as exc:  # noqa: BLE001 - no NVRTC library on this machine
        pytest.skip(f"NVRTC unavailable: {exc}")
    code, out, err = run_cli("occupancy", "--threads", "256", "--kernel", "bank_stride<1>", "--cc", "9.0", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["kernel"]["shared_bytes"] == 32 * KIB == r["smem"]
    assert r["limits"]["shared_memory"] == blocks_by_shared(32 * KIB) == 6
    assert r["blocks_per_sm"] <= 6 and r["occupancy_pct"] <= 75.0
    code, out, err = run_cli("occupancy", "--threads", "256", "--kernel", "bank_stride<1>", "--smem", "16384",
                             "--cc", "9.0", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["smem"] == 48 * KIB and r["limits"]["shared_memory"] == 4 and r["occupancy_pct"] <= 50.0

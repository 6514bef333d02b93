"""Several GPUs without a GPU: stream_map's devices checks, ordinal checks, the NVLink ceiling from NVML answers, and
the p2p and two-GPU stream_map findings on stand-in records (quoted honestly, as tests/test_findings_cite.py asks)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from gpumemlab.bench import nvml
from gpumemlab.errors import UsageError
from gpumemlab.experiments import registry
from gpumemlab.gpu import runtime
from gpumemlab.ops import stream_map as sm
from test_findings_cite import _rec, problems, stream_map_records


def double(c):
    return c * 2


@pytest.mark.parametrize("devices,words", [
    (0, "devices must be a non-empty list of GPU ordinals, got 0"),
    ([], "devices must be a non-empty list of GPU ordinals, got \\[\\]"),
    ([0, "1"], "devices must be GPU ordinals \\(ints >= 0\\), got '1' in \\[0, '1'\\]"),
    ([0, True], "got True"),
    ([0, -1], "got -1"),
    ([1, 1], "devices must be distinct, got \\[1, 1\\]"),
])
def test_bad_devices_are_one_line_before_any_gpu_work(devices, words):
    with pytest.raises(UsageError, match=words):
        sm.stream_map(double, np.ones(8, np.float32), devices=devices)


def test_a_device_past_the_count_is_named(monkeypatch):
    monkeypatch.setattr(runtime, "ensure_device", lambda: None)
    monkeypatch.setattr(runtime, "device_count", lambda: 2)
    with pytest.raises(UsageError, match=r"no GPU 2 \(devices \[0, 2\]\): this machine has 2 \(ordinals 0..1\)"):
        sm.stream_map(double, np.ones(8, np.float32), devices=[0, 2], streams=2, chunk_bytes=16, workers=1)


@pytest.mark.parametrize("ordinal", [2, -1, "1", True, 1.0])
def test_check_ordinal_refuses_what_is_no_gpu(monkeypatch, ordinal):
    monkeypatch.setattr(runtime, "device_count", lambda: 2)
    with pytest.raises(UsageError, match="this machine has 2 GPUs"):
        runtime.check_ordinal(ordinal)
    assert runtime.check_ordinal(1) == 1


def test_p2p_is_skipped_with_a_note_on_one_gpu():
    requires = registry()["p2p"].requires
    assert requires(dict(device_count=1)) == "needs two GPUs: this machine has 1"
    assert requires(dict(device_count=2)) is None


# ---------------------------------------------------------------- NVLink from NVML

def fake_nvml(remote_type: int, remote_bus: str = "00000000:2A:00.0", speed_mbps: int | None = 26562, links=18):
    class Value:
        nvmlReturn = 0 if speed_mbps else 3
        value = types.SimpleNamespace(uiVal=speed_mbps or 0)

    nv = types.SimpleNamespace(
        NVML_NVLINK_MAX_LINKS=18, NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON=90,
        nvmlDeviceGetNvLinkState=lambda dev, link: int(link < links),
        nvmlDeviceGetNvLinkVersion=lambda dev, link: 6,  # NVML_NVLINK_VERSION_4_0
        nvmlDeviceGetNvLinkRemoteDeviceType=lambda dev, link: remote_type,
        nvmlDeviceGetNvLinkRemotePciInfo_v2=lambda dev, link: types.SimpleNamespace(busId=remote_bus),
        nvmlDeviceGetFieldValues=lambda dev, fields: [Value()])
    return nv


@pytest.mark.parametrize("remote_type,speed,gbps", [
    (nvml.REMOTE_SWITCH, 26562, 18 * 26.562),   # NVSwitch board: every link counts for every pair
    (nvml.REMOTE_GPU, None, 18 * 26.5625),      # direct links to the peer; no speed field: the version's rate
])
def test_pair_link_counts_links_times_their_rate(monkeypatch, remote_type, speed, gbps):
    nv = fake_nvml(remote_type, speed_mbps=speed)
    buses = {0: "0000:1B:00.0", 1: "0000:2A:00.0"}
    monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: (nv, ordinal))
    monkeypatch.setattr(runtime, "device_info", lambda ordinal=None: dict(pci_bus_id=buses[ordinal]))
    # device 1's links point back at device 0
    link = nvml.pair_link(0, 1) if remote_type == nvml.REMOTE_SWITCH else None
    if link is None:
        nv0, nv1 = fake_nvml(remote_type, "00000000:2A:00.0", speed), fake_nvml(remote_type, "00000000:1B:00.0", speed)
        monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: ((nv0, nv1)[ordinal], ordinal))
        link = nvml.pair_link(0, 1)
    assert link["type"] == "NVLink" and link["links"] == 18 and link["gbps"] == pytest.approx(gbps)
    assert link["version"] == "4.0" and "18 active NVLink 4.0 links" in link["how"]


def test_pair_link_without_nvlink_to_the_peer_is_pcie(monkeypatch):
    nv = fake_nvml(nvml.REMOTE_GPU, remote_bus="00000000:99:00.0")  # links to some other GPU
    monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: (nv, ordinal))
    monkeypatch.setattr(runtime, "device_info", lambda ordinal=None: dict(pci_bus_id=f"0000:{ordinal}A:00.0"))
    assert nvml.pair_link(0, 1)["type"] == "PCIe"
    monkeypatch.setattr(nvml, "_handle", lambda ordinal=None: None)
    assert nvml.pair_link(0, 1) == dict(type="unknown", links=0, version=None, gbps=None, how="NVML not available")


# ---------------------------------------------------------------- findings on stand-in records

GIB = 1 << 30


def p2p_records(link_gbps=478.125, back=False, bulk=False) -> list:
    """p2p records at 4 MiB and 1 GiB as a two-H200 run might leave them (``back``: with the 1->0 copies alone,
    which runs before that direction was added do not have)."""
    recs = []
    link = dict(type="NVLink", links=18, version="4.0", gbps=link_gbps)

    def add(variant, nbytes, direction, access, mechanism, gbps, **more):
        moved = nbytes * (2 if direction == "both" else 1)
        r = _rec("p2p", variant, dict(bytes=nbytes, size="", direction=direction, access=access, mechanism=mechanism,
                                      **more), moved / gbps / 1e9, moved)
        r.extra["link"] = dict(link)
        recs.append(r)
    for nbytes, scale in ((4 << 20, 0.5), (GIB, 1.0)):
        add("CE peer on", nbytes, "0->1", "on", "CE", 395 * scale)
        add("CE peer on", nbytes, "both", "on", "CE", 783 * scale)
        add("CE peer off", nbytes, "0->1", "off", "CE", 20 * scale)
        add("CE peer off", nbytes, "both", "off", "CE", 30 * scale)
        if back:
            add("CE peer on", nbytes, "1->0", "on", "CE", 390 * scale)
            add("CE peer off", nbytes, "1->0", "off", "CE", 18 * scale)
            add("SM pull x1", nbytes, "1->0", "on", "SM", 366 * scale, unroll=1)
        if bulk:
            add("SM pull bulk", nbytes, "0->1", "on", "SM", 401 * scale, stages=4, chunk_bytes=8192)
            add("SM push bulk", nbytes, "0->1", "on", "SM", 380 * scale, stages=4, chunk_bytes=8192)
        for unroll, rate in ((1, 300), (8, 372)):
            for mode in ("pull", "push"):
                add(f"SM {mode} x{unroll}", nbytes, "0->1", "on", "SM", rate * scale * (1 if mode == "pull" else .9),
                    unroll=unroll)
                add(f"SM {mode} x{unroll}", nbytes, "both", "on", "SM", 2 * rate * scale, unroll=unroll)
        h2d = _rec("p2p", "pinned H2D", dict(bytes=nbytes, size="", direction="H2D", access="host", mechanism="CE"),
                   nbytes / 55e9 / scale, nbytes)
        h2d.kind = "baseline"
        recs.append(h2d)
    for where, ns in (("peer", 1200.0), ("local", 600.0)):
        r = _rec("p2p", f"dependent read, {where}", dict(where=where, steps=4096, chase_kib=4096), ns * 4096e-9, 0)
        r.bytes = r.gbps = None
        r.extra["latency_ns"] = r.median_s / 4096 * 1e9
        recs.append(r)
    return recs


def test_p2p_findings_quote_the_link_the_engines_and_the_latency():
    recs = p2p_records()
    info = registry()["p2p"].describe(recs)
    found = info["findings"]
    assert found[0] == "link: NVLink, 18 links, 478 GB/s per direction (NVML)"
    assert found[1] == ("copy engine (cudaMemcpyPeerAsync), peer access on, 1 GiB: 395.0 GB/s forward (the "
                        "first GPU's memory into the second's) = 83% of the link's per-direction rate (478 GB/s); both at once 783.0 GB/s in total = 82% of the "
                        "link's rate in both directions (956 GB/s); forward reaches 90% of its best (395.0 GB/s) "
                        "from 1 GiB")
    assert found[2] == "best SM copy, forward, 1 GiB: SM pull x8 372.0 GB/s = 0.94x the copy engine"
    assert found[3] == "best SM copy, both at once, 1 GiB: SM pull x8 744.0 GB/s = 0.95x the copy engine"
    assert found[4] == ("peer access off (the driver stages the copy through host memory), 1 GiB: 20.0 GB/s forward "
                        "= 5% of peer access on; both at once 30.0 GB/s in total; pinned H2D of the same "
                        "size: 55.0 GB/s")
    assert found[5].startswith("SM copies with peer access off: not run")
    assert found[6] == ("a dependent small read takes 1200 ns from the peer's memory vs 600 ns from its own: a 4096 KiB "
                        "chase, warm, so the local read is an L2 hit (dram_latency's L2 level, not DRAM), while each "
                        "peer read crosses the link (2.0x)")
    assert all(problems(f, recs, info["claims"]) == [] for f in found)
    assert any(c["seed"] == "003" and "9.1.4" in c["source"] for c in info["claims"])


def test_p2p_findings_give_each_direction_when_the_run_has_both():
    recs = p2p_records(back=True)
    info = registry()["p2p"].describe(recs)
    found = info["findings"]
    assert ("= 83% of the link's per-direction rate (478 GB/s); 390.0 GB/s backward = 82% of the link's per-direction "
            "rate (478 GB/s); both at once") in found[1]
    assert "best SM copy, backward, 1 GiB: SM pull x1 366.0 GB/s = 0.94x the copy engine" in found
    assert any("20.0 GB/s forward = 5% of peer access on; 18.0 GB/s backward; both at once" in f for f in found)
    assert all(problems(f, recs, info["claims"]) == [] for f in found)


def test_p2p_findings_quote_the_bulk_copies_and_rank_them_with_the_sm_copies():
    recs = p2p_records(bulk=True)
    found = registry()["p2p"].describe(recs)["findings"]
    assert found[2] == "best SM copy, forward, 1 GiB: SM pull bulk 401.0 GB/s = 1.02x the copy engine"
    assert found[4] == ("the bulk-copy unit (cp.async.bulk through shared memory, one thread per block), forward, "
                        "1 GiB: pull 401.0 GB/s = 1.02x the copy engine; push 380.0 GB/s = 0.96x the copy engine")
    assert not any("bulk" in f for f in registry()["p2p"].describe(p2p_records())["findings"])


def test_p2p_findings_without_an_nvml_rate_say_so():
    recs = p2p_records(link_gbps=None)
    found = registry()["p2p"].describe(recs)["findings"]
    assert found[0] == "link: NVLink (no NVLink rate from NVML: no ceiling)"
    assert "(the first GPU's memory into the second's) (link rate unknown: NVML gave none); both" in found[1]


def test_stream_map_two_gpu_finding_gives_the_speedup():
    common = dict(gib=1.0, chunk_mib=64, fn="light", route="caller_pinned")
    one = _rec("stream_map", "gpumemlab.stream_map devices", dict(common, gpus=1), 0.20, 2 * GIB)
    two = _rec("stream_map", "gpumemlab.stream_map devices", dict(common, gpus=2), 0.105, 2 * GIB)
    recs = stream_map_records() + [one, two]
    info = registry()["stream_map"].describe(recs)
    line = next(f for f in info["findings"] if "one GPU vs two" in f)
    assert line == ("light fn on one GPU vs two (caller_pinned route, same input, results checked against the same "
                    "reference): 200 ms vs 105 ms, two GPUs 1.90x as fast")
    assert all(problems(f, recs, info["claims"]) == [] for f in info["findings"])
    single = registry()["stream_map"].describe(stream_map_records())["findings"]
    assert [f for f in info["findings"] if "one GPU vs two" not in f] == single  # the one-GPU findings unchanged

#!/usr/bin/env python3
"""One launch of each SM peer copy the p2p experiment times, for Nsight Compute to profile (two GPUs, peer access).

    ncu --clock-control none --kernel-name regex:peer_copy --metrics M,M,... --section WarpStateStats \
        python3 tools/profile_p2p.py [MIB] > ncu.txt 2>&1          (on two GPUs; M: the NVLINK metrics below)
    python3 tools/profile_p2p.py summarize ncu.txt                 (anywhere: the markdown table of the note)

Device 0 runs every kernel: pull (reads device 1's memory, writes its own), push (reads its own, writes device 1's)
and a local copy as the reference, each with 1 and 8 loads in flight per thread, over MIB MiB (default 256) of data,
one warm-up launch first. The results are checked against the source, so a profile of a wrong copy is not read.
"""

from __future__ import annotations

import sys

import numpy as np


CASES = [(unroll, name) for unroll in (1, 8) for name in ("pull", "push", "local")]  # the order main() launches
NVLINK_METRICS = [f"{d}__{m}.sum" for d in ("nvlrx", "nvltx") for m in (
    "bytes", "bytes_data_user", "bytes_data_protocol", "bytes_packet_request", "bytes_packet_response",
    "cycles_active", "cycles_elapsed")] + ["gpu__time_duration.sum"]
UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "cycle": 1, "ns": 1e-9, "us": 1e-6, "ms": 1e-3}


def parse_ncu(text: str) -> list[dict]:
    """Per profiled launch, in order: {metric: value in base units} from ncu's default text output."""
    launches = []
    for line in text.splitlines():
        if line.lstrip().startswith("void peer_copy<"):
            launches.append({})
            continue
        parts = line.split()
        if launches and len(parts) == 3 and parts[1] in UNITS:
            launches[-1][parts[0]] = float(parts[2].replace(",", "")) * UNITS[parts[1]]
    return launches


def summarize(path: str) -> int:
    launches = parse_ncu(open(path).read())
    if len(launches) != 2 * len(CASES):
        print(f"profile_p2p: expected {2 * len(CASES)} profiled launches, found {len(launches)}", file=sys.stderr)
        return 1
    print("| kernel | direction | ncu us | user MB over NVLink | protocol MB (same direction) | protocol share | "
          "other direction MB (protocol only) | link active % | user GB/s under ncu |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (unroll, name), m in zip(CASES, launches[1::2]):  # the second launch of each case: after its warm-up
        side = {"pull": "nvlrx", "push": "nvltx"}.get(name)
        t = m["gpu__time_duration.sum"]
        if side is None:
            print(f"| peer_copy<{unroll}> | local | {t * 1e6:.1f} | 0 | - | - | - | - | - |")
            continue
        other = "nvltx" if side == "nvlrx" else "nvlrx"
        user, proto = m[f"{side}__bytes_data_user.sum"], m[f"{side}__bytes_data_protocol.sum"]
        back = m[f"{other}__bytes.sum"]  # requests (pull) or acknowledgements (push): no user data
        active = m[f"{side}__cycles_active.sum"] / m[f"{side}__cycles_elapsed.sum"]
        print(f"| peer_copy<{unroll}> | {name} | {t * 1e6:.1f} | {user / 1e6:.1f} | {proto / 1e6:.1f} | "
              f"{100 * proto / (user + proto):.1f}% | {back / 1e6:.1f} | {100 * active:.1f} | {user / t / 1e9:.1f} |")
    return 0


def main(argv) -> int:
    if argv[:1] == ["summarize"] and len(argv) == 2:
        return summarize(argv[1])
    import cupy

    from gpumemlab.experiments.p2p import sm_copy
    from gpumemlab.gpu import peer

    nbytes = int(argv[0] if argv else 256) << 20
    if cupy.cuda.runtime.getDeviceCount() < 2:
        print("profile_p2p: needs two GPUs", file=sys.stderr)
        return 2
    n = nbytes // 4
    data = np.random.default_rng(0).integers(1, 2**31 - 1, n, dtype=np.int32)
    with peer.on_device(0):
        local_src, local_dst = cupy.asarray(data), cupy.empty(n, np.int32)
    with peer.on_device(1):
        remote_src, remote_dst = cupy.asarray(data), cupy.empty(n, np.int32)
    before = peer.set_peer_access(0, 1, True)
    try:
        with peer.on_device(0):
            for unroll in (1, 8):
                for name, dst, src in (("pull", local_dst, remote_src), ("push", remote_dst, local_src),
                                       ("local", local_dst, local_src)):
                    with peer.on_device(dst.device.id):  # CuPy fills on the array's own device
                        dst.fill(-1)
                    run = sm_copy(unroll, 0, dst, src, nbytes)
                    run()  # warm-up (module load), then the launch the profile reads
                    run()
                    cupy.cuda.Device(0).synchronize()
                    ok = bool((dst.get() == data).all())
                    print(f"peer_copy<{unroll}> {name}: {'correct' if ok else 'WRONG'}")
                    if not ok:
                        return 1
    finally:
        peer.set_peer_access(0, 1, before)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""stream_map's default route for pageable ``x``: the one ``gpumemlab tune host_route`` measured fastest for this
GPU's name and this host (``kernels/tuned/host_route.json``), read once per process and device."""

from __future__ import annotations

from functools import cache


@cache
def _measured(device_name: str) -> bool | None | str:
    from ..kernels import KERNEL_DIR
    from ..tune.host_route import chosen_register
    from ..tune.table import read_devices

    return chosen_register(read_devices(KERNEL_DIR / "tuned" / "host_route.json", "host_route").get(device_name))


def default_register() -> bool | None | str:
    """``register`` for the current device as measured on this host; "none" where it was not measured."""
    from ..gpu import runtime

    return _measured(runtime.device_info()["name"])

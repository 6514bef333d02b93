"""The privatization family without a GPU: variants and their shared memory, bincount's choices and argument
errors, and the histogram experiment's findings on stand-in records (quoted honestly, tallied per group)."""

from __future__ import annotations

import numpy as np
import pytest

from gpumemlab.errors import InputTypeError, UsageError
from gpumemlab.kernels import histogram as K
from gpumemlab.ops import histogram as H


def test_variants_name_their_instantiation_and_shared_memory():
    assert K.GLOBAL.spec("int32").name == "hist_global<int>"
    assert K.BLOCK_PRIVATE.spec("uint8").name == "hist_private<unsigned char, false, 1>"
    assert K.Variant("warp", True).spec("int16").name == "hist_private<short, true, 8>"
    assert K.Variant("block", True).spec("uint64").name == "hist_private<unsigned long long, false, 2>"
    assert (K.GLOBAL.shared_bytes(4096), K.BLOCK_PRIVATE.shared_bytes(4096), K.WARP_PRIVATE.shared_bytes(4096)) == (
        0, 16384, 8 * 16384)
    assert len(K.KERNELS) == len(set(K.KERNELS)) == 8 * 5


@pytest.mark.parametrize("bins, optin, want", [
    (256, 232448, K.WARP_PRIVATE),        # 8 warps x 256 x 4 B = 8 KiB
    (1536, 232448, K.WARP_PRIVATE),       # exactly 48 KiB
    (1537, 232448, K.BLOCK_PRIVATE),
    (58112, 232448, K.BLOCK_PRIVATE),     # 227 KiB: an H100's largest block
    (58113, 232448, None),
    (12288, 49152, K.BLOCK_PRIVATE), (12289, 49152, None),  # a GPU without the opt-in
])
def test_choose_takes_the_most_private_copy_that_fits(bins, optin, want):
    assert H.choose(bins, optin) == want


@pytest.mark.parametrize("n, bins, vec, resident, want", [
    (1 << 26, 256, 4, 1056, 1056),      # many keys a bin: the resident grid
    (1 << 26, 65536, 1, 1056, 256),     # 2^26 / (4 x 65536): a block adds its whole histogram, give it keys
    (1000, 256, 1, 1056, 1),            # 1000 keys: one block of 256 threads still covers them 4 a thread
    (5000, 16, 4, 1056, 5),             # ceil(5000 / (256 x 4))
    (0, 16, 1, 1056, 1),
])
def test_grid_size(n, bins, vec, resident, want):
    assert H.grid_size(n, bins, vec, resident) == want


@pytest.mark.parametrize("dtype, minlength, want", [
    ("uint8", 0, 256), ("int8", 300, 300), ("bool", 0, 256), ("int32", 0, 1024), ("int64", 5000, 5000),
    ("uint16", 10, 1024)])
def test_first_bins(dtype, minlength, want):
    assert H.first_bins(np.dtype(dtype), minlength) == want


@pytest.mark.parametrize("value, error, text", [
    (-1, UsageError, "minlength: must not be negative, got -1"),
    (None, InputTypeError, "minlength: expected an int >= 0, got None"),
    (True, InputTypeError, "minlength: expected an int >= 0, got True"),
    (2.0, InputTypeError, "minlength: expected an int >= 0, got float"),
    ("3", InputTypeError, "minlength: expected an int >= 0, got str"),
])
def test_minlength_errors(value, error, text):
    with pytest.raises(error) as e:
        H._minlength(value)
    assert str(e.value) == text


def test_minlength_takes_numpy_integers():
    assert H._minlength(np.int64(7)) == 7 and H._minlength(0) == 0


def test_bincount_refuses_a_host_array_in_one_line():
    pytest.importorskip("cupy")
    import gpumemlab

    with pytest.raises(InputTypeError, match=r"^x: a NumPy \(host\) array"):
        gpumemlab.bincount(np.arange(4))


# ---------------------------------------------------------------- the experiment's findings

def stand_in_records():
    from test_findings_cite import _rec

    recs = []
    for dist, times in (("uniform", (2e-3, 1e-3, 1.1e-3)), ("constant", (40e-3, 2e-3, 1e-3))):
        params = dict(bins=256, distribution=dist, n=1 << 26)
        for variant, t, per_sm in zip(K.LADDER, times, (8, 8, 4)):
            recs.append(_rec("histogram", variant.label, params, t, 4 << 26))
            recs[-1].extra.update(blocks_per_sm=per_sm, grid=132 * per_sm)
        lib_params = dict(bins=256, distribution=dist, n=1 << 26)
        recs.append(_rec("histogram", "gpumemlab.bincount", lib_params, 1.5e-3, 4 << 26))
        base = _rec("histogram", "cupy.bincount", lib_params, 3e-3, 4 << 26)
        base.kind = "baseline"
        recs.append(base)
    return recs


def test_findings_quote_the_privatization_gain_per_group():
    from gpumemlab.experiments import registry

    found = registry()["histogram"].describe(stand_in_records())["findings"]
    assert found[0] == ("uniform keys, 256 bins: private per block 2.00x the global atomics (268 vs 134 GB/s of "
                        "keys; 8 vs 8 blocks per SM)")
    assert found[1] == ("uniform keys, 256 bins: private per warp 1.82x the global atomics (244 vs 134 GB/s of "
                        "keys; 4 vs 8 blocks per SM)")
    assert found[2] == "uniform keys, 256 bins: gpumemlab.bincount = 2.00x cupy.bincount (89 GB/s, separate medians)"
    assert found[4] == ("constant keys, 256 bins: private per warp 40.00x the global atomics (268 vs 7 GB/s of "
                        "keys; 4 vs 8 blocks per SM)")


def test_findings_are_honest_on_stand_in_records():
    from test_findings_cite import check_run

    from gpumemlab.bench.records import RunResults

    found = check_run(RunResults(meta={}, device={}, ceilings={}, results=stand_in_records()))
    assert found["histogram"] == (True, [])


def test_the_claim_quotes_seed_000(seed_text):
    from gpumemlab.experiments import registry

    text = " ".join(seed_text["000"].split())
    for part in ("Less contention of writes to a shared copy of data and serialization of atomic updates",
                 "Apply partial updates to a private copy of the data and then updataing the universal copy when done"):
        assert part in text and part in registry()["histogram"].claims[0].text

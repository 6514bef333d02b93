"""runtime.launch's argument packing (no GPU needed): each argument's 8-byte slot, byte for byte, and the
one-line errors raised before any CUDA call."""

import ctypes
import struct

import numpy as np
import pytest

from gpumemlab.gpu import runtime


def _packed(a) -> str:
    fmt, value = runtime._slot(a)
    buf = bytearray(8)
    struct.pack_into("<" + fmt, buf, 0, value)
    return buf.hex()


@pytest.mark.parametrize("arg, slot", [
    (3, "0300000000000000"),                      # Python int -> int32
    (-1, "ffffffff00000000"),
    (True, "0100000000000000"),
    (1.5, "0000c03f00000000"),                    # Python float -> float32
    (np.int32(-2), "feffffff00000000"),
    (np.int64(-5), "fbffffffffffffff"),
    (np.uint64(2**63), "0000000000000080"),
    (np.float32(2.5), "0000204000000000"),
    (np.float64(1.25), "000000000000f43f"),
    (np.int16(-2), "feff000000000000"),           # narrower NumPy scalars: their bytes, zero-padded
    (ctypes.c_int32(7), "0700000000000000"),
    (ctypes.c_double(-0.5), "000000000000e0bf"),
])
def test_each_argument_fills_one_little_endian_slot(arg, slot):
    assert _packed(arg) == slot


class _Cai:
    __cuda_array_interface__ = {"data": (0x7F0012345670, False), "shape": (1,), "typestr": "<f4", "version": 3}


def test_device_arrays_pass_their_address():
    assert _packed(_Cai()) == (0x7F0012345670).to_bytes(8, "little").hex()


def test_bad_arguments_fail_in_one_line_before_any_cuda_call():
    with pytest.raises(OverflowError, match=r"^kernel argument 2147483648 does not fit int32; pass np.int64 "
                                            r"explicitly$"):
        runtime.launch(None, 1, 1, 2**31)
    with pytest.raises(TypeError, match=r"^cannot pass str as a kernel argument$"):
        runtime.launch(None, 1, 1, "x")
    with pytest.raises(TypeError, match="wider than 8 bytes"):
        runtime.launch(None, 1, 1, np.complex128(1))
    with pytest.raises(ValueError, match=r"^launch dimensions must be an int or 1 to 3 ints, got \(1, 1, 1, 1\)$"):
        runtime.launch(None, (1, 1, 1, 1), 1)


def test_dims_accept_ints_numpy_ints_and_short_tuples():
    assert runtime._dims(5) == (5, 1, 1)
    assert runtime._dims(np.int64(7)) == (7, 1, 1)
    assert runtime._dims((2, 3)) == (2, 3, 1)
    assert runtime._dims([np.int32(2), 3, 4]) == (2, 3, 4)


def test_launcher_over_packs_every_argument_and_a_call_rewrites_the_varying_slots(monkeypatch):
    """Launcher.over: each argument's slot as runtime.launch packs it; a call writes arrays' addresses or raw ints
    into the varying positions, in order, ignores extra values, and launches on the current stream."""
    from types import SimpleNamespace

    launched = []
    fake_cu = [lambda *a: launched.append(a) or (0,), 0, lambda: SimpleNamespace(ptr=0x5),
               lambda: 0]
    monkeypatch.setattr(runtime, "_CU", fake_cu)
    monkeypatch.setattr(runtime, "_function", lambda kernel, ordinal: ("func", kernel, ordinal))
    args = (np.uint64(0), 3, _Cai(), np.float32(2.5), np.uint64(0))
    k = runtime.Launcher.over("kernel", (4, 2), 256, args, (0, 4), shmem=96)
    assert bytes(k._values).hex() == "".join(_packed(a) for a in args)
    array = SimpleNamespace(data=SimpleNamespace(ptr=0xABC0))
    k(array, 0x77, 0x99)
    slots = [bytes(k._values)[8 * i:8 * i + 8] for i in range(len(args))]
    assert [int.from_bytes(s, "little") for s in (slots[0], slots[4])] == [0xABC0, 0x77]
    assert slots[1:4] == [bytes.fromhex(_packed(a)) for a in args[1:4]]
    (func, *dims, shmem, stream, params, extra), = launched
    assert (func, dims, shmem, stream, extra) == (("func", "kernel", 0), [4, 2, 1, 256, 1, 1], 96, 0x5, 0)
    assert params == k._params

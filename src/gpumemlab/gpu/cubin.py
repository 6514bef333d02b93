"""Resource usage read from a cubin's ELF sections, for kernels whose ptxas report is missing.

NVRTC's compute cache (CUDA 13) skips ptxas for code it has seen, and with it the ``-v`` report;
the cubin still records registers (EIATTR_REGCOUNT), the stack frame (EIATTR_FRAME_SIZE) and the
static shared memory (the ``.nv.shared.<kernel>`` section). Spill counts are not recorded: a kernel
with no stack frame cannot spill, one with a frame has unknown spills.
"""

from __future__ import annotations

import struct

EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 2, 3, 4
EIATTR_FRAME_SIZE, EIATTR_REGCOUNT = 0x11, 0x2F
SM90_SHARED_RESERVED = 1024  # sm_90 cubins count the per-block reservation in each shared section


def _sections(cubin: bytes) -> dict[str, tuple]:
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not a 64-bit ELF cubin")
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = hdrs[shstrndx][4]
    return {_cstr(cubin, names + h[0]): h for h in hdrs}


def _cstr(buf: bytes, off: int) -> str:
    return buf[off:buf.index(b"\0", off)].decode()


def usage_from_cubin(cubin: bytes) -> dict[str, dict]:
    """{mangled kernel name: {registers, local_bytes, shared_bytes}} from the cubin alone."""
    secs = _sections(cubin)
    symtab, strtab = secs[".symtab"], secs[".strtab"]
    symbols = [_cstr(cubin, strtab[4] + struct.unpack_from("<I", cubin, symtab[4] + i * 24)[0])
               for i in range(symtab[5] // 24)]
    out: dict[str, dict] = {}
    info = secs.get(".nv.info")
    pos, end = (info[4], info[4] + info[5]) if info else (0, 0)
    while pos < end:
        fmt, attr = cubin[pos], cubin[pos + 1]
        pos += 2
        if fmt == EIFMT_SVAL:
            size = struct.unpack_from("<H", cubin, pos)[0]
            pos += 2
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and size == 8:
                sym, value = struct.unpack_from("<II", cubin, pos)
                key = "registers" if attr == EIATTR_REGCOUNT else "local_bytes"
                out.setdefault(symbols[sym], {})[key] = value
            pos += size
        elif fmt == EIFMT_HVAL:
            pos += 2
        elif fmt == EIFMT_BVAL:
            pos += 1
    reserved = SM90_SHARED_RESERVED if ".nv.shared.reserved.0" in secs else 0
    for name, h in secs.items():
        if name.startswith(".nv.shared.") and not name.startswith(".nv.shared.reserved"):
            out.setdefault(name[len(".nv.shared."):], {})["shared_bytes"] = max(0, h[5] - reserved)
    return out


def kernel_code(cubin: bytes) -> dict[str, bytes]:
    """{function symbol: its machine code} from the cubin's ``.text.<symbol>`` sections: the code alone, without the
    line table (``.nv_debug_line_sass``), so that a change of source layout alone leaves it equal."""
    return {name[len(".text."):]: cubin[h[4]:h[4] + h[5]] for name, h in _sections(cubin).items()
            if name.startswith(".text.")}

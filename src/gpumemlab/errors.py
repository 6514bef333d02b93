"""Errors a user can cause. The CLI turns each into one line and exit code 2."""


class GpumemlabError(Exception):
    """Base class for user-facing errors (bad input, no GPU, bad CLI value)."""


class NoDeviceError(GpumemlabError):
    """No usable CUDA device (no driver, no GPU, or the runtime refused)."""


class UsageError(GpumemlabError, ValueError):
    """A bad command-line value or parameter."""


class CompileError(GpumemlabError):
    """NVRTC rejected a kernel source."""


class VerificationError(GpumemlabError):
    """A kernel produced a wrong result (checked before any timing)."""

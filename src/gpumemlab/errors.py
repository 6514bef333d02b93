"""The exceptions gpumemlab raises on purpose: one hierarchy, one line each.

Every class derives from :class:`GpumemlabError`; the CLI prints ``gpumemlab COMMAND: message`` and
exits with the class's ``exit_code``:

* 2, the user can act on it (the default) - :class:`UsageError` (a bad value, argument, path or array;
  subclasses :class:`InputTypeError`, :class:`ArchError`, :class:`ResultsError`), :class:`NoDeviceError`
  (no usable GPU for a command that needs one), :class:`CudaStackError` (an installed CUDA stack that is
  broken) and environment problems such as missing tools;
* 1, a run failed - :class:`CompileError`, :class:`VerificationError`, and a suite run in which an
  experiment failed (its error is recorded in results.json, the other experiments still run).

Library functions (``gpumemlab.matmul/sum/transpose/copy``) raise :class:`InputTypeError` for an
argument of the wrong kind or dtype (it is also a ``TypeError``), :class:`UsageError` for a wrong
shape, layout or value (also a ``ValueError``) and :class:`NoDeviceError` without a GPU. Any other
exception is a bug of ours.
"""


class GpumemlabError(Exception):
    """Base class of every error gpumemlab raises on purpose."""

    exit_code = 2


class NoDeviceError(GpumemlabError):
    """No usable CUDA device (no driver, no GPU, or the runtime refused)."""


class CudaStackError(GpumemlabError):
    """The CUDA packages or the driver are there but broken: an installed package fails to import, or cuInit
    fails for another reason than "no device" (not a NoDeviceError: a broken GPU machine must not pass for a
    machine without a GPU)."""


class UsageError(GpumemlabError, ValueError):
    """A bad command-line value, parameter, path or argument."""


class InputTypeError(UsageError, TypeError):
    """An argument of the wrong kind (a host array, a list) or dtype."""


class ArchError(UsageError):
    """An arch NVRTC cannot compile for, or a kernel that needs a newer arch than the one asked for."""


class ResultsError(UsageError):
    """A results.json that cannot be read: not JSON, another schema version, or a bad record."""


class AnalyzerWarning(UserWarning):
    """A legal but suspicious analyzer input (a negative index, a lane gigabytes from the others, a name defined
    twice, an option that overrides another): the answer is still given; the CLI prints
    ``gpumemlab COMMAND: warning: message`` on stderr and exits 0."""


class CompileError(GpumemlabError):
    """NVRTC rejected a kernel source; ``log`` holds the full compiler output."""

    exit_code = 1

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class VerificationError(GpumemlabError):
    """A kernel produced a wrong result (checked before any timing)."""

    exit_code = 1


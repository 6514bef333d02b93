"""PyTorch baselines on the session's work stream, zero-copy on CuPy arrays (when PyTorch imports)."""

from __future__ import annotations


def torch_module():
    """``torch`` with CUDA, or None (not installed, or no CUDA build)."""
    try:
        import torch
    except Exception:
        return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


def on_work_stream(session, fn):
    """A callable that runs ``fn()`` with PyTorch's current stream set to the session's work stream."""
    torch = torch_module()
    stream = torch.cuda.ExternalStream(session.stream.handle)

    def run():
        with torch.cuda.stream(stream):
            return fn()
    return run


def as_tensor(arr):
    """A zero-copy torch view of a CuPy array (__cuda_array_interface__)."""
    torch = torch_module()
    return torch.as_tensor(arr, device="cuda")


def version() -> str | None:
    torch = torch_module()
    return None if torch is None else str(torch.__version__)

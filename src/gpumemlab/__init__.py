"""gpumemlab: implements, measures and explains CUDA memory-optimization techniques.

Library functions are imported lazily so that the analyzer and ``--help`` never load CUDA:
``gpumemlab.matmul``, ``gpumemlab.sum``, ``gpumemlab.mean``, ``gpumemlab.transpose``, ``gpumemlab.copy``,
``gpumemlab.bincount``, ``gpumemlab.stream_map``, ``gpumemlab.persist_l2``, ``gpumemlab.sample2d`` (``gpumemlab.ArrayImage``).
"""

from importlib import import_module

__version__ = "0.1.0"

# public name -> (module, attribute)
_LAZY = {
    "matmul": ("gpumemlab.ops.matmul", "matmul"),
    "sum": ("gpumemlab.ops.reduce", "sum"),
    "mean": ("gpumemlab.ops.reduce", "mean"),
    "transpose": ("gpumemlab.ops.transpose", "transpose"),
    "copy": ("gpumemlab.ops.copy", "copy"),
    "bincount": ("gpumemlab.ops.histogram", "bincount"),
    "stream_map": ("gpumemlab.ops.stream_map", "stream_map"),
    "persist_l2": ("gpumemlab.ops.l2", "persist_l2"),
    "sample2d": ("gpumemlab.ops.sample", "sample2d"),
    "ArrayImage": ("gpumemlab.ops.sample", "ArrayImage"),
}

__all__ = ["__version__", *_LAZY]  # noqa: PLE0604 - _LAZY's keys are the names


def __getattr__(name):
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = globals()[name] = getattr(import_module(mod), attr)  # later lookups skip this hook (microseconds)
        return value
    raise AttributeError(f"module 'gpumemlab' has no attribute {name!r}")

"""One tuning engine for every kernel family (kernel_tuner's ideas: a declarative space with restrictions and
derived values, every configuration verified against a reference answer before it is timed, a cache of every
measured point) and one per-device JSON format for the results, ``kernels/tuned/<family>.json``.

``space`` (the space as data), ``table`` (the format, its reader and markdown; no GPU), ``families`` (matmul,
reduce; ``l2_family``, persist_l2's settings, adds itself to its registry on import, below), ``engine`` (check in a child process, screen, interleaved final round, choose), ``legacy`` (the
matmul tuner's earlier format). ``ops/`` reads tuned tables through :mod:`gpumemlab.tune.table`.
"""

from . import l2_family  # noqa: E402, F401 (registers the l2_persist family in families.FAMILIES)

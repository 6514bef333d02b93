"""One tuning engine for every kernel family (kernel_tuner's ideas: a declarative space with restrictions and
derived values, every configuration verified against a reference answer before it is timed, a cache of every
measured point) and one per-device JSON format for the results, ``kernels/tuned/<family>.json``.

``space`` (the space as data), ``table`` (the format and its one reader: validation, a device's entry with
same-chip borrowing, shape parsing, markdown; no GPU), ``families`` (what a family declares), ``registry`` (name -> module, one line per family),
``matmul``, ``reduce`` and ``l2_family`` (the families), ``engine`` (check in a child process, screen, interleaved final round,
choose). ``ops/`` reads tuned tables through :mod:`gpumemlab.tune.table`.
"""

"""The tuned families: name -> the module that declares it as ``FAMILY`` (:class:`.families.Family`). A family of
another module is one more line here. Nothing heavy is imported, so the CLI can list the names."""

MODULES = {
    "matmul": "gpumemlab.tune.matmul",
    "reduce": "gpumemlab.tune.reduce",
    "l2_persist": "gpumemlab.tune.l2_family",
    "host_route": "gpumemlab.tune.host_route",
}

"""implausible_ceilings' lines, exactly: every PLAUSIBLE entry is checked even when an earlier one is missing, and
an entry without a unit prints none."""

from gpumemlab.suite.ceilings import implausible_ceilings


def test_a_missing_ceiling_does_not_stop_the_checks_of_the_others():
    c = {"dram_theoretical_gbps": {"value": 1000.0, "unit": "GB/s"}, "read_gbps": {"value": 400.0},  # no copy_gbps
         "sgemm_cublas_gflops": {"value": 2000.0, "unit": "GFLOP/s"}, "fp32_peak_gflops": {"value": 10000.0}}
    assert implausible_ceilings(c) == [
        "read_gbps measured 400  is 0.400x dram_theoretical_gbps (1000), outside 0.5-1.05x",
        "sgemm_cublas_gflops measured 2000 GFLOP/s is 0.200x fp32_peak_gflops (1e+04), outside 0.3-1.05x"]

"""The analyzer checked against Nsight Compute: microkernel cases (``cases``), the child process that ncu
profiles (``child``) and the parent that runs ncu and compares (``runner``)."""

from .cases import ALL_METRICS, KERNEL_PREFIX, METRICS, case_from_lanes, microkernel_source
from .runner import compare, find_ncu, measure, parse_ncu_csv, validate_access

__all__ = ["ALL_METRICS", "KERNEL_PREFIX", "METRICS", "case_from_lanes", "microkernel_source", "compare", "find_ncu",
           "measure", "parse_ncu_csv", "validate_access"]

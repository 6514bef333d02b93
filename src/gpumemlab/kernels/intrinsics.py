"""Instantiations of intrinsics.cu: fast (SFU) and accurate forms of sin, cos, exp and pow."""

from __future__ import annotations

from dataclasses import dataclass

from . import KernelSpec

SRC = "intrinsics.cu"
BLOCK = 256


@dataclass(frozen=True)
class MathFunction:
    name: str       # the library form, e.g. "sinf"
    fn_id: int      # MathFn in intrinsics.cu
    lo: float       # realistic input range [lo, hi) for x
    hi: float
    y_lo: float = 0.0  # second argument range (pow only)
    y_hi: float = 0.0
    guide_ulp: float = 0.0  # the accurate form's documented max error (CUDA Programming Guide, ulp)
    fast_guide: str = ""    # the intrinsic's documented error (CUDA Programming Guide)
    names: tuple = ()       # (accurate, fast) labels where they are not name and __name

    def spec(self, fast: bool) -> KernelSpec:
        return KernelSpec(SRC, f"math_fn<{self.fn_id}, {'true' if fast else 'false'}>")

    def label(self, fast: bool) -> str:
        if self.names:
            return self.names[int(fast)]
        return f"__{self.name[:-1]}f" if fast else self.name


# Ranges: sin/cos over one period (where __sinf's absolute error bound holds), exp over [-10, 10]
# (softmax-like exponents; __expf's ulp error grows with |x|), pow on a positive base with moderate exponents.
FUNCTIONS = [
    MathFunction("sinf", 0, -3.14159265, 3.14159265, guide_ulp=2, fast_guide="abs error <= 2^-21.41 on [-pi, pi]"),
    MathFunction("cosf", 1, -3.14159265, 3.14159265, guide_ulp=2, fast_guide="abs error <= 2^-21.19 on [-pi, pi]"),
    MathFunction("expf", 2, -10.0, 10.0, guide_ulp=2, fast_guide="<= 2 + floor(|1.173 x|) ulp"),
    MathFunction("powf", 3, 0.1, 10.0, -3.0, 3.0, guide_ulp=4, fast_guide="from exp2(y * __log2f(x)); no bound"),
    # sin x + cos x from one call, where the sum lies in [1, 2) (away from its zeros, whose ulp count would explode):
    # each part's error is then at most one ulp of the sum
    MathFunction("sincosf", 4, 0.2, 1.37, guide_ulp=2, fast_guide="as __sinf and __cosf (absolute)",
                 names=("sincosf", "__sincosf")),
    MathFunction("rcpf", 5, 0.001, 1000.0, guide_ulp=0.5, fast_guide="__fdividef(1, x): <= 2 ulp for |x| in "
                 "[2^-126, 2^126]", names=("__frcp_rn", "__fdividef(1, x)")),
]

KERNELS = [f.spec(fast) for f in FUNCTIONS for fast in (False, True)]

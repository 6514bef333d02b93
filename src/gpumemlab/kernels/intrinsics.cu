// Intrinsics family (seed 001, "Runtime Math Library and Intrinsics"): __sinf/__cosf/__expf/__powf map to the
// SFU (fast, lower accuracy) while sinf/cosf/expf/powf compile to several instructions (<= 2-4 ulp).
// The slide's "additional intrinsics": __sincosf against sincosf, and the reciprocal: __frcp_rn (IEEE round to
// nearest, the accurate form, as 1.0f / x) against __fdividef(1.0f, x) (the SFU's approximate reciprocal).
// One kernel, parameterized by function id and FAST; compiled without -use_fast_math so both forms survive.

enum MathFn {
    SIN = 0,
    COS = 1,
    EXP = 2,
    POW = 3,
    SINCOS = 4,
    RCP = 5
};

template <int FN, bool FAST> __device__ __forceinline__ float math_call(float x, float y) {
    if constexpr (FN == SIN) return FAST ? __sinf(x) : sinf(x);
    else if constexpr (FN == COS) return FAST ? __cosf(x) : cosf(x);
    else if constexpr (FN == EXP) return FAST ? __expf(x) : expf(x);
    else if constexpr (FN == POW) return FAST ? __powf(x, y) : powf(x, y);
    else if constexpr (FN == SINCOS) {  // both results used: sin x + cos x (one more rounding)
        float s, c;
        if (FAST) __sincosf(x, &s, &c);
        else sincosf(x, &s, &c);
        return s + c;
    } else return FAST ? __fdividef(1.0f, x) : __frcp_rn(x);
}

// math_fn<FN, FAST>: out[i] = sum_{r < reps} f(x[i] + r * step, y[i]): reps independent evaluations per
// thread (throughput); reps = 1 gives f(x[i], y[i]) itself (accuracy). `r * step` is exact for the
// steps the host uses (powers of two), so the host can reproduce each argument bit for bit.
template <int FN, bool FAST>
__global__ void math_fn(float* __restrict__ out, const float* __restrict__ x, const float* __restrict__ y,
                        float step, int reps, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float a = x[i], b = y[i];
    float acc = 0.0f;
#pragma unroll 8
    for (int r = 0; r < reps; ++r) acc += math_call<FN, FAST>(__fadd_rn(a, __fmul_rn((float)r, step)), b);
    out[i] = acc;
}

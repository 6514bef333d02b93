// Constant-memory kernels (seed 001, memory spaces; seed 003, 9.2 table): a 1-D convolution whose taps
// come from __constant__ memory, a global pointer or __ldg, read by every lane at the same index
// (UNIFORM: the constant cache broadcasts one word per warp) or at a lane-dependent index
// (PER_LANE: 32 distinct words per warp, which the constant cache serializes).

#define MAX_TAPS 256

__constant__ float c_taps[MAX_TAPS];

enum TapSpace {
    CONSTANT = 0,
    GLOBAL = 1,
    LDG = 2
};
enum TapIndex {
    UNIFORM = 0,
    PER_LANE = 1
};

template <int SPACE>
__device__ __forceinline__ float tap(const float* taps, int j) {
    if (SPACE == CONSTANT) return c_taps[j];
    if (SPACE == LDG) return __ldg(taps + j);
    return taps[j];
}

// conv1d<SPACE, INDEX, TAPS>: out[i] = sum_k taps[t(k)] * in[i + k] for i < n (in holds n + TAPS - 1 values);
// UNIFORM: t(k) = k; PER_LANE: t(k) = (k + lane) % TAPS, a lane-rotated filter: the input reads are the same,
// only the tap addresses differ across the warp.
template <int SPACE, int INDEX, int TAPS>
__global__ void conv1d(float* __restrict__ out, const float* __restrict__ in, const float* taps, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int lane = threadIdx.x & 31;
    float acc = 0.0f;
#pragma unroll 8
    for (int k = 0; k < TAPS; ++k) {
        const int t = INDEX == UNIFORM ? k : (k + lane) % TAPS;
        acc = fmaf(tap<SPACE>(taps, t), in[i + k], acc);
    }
    out[i] = acc;
}

// Control-flow family: branch granularity (seed 001, "Control Flow" slide). Each thread runs one of two
// equally long dependent FMA chains; when lanes of one warp take different paths the warp runs both.
// Path A: x = (x * 0.75 + 0.125) * 1.0001; path B: x = x * x * 0.5 + 0.25 (both stay in [0, 1]).

template <int G, bool ALTERNATE> __device__ __forceinline__ bool takes_a() {
    // ALTERNATE=false: the slide's test `threadIdx.x / G > 2` (G=1: `threadIdx.x > 2`; G=32: `/ WARP_SIZE > 2`)
    // ALTERNATE=true: paths alternate every G threads: divergent in every warp while G < 32
    return ALTERNATE ? ((threadIdx.x / G) & 1u) != 0 : threadIdx.x / G > 2;
}

// branch_granularity<G, ALTERNATE>: the branch condition changes every G threads (seed 001 divergence slide)
template <int G, bool ALTERNATE>
__global__ void branch_granularity(float* __restrict__ out, const float* __restrict__ in, int iters, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    if (takes_a<G, ALTERNATE>()) {
        for (int k = 0; k < iters; ++k) x = fmaf(x, 0.75f, 0.125f) * 1.0001f;
    } else {
        for (int k = 0; k < iters; ++k) x = fmaf(x * x, 0.5f, 0.25f);
    }
    out[i] = x;
}

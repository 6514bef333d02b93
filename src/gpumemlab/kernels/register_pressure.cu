// Launch-configuration family (seed 001, "Occupancy and Register Pressure"): a kernel whose registers are
// really needed, to compile with --maxrregcount limits and watch ptxas spill to local memory.

// accumulators<NACC>: grid-stride over `in`; each thread keeps NACC independent running values
// acc[k] = acc[k] * (x/2) + c_k, all live for the whole loop (NACC registers + addressing)
template <int NACC>
__global__ void accumulators(float* __restrict__ out, const float* __restrict__ in, long long n) {
    float acc[NACC];
#pragma unroll
    for (int k = 0; k < NACC; ++k) acc[k] = 0.0f;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float x = 0.5f * in[i];
#pragma unroll
        for (int k = 0; k < NACC; ++k) acc[k] = fmaf(acc[k], x, (float)(k + 1) * (1.0f / NACC));
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NACC; ++k) s += acc[k];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

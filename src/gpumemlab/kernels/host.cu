// Host-side family: kernels that the transfer experiments run next to their copies (seeds 003 and 004).
// Indices are 64-bit; every kernel is grid-stride so any grid covers any size.

// scale_vec4: read-once, coalesced float4 access, out = a * in; the zero-copy good case when `in` is
// mapped host memory: each byte crosses PCIe once (seed 003, 9.1.3 zero copy)
extern "C" __global__ void scale_vec4(float4* __restrict__ out, const float4* __restrict__ in, float a,
                                      long long n4) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += step) {
        float4 v = in[i];
        out[i] = make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
    }
}

// reread_sum: repeated reads, out[i] = sum over p < passes of in[(i + p * shift) mod n4]; every input element
// is read `passes` times: the zero-copy bad case, where each read of mapped memory crosses PCIe again
extern "C" __global__ void reread_sum(float4* __restrict__ out, const float4* __restrict__ in, int passes,
                                      long long shift, long long n4) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += step) {
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        long long j = i;
        for (int p = 0; p < passes; ++p) {
            float4 v = in[j];
            acc.x += v.x;
            acc.y += v.y;
            acc.z += v.z;
            acc.w += v.w;
            j += shift;
            if (j >= n4) j -= n4;
        }
        out[i] = acc;
    }
}

// busy_map: tunable cost per element, x <- fma(x, c, 1 - c) `iters` times, in place; the kernel of the staged
// copy/compute overlap (seed 003, 9.1.2), its time tE set by `iters` (a dependent chain: nothing to fold)
extern "C" __global__ void busy_map(float* __restrict__ a, int iters, float c, long long n) {
    const long long step = (long long)gridDim.x * blockDim.x;
    const float d = 1.0f - c;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float x = a[i];
        for (int k = 0; k < iters; ++k) x = fmaf(x, c, d);
        a[i] = x;
    }
}

// row_scale: one block per row, out[r][c] = 2 * in[r][c] with row starts `*_pitch` elements apart: over a
// cudaMallocPitch array every row starts aligned, over a packed width-1001 array most do not (seed 004)
extern "C" __global__ void row_scale(float* __restrict__ out, const float* __restrict__ in, int cols, int rows,
                                     long long out_pitch, long long in_pitch) {
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* src = in + r * in_pitch;
        float* dst = out + r * out_pitch;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = 2.0f * src[c];
    }
}

// Peer family: copies and reads across GPUs through UVA addresses (seed 003, 9.1.4: UVA makes peer-to-peer
// transfers possible). A kernel runs on one device; either pointer may be the peer's memory once peer access is
// enabled (pull: `src` is the peer's; push: `dst` is). Indices are 64-bit, loops grid-stride.

// peer_copy<UNROLL>: float4 copy with UNROLL independent 16-byte loads in flight per thread, one grid apart, before
// the first store: a remote load takes about a microsecond, so many must be outstanding to fill the link
template <int UNROLL>
__global__ void peer_copy(float4* __restrict__ dst, const float4* __restrict__ src, long long n4) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x + threadIdx.x; base < n4; base += threads * UNROLL) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + u * threads;
            if (i < n4) v[u] = src[i];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + u * threads;
            if (i < n4) dst[i] = v[u];
        }
    }
}

// peer_chase: one thread follows `steps` dependent 4-byte loads (i = next[i]) that bypass L1 (ld.global.cg): the
// latency of a small read, of the peer's memory when `next` is the peer's
extern "C" __global__ void peer_chase(unsigned int* __restrict__ out, const unsigned int* __restrict__ next,
                                      int steps) {
    unsigned int i = 0;
    for (int s = 0; s < steps; ++s) i = __ldcg(next + i);
    *out = i;
}

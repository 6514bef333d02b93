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

#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned shared_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// one bulk (TMA) load of `size` bytes from global memory into shared memory, completing on the stage's mbarrier
__device__ __forceinline__ void bulk_load(void* smem, const char* src, unsigned size, unsigned long long* bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_addr(bar)), "r"(size)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :
                 : "r"(shared_addr(smem)), "l"(src), "r"(size), "r"(shared_addr(bar))
                 : "memory");
}

__device__ __forceinline__ void wait_phase(unsigned long long* bar, unsigned parity) {
    asm volatile(
        "{\n\t.reg .pred ready;\n\twait_again:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 ready, [%0], %1;\n\t"
        "@!ready bra wait_again;\n\t}"
        :
        : "r"(shared_addr(bar)), "r"(parity)
        : "memory");
}
#endif

// peer_bulk<STAGES, CHUNK>: the copy done by the Hopper bulk-copy (TMA) unit instead of the SM's load/store pipes. One
// thread per block streams chunks of CHUNK bytes (block-strided) through STAGES shared-memory buffers: bulk loads keep
// STAGES - 1 chunks in flight while the previous one is bulk-stored. `nbytes` is a multiple of 16 (the unit's
// granule), both pointers 16-byte aligned. Older archs compile an empty body (the experiment runs it on sm_90+ only).
template <int STAGES, int CHUNK>
__global__ void __launch_bounds__(32) peer_bulk(char* __restrict__ dst, const char* __restrict__ src,
                                                long long nbytes) {
#if __CUDA_ARCH__ >= 900
    __shared__ __align__(128) unsigned char buf[STAGES][CHUNK];
    __shared__ __align__(8) unsigned long long bar[STAGES];
    if (threadIdx.x != 0) return;
    const long long chunks = (nbytes + CHUNK - 1) / CHUNK;
    const long long mine = blockIdx.x < chunks ? (chunks - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    for (int s = 0; s < STAGES; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_addr(&bar[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // the inits, visible to the bulk unit
    for (long long k = 0; k < STAGES && k < mine; ++k) {
        const long long off = (blockIdx.x + k * gridDim.x) * CHUNK;
        bulk_load(buf[k], src + off, (unsigned)min((long long)CHUNK, nbytes - off), &bar[k]);
    }
    for (long long k = 0; k < mine; ++k) {
        const int s = (int)(k % STAGES);
        const long long off = (blockIdx.x + k * gridDim.x) * CHUNK;
        const unsigned size = (unsigned)min((long long)CHUNK, nbytes - off);
        wait_phase(&bar[s], (unsigned)((k / STAGES) & 1));
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + off),
                     "r"(shared_addr(buf[s])), "r"(size) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (k + STAGES < mine) {  // refill this stage once its store has read it out of shared memory
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            const long long next = (blockIdx.x + (k + STAGES) * gridDim.x) * CHUNK;
            bulk_load(buf[s], src + next, (unsigned)min((long long)CHUNK, nbytes - next), &bar[s]);
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // every store complete before the kernel ends
#endif
}

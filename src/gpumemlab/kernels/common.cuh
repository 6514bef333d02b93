// Helpers the kernel families share; a family includes it with #include "common.cuh" (kernels.source_text spells
// it out in place before NVRTC compiles the family).
#ifndef GPUMEMLAB_COMMON_CUH
#define GPUMEMLAB_COMMON_CUH

// The 16-byte vector of T: one load or store instruction per thread.
template <typename T> struct Vec16;
template <> struct Vec16<float> { typedef float4 type; };
template <> struct Vec16<double> { typedef double2 type; };
template <> struct Vec16<int> { typedef int4 type; };
template <> struct Vec16<long long> { typedef longlong2 type; };

// A shuffle tree over a full warp, in a fixed order (the same bits every run); lane 0 gets the sum.
template <typename T> __device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// The last-block hand-off of a split launch (the cuda-samples threadFenceReduction ticket), called by every thread
// once its partials are stored: true, in every thread of the block, in the last of the gridDim.y blocks of this
// block of outputs to arrive. atomicInc wraps the counter back to 0 on that last arrival: no reset store, and the
// tickets are all zeros between launches.
__device__ __forceinline__ bool last_split(unsigned* ticket) {
    __shared__ bool last;
    __threadfence();  // this thread's partials are visible device-wide before its block takes a ticket
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) last = atomicInc(ticket, gridDim.y - 1) == gridDim.y - 1;
    __syncthreads();
    if (last) __threadfence();  // the acquire side: the other blocks' partials are read after the ticket
    return last;
}

#endif

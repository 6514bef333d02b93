// Newer idioms: cudaMallocPitch rows reached through a char
// pointer (the CUDA Programming Guide's example), __half / __nv_bfloat16 / half2 elements, a pointer walked by
// `p += blockDim.x`, a templated 16-byte copy, uint4 through __ldg, a shuffle then every other lane storing, global
// atomics. Block 256 unless said; N = 1024, C = 768, n = 1 << 20.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Block (32, 8), pitch 4096 bytes, width = height = 1000: row = devPtr + r * pitch bytes; warp 0 = row 0,
// columns 0..31: row[c] load and store 4 sectors (ideal 4), coalesced.
__global__ void pitched(float* devPtr, size_t pitch, int width, int height) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < height && c < width) {
        float* row = (float*)((char*)devPtr + r * pitch);
        row[c] = row[c] * 2.0f;
    }
}

// 2-byte elements: 32 lanes x 2 bytes = 64 bytes -> 2 sectors (ideal 2), coalesced, for in, b and out.
__global__ void halfs(__half* out, const __half* in, const __nv_bfloat16* b, int n) {
    auto i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half v = in[i];
        float f = __bfloat162float(b[i]);
        out[i] = __hadd(v, __float2half(f));
    }
}

// half2 = 4 bytes: 4 sectors (ideal 4) for both loads of in[i] and the store.
__global__ void half2k(half2* out, const half2* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __hmul2(in[i], in[i]);
}

// p = in + blockIdx.x * n + threadIdx.x, then p += blockDim.x: *p 4 sectors (ideal 4) in all 4 iterations.
__global__ void ptr_walk(float* out, const float* in, int n, int stride) {
    const float* p = in + blockIdx.x * n + threadIdx.x;
    float acc = 0;
    for (int k = 0; k < 4; ++k) { acc += *p; p += blockDim.x; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// vec_copy<float, 4>: i = 4 * global id; int4 through reinterpret_cast: 16 bytes a lane, 512 contiguous bytes
// -> 16 sectors (ideal 16), coalesced, load and store.
template <typename T, int VEC>
__global__ void vec_copy(T* __restrict__ out, const T* __restrict__ in, int n) {
    constexpr int kVec = VEC;
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * kVec;
    if (i + kVec <= n) {
        *reinterpret_cast<int4*>(out + i) = *reinterpret_cast<const int4*>(in + i);
    }
}

// uint4 (16 bytes) through __ldg and a plain store: 16 sectors (ideal 16), coalesced.
__global__ void uint4_half(uint4* out, const uint4* in) {
    unsigned tid = static_cast<unsigned>(threadIdx.x);
    uint4 v = __ldg(in + blockIdx.x * 128 + tid);
    out[blockIdx.x * 128 + tid] = v;
}

// in[threadIdx.x]: 4 sectors. Even lanes store out[threadIdx.x / 2]: 16 lanes, elements 0..15 = 64 bytes ->
// 2 sectors (ideal 2), coalesced.
__global__ void shfl_k(float* out, const float* in) {
    const unsigned lane = threadIdx.x % warpSize;
    float v = in[threadIdx.x];
    v += __shfl_down_sync(0xffffffffu, v, 1);
    __syncwarp();
    if (lane % 2 == 0) out[threadIdx.x / 2] = v;
}

// atomicAdd(sum, ...): all lanes on sum[0]: 1 sector (ideal 1), same address (serialized: not modelled); in[i]: 4.
__global__ void atomics_global(float* sum, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, in[i]);
}

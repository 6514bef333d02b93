// Kernels in the style of llm.c and PyTorch's CUDA code: warp shuffles with lane/warp from shifts and masks,
// float4 through reinterpret_cast, a templated 16-byte Packed128<T>, grid-stride loops, size_t / int64_t index
// math, helpers for the global thread index, __ldg and __restrict__.

#ifdef __CUDACC_RTC__
typedef long long int64_t;  // NVRTC has no <stdint.h>
#else
#include <stdint.h>
#endif


template <class ElementType>
struct alignas(16) Packed128 {
    static constexpr const size_t size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
    __device__ ElementType &operator[](int index) { return payload[index]; }
};

template <class ElementType>
__device__ Packed128<ElementType> load128(const ElementType *address) {
    return Packed128<ElementType>{*reinterpret_cast<const Packed128<ElementType> *>(address)};
}

template <class ElementType>
__device__ void store128(ElementType *target, Packed128<ElementType> value) {
    *reinterpret_cast<Packed128<ElementType> *>(target) = value;
}

typedef Packed128<float> f128;

__device__ __forceinline__ int global_thread_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// residual_forward: block 256, each thread 4 floats (x128): idx = 4 * global id. load128(inp1 + idx): 16 bytes
// per lane, 512 contiguous bytes -> 16 sectors (ideal 16), coalesced; the same for inp2 and store128(out + idx).
__global__ void residual_forward_kernel(float *out, const float *inp1, const float *inp2, int N) {
    int idx = global_thread_id() * f128::size;
    if (idx < N) {
        f128 packed_out;
        f128 packed_inp1 = load128(inp1 + idx);
        f128 packed_inp2 = load128(inp2 + idx);
        for (int k = 0; k < packed_inp1.size; k++) {
            packed_out[k] = packed_inp1[k] + packed_inp2[k];
        }
        store128(out + idx, packed_out);
    }
}

// layernorm_forward, one warp per row (block 128 = 4 warps), C = 768: warp = tid >> 5, lane = tid & 31,
// idx = blockIdx.x * 4 + warp; x = inp + idx * C; x[i] with i = lane (step 32, the same for every lane):
// 32 consecutive floats -> 4 sectors, coalesced. mean[idx] / rstd[idx] by lane 0: 1 sector. out_idx[c]
// store: coalesced, 4 sectors. weight[c] / bias[c] through __ldg: 4 sectors.
__global__ void layernorm_forward_kernel(float *__restrict__ out, float *__restrict__ mean, float *__restrict__ rstd,
                                         const float *__restrict__ inp, const float *__restrict__ weight,
                                         const float *__restrict__ bias, int N, int C) {
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int num_warps = blockDim.x >> 5;
    int idx = blockIdx.x * num_warps + warp;
    if (idx >= N) {
        return;
    }
    const float *x = inp + idx * C;
    float sum = 0.0f;
    for (int i = lane; i < C; i += 32) {
        sum += x[i];
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, offset);
    float m = sum / C;
    if (lane == 0 && mean != nullptr) {
        mean[idx] = m;
    }
    float s = 0.0f;
    if (lane == 0 && rstd != nullptr) {
        rstd[idx] = s;
    }
    float *o = out + idx * C;
    for (int c = lane; c < C; c += 32) {
        float n = s * (__ldcs(x + c) - m);
        __stcs(o + c, n * __ldg(&weight[c]) + __ldg(&bias[c]));
    }
}

// softmax with a shared-memory max per warp, block 256, C = 1024: warpId = threadIdx.x / 32, laneId = % 32.
// x = inp + idx * C, x[i] for i = tid (step blockDim.x): 4 sectors. shared[warpId] store by lanes with
// laneId == 0: 1 lane, 1 wavefront. shared[tid] load for tid < warpsPerBlock (8 lanes of warp 0): 1 wavefront.
// out[idx * C + i]: 4 sectors.
__global__ void softmax_forward_kernel(float *out, const float *inp, int N, int C) {
    extern __shared__ float shared[];
    int idx = blockIdx.x;
    int tid = threadIdx.x;
    int warpId = threadIdx.x / 32;
    int laneId = threadIdx.x % 32;
    int warpsPerBlock = blockDim.x / 32;
    float *maxvals = shared;
    float *sumvals = &shared[warpsPerBlock];
    const float *x = inp + idx * C;
    float maxval = -3.0e38f;
    for (int i = tid; i < C; i += blockDim.x) {
        maxval = fmaxf(maxval, x[i]);
    }
    if (laneId == 0) maxvals[warpId] = maxval;
    __syncthreads();
    if (tid == 0) {
        float val = maxvals[tid];
        for (int i = 1; i < warpsPerBlock; i++) val = fmaxf(val, maxvals[i]);
        maxvals[0] = val;
    }
    __syncthreads();
    if (tid < warpsPerBlock) sumvals[tid] = maxvals[tid];
    for (int i = tid; i < C; i += blockDim.x) {
        out[idx * C + i] = x[i];
    }
}

// gelu with a grid-stride loop over size_t indices and float4 via reinterpret_cast, block 256:
// reinterpret_cast<const float4 *>(inp)[i]: 16 sectors (ideal 16), coalesced; the store alike.
__global__ void gelu_float4(float *out, const float *inp, size_t n4) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (size_t)blockDim.x * gridDim.x) {
        float4 v = reinterpret_cast<const float4 *>(inp)[i];
        v.x = v.x * 0.5f;
        reinterpret_cast<float4 *>(out)[i] = v;
    }
}

// encoder_forward-like with int64_t strides, block 256, C = 768, T = 1024: one thread per float4 chunk of C
// (C4 = 192 per row); idx = global id; bt = idx / C4, c4 = idx % C4; warp 0 (idx 0..31): one row,
// wte_ix[c4] float4 with ix from memory: unknown (value loaded from memory); out_btc: 16 sectors, coalesced;
// wpe_tc (t = bt % T): 16 sectors.
__global__ void encoder_forward_kernel(float4 *out, const int *inp, const float4 *wte, const float4 *wpe, int B,
                                       int T, int C) {
    int C4 = C / 4;
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t N = (int64_t)B * T * C4;
    if (idx < N) {
        int64_t bt = idx / C4;
        int64_t b = bt / T;
        int64_t t = bt % T;
        int64_t c4 = idx % C4;
        int ix = inp[b * T + t];
        float4 w = wte[ix * C4 + c4];
        float4 p = wpe[t * C4 + c4];
        out[b * T * C4 + t * C4 + c4] = make_float4(w.x + p.x, w.y + p.y, w.z + p.z, w.w + p.w);
    }
}

// Column reduction (PyTorch-style sum over dim 0 of a row-major [rows, cols] tensor), block (32, 8):
// col = blockIdx.x * 32 + threadIdx.x, the loop over rows starts at threadIdx.y (step blockDim.y):
// in[row * cols + col]: 32 consecutive floats -> 4 sectors; smem[threadIdx.y][threadIdx.x] store 1 wavefront;
// the final read smem[k][threadIdx.x] by warp 0: 1 wavefront.
__global__ void sum_dim0(float *__restrict__ out, const float *__restrict__ in, int rows, int cols) {
    __shared__ float smem[8][32];
    const int col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.f;
    if (col < cols) {
        for (int row = threadIdx.y; row < rows; row += blockDim.y) acc += in[(size_t)row * cols + col];
    }
    smem[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < 8; ++k) s += smem[k][threadIdx.x];
        out[col] = s;
    }
}

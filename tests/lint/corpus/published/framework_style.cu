// Idioms of the deep-learning frameworks' CUDA code: a functor passed by value to a templated transform, raw dynamic
// shared memory reinterpreted as float, uint3 copies of threadIdx, cooperative groups' grid-stride loop, a tensor
// descriptor passed by value with its sizes and strides in fixed arrays, a per-channel bias over NCHW planes.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

struct Scale {
    float a;
    __device__ float operator()(float x) const { return a * x; }
};

// F = Scale, block 256, n = 2^20: in[i], out[i] -> 4 sectors each.
template <typename F>
__global__ void transform(const float *__restrict__ in, float *__restrict__ out, int n, F f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f(in[i]);
}

// Block 256. s[t.x]: words 0..31 -> 1 wavefront; s[(t.x + 1) % blockDim.x]: words 1..32 -> 1; the global load and
// store: 4 sectors.
__global__ void __launch_bounds__(256) raw_smem(const float *in, float *out) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float *s = reinterpret_cast<float *>(smem_raw);
    const uint3 t = threadIdx;
    s[t.x] = in[blockIdx.x * blockDim.x + t.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t.x] = s[(t.x + 1) % blockDim.x];
}

// Block 256, n = 2^20: grid.thread_rank() is blockIdx.x * 256 + threadIdx.x in block 0 -> in[i], out[i]: 4 sectors.
__global__ void grid_copy(const float *in, float *out, int n) {
    cg::grid_group grid = cg::this_grid();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) out[i] = in[i];
}

struct TensorInfo {
    float *data;
    int sizes[4];
    int strides[4];
    int dims;
};

// A transposed 64 x 64 view (sizes {64, 64}, strides {1, 64}), block 256, n = 4096: lane i reads element
// offset 64 i -> 256 bytes apart: 32 sectors (ideal 4), column-major; out[i]: 4 sectors.
__global__ void strided_copy(TensorInfo src, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int offset = 0, linear = i;
    for (int d = src.dims - 1; d >= 0; --d) {
        int idx = linear % src.sizes[d];
        linear /= src.sizes[d];
        offset += idx * src.strides[d];
    }
    out[i] = src.data[offset];
}

// NCHW bias, C = 64, HW = 4096, block 256, grid (4, 64, 1): block (0, 0, 0) is channel 0. bias[c]: one address ->
// 1 sector, broadcast; p[i] (load and store): 4 sectors.
__global__ void nchw_bias(float *x, const float *bias, int C, int HW) {
    int c = blockIdx.y;
    float *p = x + (size_t)blockIdx.z * C * HW + (size_t)c * HW;
    float b = bias[c];
#pragma unroll 4
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < HW; i += blockDim.x * gridDim.x) p[i] += b;
}

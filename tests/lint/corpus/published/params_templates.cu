// Parameters in structs passed by value, views with a leading dimension and an accessor helper, templated kernels
// with non-type template values (a column sum that gives each thread CPT adjacent columns, as the library's
// sum_cols does), a vector type that depends on T loaded with __ldg, a helper templated on its stride, int64_t and
// size_t index math, and __restrict__ pointers offset once by a helper.
#include <stdint.h>

#define TILE 32

struct SaxpyArgs {
    int n;
    float a;
    const float *x;
    float *y;
};

// size_t grid-stride loop, block 256, args.n = 2^20: x[i], y[i] (load and store): 4 sectors each.
__global__ void saxpy_args(SaxpyArgs args) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)args.n;
         i += (size_t)blockDim.x * gridDim.x)
        args.y[i] = args.a * args.x[i] + args.y[i];
}

struct View2D {
    float *data;
    int rows;
    int cols;
    long ld;
};

__device__ __forceinline__ float *at(View2D v, int r, int c) { return v.data + (size_t)r * v.ld + c; }

// Block (32, 8), v.ld = 1024, v.rows = 1024, v.cols = 1000: warp 0 is row 0, columns 0..31 -> 4 sectors (load and
// store of *at(...)).
__global__ void scale_rows(View2D v, float s) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < v.rows && c < v.cols) *at(v, r, c) *= s;
}

// A thread per row of one column, block 256, col = 5: lanes 4096 bytes apart -> 32 sectors (ideal 4), column-major.
__global__ void scale_col(View2D v, int col, float s) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < v.rows) *at(v, r, col) *= s;
}

// Column sums, T = float, ROWS = 8, CPT = 2, block (32, 8), rows = cols = 1024. in[...] at k = 0: lanes 8 bytes
// apart -> bytes 0..251 -> 8 sectors (ideal 4), strided; out[c0 + k] the same. part[threadIdx.y][threadIdx.x * CPT + k]
// (rows of 64 words) at k = 0: words 0, 2, .., 62 -> each even bank twice: 2 wavefronts (ideal 1), 2-way; the loads
// of part[0][...] and part[y][...] (y = 1: words 64 + 2t) likewise.
template <typename T, int ROWS, int CPT>
__global__ void col_sum_tiled(const T *__restrict__ in, T *__restrict__ out, int rows, int cols) {
    __shared__ T part[ROWS][32 * CPT];
    const int c0 = (blockIdx.x * 32 + threadIdx.x) * CPT;
    T acc[CPT];
#pragma unroll
    for (int k = 0; k < CPT; ++k) acc[k] = T(0);
    for (int r = threadIdx.y; r < rows; r += ROWS) {
#pragma unroll
        for (int k = 0; k < CPT; ++k)
            if (c0 + k < cols) acc[k] += in[(size_t)r * cols + c0 + k];
    }
#pragma unroll
    for (int k = 0; k < CPT; ++k) part[threadIdx.y][threadIdx.x * CPT + k] = acc[k];
    __syncthreads();
    if (threadIdx.y == 0) {
        for (int k = 0; k < CPT; ++k) {
            T s = part[0][threadIdx.x * CPT + k];
            for (int y = 1; y < ROWS; ++y) s += part[y][threadIdx.x * CPT + k];
            if (c0 + k < cols) out[c0 + k] = s;
        }
    }
}

template <typename T> struct Pair;
template <> struct Pair<float> { typedef float2 type; };
template <> struct Pair<int> { typedef int2 type; };

// Pairs copied through Pair<T>::type, T = float (float2), block 256, npairs = 2^20: __ldg of 32 float2 = 256 aligned
// bytes -> 8 sectors (ideal 8), coalesced; the store the same.
template <typename T>
__global__ void copy_pairs(const T *__restrict__ in, T *__restrict__ out, int npairs) {
    typedef typename Pair<T>::type V;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npairs) {
        V v = __ldg(reinterpret_cast<const V *>(in) + i);
        reinterpret_cast<V *>(out)[i] = v;
    }
}

template <int STRIDE>
__device__ __forceinline__ float load_every(const float *__restrict__ p, int i) { return p[i * STRIDE]; }

// A helper templated on its stride, called with <2> and <3>, block 256, n = 2^20: p[i * 2] -> bytes 0..248, 8
// sectors (ideal 4), strided; p[i * 3] -> bytes 0..372, 12 sectors (ideal 4), strided. out[i]: 4 sectors.
__global__ void gather_every(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = load_every<2>(in, i);
        float b = load_every<3>(in, i);
        out[i] = a + b;
    }
}

// Interleaved xyz with int64_t index math, block 256, count not given (the guard holds for both samples):
// xyz[idx * 3 + 1] at bytes 4 + 12k -> 4..375: 12 sectors (ideal 4), strided (load and store).
__global__ void scale_y_component(float *__restrict__ xyz, int64_t count, float s) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) xyz[idx * 3 + 1] *= s;
}

__device__ __forceinline__ size_t tile_origin(int bx, int by, int ld) {
    return (size_t)by * TILE * ld + (size_t)bx * TILE;
}

// A 32 x 32 tile per block, block (32, 8), ld = 1000: src and dst offset by the helper; row r = threadIdx.y of block
// 0 starts at byte 4000 r (a multiple of 32) -> 4 sectors (ideal 4) for the load and the store.
__global__ void copy_tiles(const float *__restrict__ in, float *__restrict__ out, int ld) {
    const float *__restrict__ src = in + tile_origin(blockIdx.x, blockIdx.y, ld);
    float *__restrict__ dst = out + tile_origin(blockIdx.x, blockIdx.y, ld);
#pragma unroll
    for (int r = threadIdx.y; r < TILE; r += 8)
        dst[r * ld + threadIdx.x] = src[r * ld + threadIdx.x];
}

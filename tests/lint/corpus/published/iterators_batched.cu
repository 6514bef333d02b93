// Styles of library and application code: a tile iterator struct advanced in a loop, a warp-per-row softmax
// backward with xor shuffles on a 2-D grid, a gather by an index made from blockIdx, a batched GEMV with a batch
// stride, a padded shared box blur, a copy of halves through int4, a predicated iterator, one-lane halo loads.
#include <cuda_fp16.h>

struct TileIterator {
    const float *ptr;
    int stride;
    __device__ float load(int col) const { return ptr[col]; }
    __device__ void advance() { ptr += stride; }
};

// Block 128, it.stride = 1024, rows = 8: it.load(c) reads 32 consecutive floats of one row each step -> 4 sectors
// (ideal 4); out[c]: 4 sectors.
__global__ void tile_iterator_sum(TileIterator it, float *out, int rows) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) {
        acc += it.load(c);
        it.advance();
    }
    out[c] = acc;
}

// Block (32, 4), cols = 1024: one warp per row, lane walks the row with step 32. dy, y and dx: 32 consecutive floats
// of one row -> 4 sectors each (ideal 4).
__global__ void softmax_backward_rows(const float *dy, const float *y, float *dx, int cols) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int lane = threadIdx.x;
    const float *dy_row = dy + (size_t)row * cols;
    const float *y_row = y + (size_t)row * cols;
    float dot = 0.0f;
    for (int c = lane; c < cols; c += 32) dot += dy_row[c] * y_row[c];
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    for (int c = lane; c < cols; c += 32) dx[(size_t)row * cols + c] = y_row[c] * (dy_row[c] - dot);
}

// Block 256, nblocks = 64: block b reads block (b * 5) % 64 of src; 256 floats per block keep every warp's 32
// consecutive floats in 128 aligned bytes -> 4 sectors (ideal 4) for the gather and the store.
__global__ void block_permute(const float *src, float *dst, int nblocks) {
    int from = (blockIdx.x * 5) % nblocks;
    dst[blockIdx.x * blockDim.x + threadIdx.x] = src[from * blockDim.x + threadIdx.x];
}

// Block 256, grid (M / 256, batch), M = 4096, K = 512, batch_stride = M * K: thread = row, rows K floats apart.
// A[...]: 2048 bytes between lanes -> 32 sectors (ideal 4), column-major. x[...]: one address -> 1 sector, broadcast.
// y[...]: 4 sectors.
__global__ void batched_gemv(const float *A, const float *x, float *y, int M, int K, long batch_stride) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    const float *Ab = A + b * batch_stride;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += Ab[(size_t)row * K + k] * x[(size_t)b * K + k];
    y[(size_t)b * M + row] = acc;
}

#define BW 32
#define BH 8
// Block (32, 8), width = 1024: warp 0 is ty = 0. tile rows are BW + 3 = 35 floats; the warp's 32 consecutive
// floats of one tile row lie in 32 banks -> 1 wavefront, conflict-free, for the store and every tap.
// in[...] and out[...]: 32 consecutive floats of one image row -> 4 sectors.
__global__ void box_blur_padded(const float *__restrict__ in, float *__restrict__ out, int width) {
    __shared__ float tile[BH + 2][BW + 3];
    int tx = threadIdx.x, ty = threadIdx.y;
    int gx = blockIdx.x * BW + tx;
    int gy = blockIdx.y * BH + ty;
    tile[ty + 1][tx + 1] = in[gy * width + gx];
    __syncthreads();
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s += tile[ty + 1 + dy][tx + 1 + dx];
    out[gy * width + gx] = s * (1.0f / 9.0f);
}

// Block 256, n = 2^20 halves: lane i moves 16 bytes (8 halves) -> 512 bytes per warp = 16 sectors (ideal 16).
__global__ void copy_half_int4(const __half *in, __half *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 8) reinterpret_cast<int4 *>(out)[i] = reinterpret_cast<const int4 *>(in)[i];
}

// A predicated iterator: loads guarded by col < extent, advanced by its operator++ in the loop's step.
struct PredicatedIterator {
    const float *ptr;
    int stride;
    int extent;
    int col;
    __device__ bool valid() const { return col < extent; }
    __device__ float load() const { return valid() ? ptr[col] : 0.0f; }
    __device__ PredicatedIterator &operator++() {
        ptr += stride;
        return *this;
    }
};

// Block 128, it.stride = it.extent = 1000, rows = 8: warp 0 has columns 0..31, all valid. Row r starts 4000 r
// bytes in, a multiple of 32, so the 128 bytes of each step are 4 whole sectors (ideal 4); out[it.col]: 4 sectors.
__global__ void predicated_iterator_sum(PredicatedIterator it, float *out, int rows) {
    it.col = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r, ++it) acc += it.load();
    if (it.valid()) out[it.col] = acc;
}

// Block 32, width = 1024: in[gx] and out[gx] -> 4 sectors; the halo loads have one active lane -> 1 sector (ideal
// 1). t[...]: 32 consecutive words or one word -> 1 wavefront, conflict-free.
__global__ void halo_row(const float *__restrict__ in, float *out, int width) {
    __shared__ float t[34];
    int tx = threadIdx.x;
    int gx = blockIdx.x * 32 + tx;
    t[tx + 1] = in[gx];
    if (tx == 0) t[0] = in[max(gx - 1, 0)];
    if (tx == 31) t[33] = in[min(gx + 1, width - 1)];
    __syncthreads();
    out[gx] = t[tx] + t[tx + 1] + t[tx + 2];
}

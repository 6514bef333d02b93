// __constant__ tables and atomics as real kernels use them: a separable filter's taps (cuda-samples
// convolutionSeparable style), per-channel normalization with the channel's mean and scale in constant memory
// (interleaved HWC pixels and planar NCHW), a column sum by global atomics, a block sum through a shared
// accumulator, a histogram of data-dependent bins and a float atomicMax written with atomicCAS.
#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
#define NUM_BINS 64

__constant__ float c_Kernel[KERNEL_LENGTH];
__constant__ float c_mean[3];
__constant__ float c_inv_std[3];

// Rows pass, block 256, width = 4096 (a row of the image per blockIdx.y). At j = -KERNEL_RADIUS (the first
// iteration): c_Kernel[KERNEL_RADIUS - j] = c_Kernel[16], one word for the whole warp -> 1 read per request (ideal
// 1), broadcast. src[row + x + j]: the guard x + j >= 0 leaves out lanes 0..7 of warp 0 at j = -8, so warp 1 is
// the analyzed one: x = 32..63, floats 24..55 -> bytes 96..223, 32-byte aligned: 4 sectors (ideal 4), coalesced.
// dst[row + x]: 4 sectors.
__global__ void convolution_rows(float *dst, const float *src, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * width;
    float sum = 0;
#pragma unroll
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
        if (x + j >= 0 && x + j < width) sum += c_Kernel[KERNEL_RADIUS - j] * src[row + x + j];
    if (x < width) dst[row + x] = sum;
}

// Interleaved RGB (HWC), block 256, n = 3 * 2^20: c = i % 3 takes 3 values in every warp -> c_mean[c] and
// c_inv_std[c] read 3 distinct words: 3 serialized reads per request (ideal 1), serialized. The same lanes in global
// memory: floats 0..2, 12 bytes -> 1 sector. in[i], out[i]: 4 sectors.
__global__ void normalize_hwc(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = i % 3;
        out[i] = (in[i] - c_mean[c]) * c_inv_std[c];
    }
}

// Planar NCHW, block 256, HW = 4096, n = 3 * 4096: c = (i / HW) % 3 is the same for a warp (32 divides HW) ->
// 1 read per request, broadcast.
__global__ void normalize_nchw(const float *in, float *out, int n, int HW) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = (i / HW) % 3;
        out[i] = (in[i] - c_mean[c]) * c_inv_std[c];
    }
}

// Column sums, block 32 x 8, cols = 1024: warp 0 is ty = 0, tx = 0..31. a[row * cols + col]: 4 sectors.
// atomicAdd(&colsum[col], ...): lanes update floats 0..31 -> 4 sectors (ideal 4) as a store, coalesced, no two
// lanes on one address.
__global__ void col_sum_atomic(const float *a, float *colsum, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) atomicAdd(&colsum[col], a[row * cols + col]);
}

// Block sum through a shared accumulator, block 256, n = 2^20: s_sum = 0 by thread 0 (1 lane: 1 wavefront);
// atomicAdd(&s_sum, in[i]): every lane on one word -> 1 wavefront (ideal 1), same address (the 32 updates are
// serialized by the atomic unit: not modelled); in[i]: 4 sectors; s_sum read by thread 0: 1 wavefront;
// atomicAdd(total, s_sum) by thread 0: 1 sector (ideal 1), coalesced.
__global__ void block_sum_shared_atomic(const float *in, float *total, int n) {
    __shared__ float s_sum;
    if (threadIdx.x == 0) s_sum = 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&s_sum, in[i]);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(total, s_sum);
}

// Histogram of data-dependent bins, block 256, n = 2^20: the bin is loaded -> both atomics unknown, the reason names
// the load. s_hist[t] = 0 and the merge's s_hist[t] read (t < 64: warps 0, 1): 1 wavefront; data[i]: 4 sectors;
// atomicAdd(&hist[t], ...): uints 0..31 -> 4 sectors, coalesced.
__global__ void histogram_bins(const int *data, unsigned int *hist, int n) {
    __shared__ unsigned int s_hist[NUM_BINS];
    int t = threadIdx.x;
    if (t < NUM_BINS) s_hist[t] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) atomicAdd(&s_hist[data[i] % NUM_BINS], 1u);
    __syncthreads();
    if (t < NUM_BINS) atomicAdd(&hist[t], s_hist[t]);
}

// atomicMax of floats by compare-and-swap, block 256, n = 2^20: every lane's block maximum at
// out[blockIdx.x]: the load *addr and atomicCAS(addr, ...) are one address for the warp -> 1 sector (ideal 1);
// the atomic: same address (serialized in L2: not modelled); in[i]: 4 sectors.
__global__ void max_cas(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    int *addr = (int *)&out[blockIdx.x];
    int old = *addr;
    int assumed = old;
    old = atomicCAS(addr, assumed, __float_as_int(fmaxf(v, __int_as_float(assumed))));
}

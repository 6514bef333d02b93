// A 1-D block-tiled SGEMM in the style of the public step-by-step SGEMM tutorials, a bitonic sort in shared memory,
// max pooling over a grid-stride macro loop, a batched strided scale with its sizes in a struct's arrays, a bilinear
// upsample (indices from floating point), a double-buffered stage toggled with buf ^= 1, and a warp-per-row GEMV
// with float4 loads.
#include <float.h>
#include <math.h>

#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// M = N = K = 1024, block BM * BN / TM = 512. Warp 0: threadIdx.x 0..31. As[innerRowA * BK + innerColA] = word t ->
// 1 wavefront; A[innerRowA * K + innerColA]: rows 0..3, 8 floats each (32 aligned bytes) -> 4 sectors (ideal 4).
// Bs[innerRowB * BN + innerColB] (innerRowB = 0): words 0..31 -> 1; B[innerColB]: 4 sectors. Bs[dotIdx * BN +
// threadCol]: words 0..31 -> 1. As[(threadRow * TM + resIdx) * BK + dotIdx], threadRow = 0 for the warp: one word ->
// 1 wavefront, broadcast. C[(threadRow * TM + resIdx) * N + threadCol]: 4 sectors.
__global__ void sgemm_blocktile_1d(int M, int N, int K, const float *A, const float *B, float *C) {
    const int cRow = blockIdx.y;
    const int cCol = blockIdx.x;
    const int threadCol = threadIdx.x % BN;
    const int threadRow = threadIdx.x / BN;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    A += cRow * BM * K;
    B += cCol * BN;
    C += cRow * BM * N + cCol * BN;
    const int innerColA = threadIdx.x % BK;
    const int innerRowA = threadIdx.x / BK;
    const int innerColB = threadIdx.x % BN;
    const int innerRowB = threadIdx.x / BN;
    float threadResults[TM] = {0.0f};
    for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
        As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
        Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
            float tmpB = Bs[dotIdx * BN + threadCol];
            for (int resIdx = 0; resIdx < TM; ++resIdx)
                threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
        }
        __syncthreads();
    }
    for (int resIdx = 0; resIdx < TM; ++resIdx)
        C[(threadRow * TM + resIdx) * N + threadCol] = threadResults[resIdx];
}

// Bitonic sort of blockDim.x = 512 floats in dynamic shared memory. values[tid], shared[tid]: 4 sectors, 1 wavefront.
// First step (k = 2, j = 1): ixj = tid ^ 1 > tid for the 16 even lanes of warp 0: shared[tid] words 0, 2, .., 30 and
// shared[ixj] words 1, 3, .., 31 -> 1 wavefront each. The swap depends on the values compared: unknown.
__global__ void bitonic_sort_shared(float *values) {
    extern __shared__ float shared[];
    const unsigned int tid = threadIdx.x;
    shared[tid] = values[tid];
    __syncthreads();
    for (unsigned int k = 2; k <= blockDim.x; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = tid ^ j;
            if (ixj > tid) {
                float a = shared[tid];
                float b = shared[ixj];
                bool up = (tid & k) == 0;
                if ((a > b) == up) {
                    shared[tid] = b;
                    shared[ixj] = a;
                }
            }
            __syncthreads();
        }
    }
    values[tid] = shared[tid];
}

// 2 x 2 max pooling, stride 2, of 16 channels of 64 x 64 into 32 x 32, block 256 (4 blocks: a step of 1024).
// Warp 0: index 0..31 -> pw 0..31, ph 0, c 0: slice[h * width + w] at h = 0, w = 2 pw -> bytes 8 pw -> 8 sectors
// (ideal 4), strided. The second read is under a comparison with loaded data: unknown. top_data[index]: 4 sectors.
__global__ void max_pool_forward(const int nthreads, const float *bottom_data, const int channels, const int height,
                                 const int width, const int pooled_height, const int pooled_width, const int kernel_h,
                                 const int kernel_w, const int stride_h, const int stride_w, float *top_data) {
    CUDA_KERNEL_LOOP(index, nthreads) {
        const int pw = index % pooled_width;
        const int ph = (index / pooled_width) % pooled_height;
        const int c = (index / pooled_width / pooled_height) % channels;
        const int n = index / pooled_width / pooled_height / channels;
        int hstart = ph * stride_h;
        int wstart = pw * stride_w;
        const int hend = min(hstart + kernel_h, height);
        const int wend = min(wstart + kernel_w, width);
        float maxval = -FLT_MAX;
        const float *slice = bottom_data + (n * channels + c) * height * width;
        for (int h = hstart; h < hend; ++h) {
            for (int w = wstart; w < wend; ++w) {
                if (slice[h * width + w] > maxval) {
                    maxval = slice[h * width + w];
                }
            }
        }
        top_data[index] = maxval;
    }
}

// Bilinear upsampling, block (32, 8), out_w = out_h = 2048: the source coordinates come from floating-point math, so
// every in[...] is unknown; out[y * out_w + x]: 4 sectors.
__global__ void upsample_bilinear(const float *__restrict__ in, float *__restrict__ out, int in_w, int in_h, int out_w,
                                  int out_h, float scale_x, float scale_y) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= out_h) return;
    float fx = (x + 0.5f) * scale_x - 0.5f;
    float fy = (y + 0.5f) * scale_y - 0.5f;
    int x0 = max(0, (int)floorf(fx));
    int y0 = max(0, (int)floorf(fy));
    int x1 = min(x0 + 1, in_w - 1);
    int y1 = min(y0 + 1, in_h - 1);
    float ax = fx - x0, ay = fy - y0;
    float top = (1.f - ax) * in[y0 * in_w + x0] + ax * in[y0 * in_w + x1];
    float bot = (1.f - ax) * in[y1 * in_w + x0] + ax * in[y1 * in_w + x1];
    out[y * out_w + x] = (1.f - ay) * top + ay * bot;
}

// A row of `tiles` tiles of 256 floats staged through stage[2][256], block 256, tiles = 8. stage[buf][threadIdx.x],
// stage[buf ^ 1][threadIdx.x]: words t and 256 + t -> 1 wavefront; stage[buf][(threadIdx.x + 1) % blockDim.x]:
// words 1..32 -> 1 (after the loop, 7 toggles: buf = 1, words 257..288 -> 1). row[...]: 4 sectors; out: 4.
__global__ void double_buffered_sum(const float *__restrict__ in, float *__restrict__ out, int tiles) {
    __shared__ float stage[2][256];
    int buf = 0;
    const float *row = in + (size_t)blockIdx.x * tiles * blockDim.x;
    stage[buf][threadIdx.x] = row[threadIdx.x];
    float acc = 0.f;
    for (int t = 1; t < tiles; ++t) {
        __syncthreads();
        stage[buf ^ 1][threadIdx.x] = row[t * blockDim.x + threadIdx.x];
        acc += stage[buf][(threadIdx.x + 1) % blockDim.x];
        buf ^= 1;
    }
    __syncthreads();
    acc += stage[buf][(threadIdx.x + 1) % blockDim.x];
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// GEMV, a warp per row, rows = 4096, cols = 1024, block 256: a4[c] and __ldg(&x4[c]) at c = lane: 32 float4 = 512
// aligned bytes -> 16 sectors (ideal 16). y[warp] by lane 0: 1 sector.
__global__ void gemv_warp_row_vec4(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y,
                                   int rows, int cols) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= rows) return;
    const float4 *a4 = reinterpret_cast<const float4 *>(A + (size_t)warp * cols);
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float sum = 0.f;
    for (int c = lane; c < cols / 4; c += 32) {
        float4 a = a4[c];
        float4 b = __ldg(&x4[c]);
        sum += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
    sum = warp_reduce_sum(sum);
    if (lane == 0) y[warp] = sum;
}

// A 16-byte store written in PTX (as libraries do to force one vector instruction), block 256: st.global.v4.f32 at
// out + 4 * i -> 32 lanes x 16 bytes = 512 aligned bytes -> 16 sectors (ideal 16). in4[i]: 16 sectors.
__device__ __forceinline__ void st_global_v4(float *p, float4 v) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}

__global__ void copy_ptx_v4(const float4 *__restrict__ in4, float *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    st_global_v4(out + 4 * i, in4[i]);
}

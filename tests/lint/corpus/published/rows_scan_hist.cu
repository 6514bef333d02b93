// Row-wise softmax and layernorm with warp shuffles, a histogram with shared-memory atomics and a work-efficient
// scan with the conflict-free padding macros of the well-known GPU Gems chapter.
#include <math.h>
#include <float.h>

#define NUM_BINS 256
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

// Softmax, one warp per row of C = 768 floats, block 256 (8 rows per block), N = 4096. Warp 0: row 0; lane-strided
// loops: x[c] and y[c] at c = lane -> 4 sectors (ideal 4) for every load and store.
__global__ void softmax_warp(float *__restrict__ out, const float *__restrict__ inp, int N, int C) {
    int warps_per_block = blockDim.x / 32;
    int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= N) return;
    const float *x = inp + (size_t)row * C;
    float *y = out + (size_t)row * C;
    float maxval = -INFINITY;
    for (int c = lane; c < C; c += 32) maxval = fmaxf(maxval, x[c]);
    maxval = warp_max(maxval);
    float sum = 0.f;
    for (int c = lane; c < C; c += 32) {
        float e = expf(x[c] - maxval);
        y[c] = e;
        sum += e;
    }
    sum = warp_sum(sum);
    float inv = 1.f / sum;
    for (int c = lane; c < C; c += 32) y[c] *= inv;
}

// Layernorm, a block of 256 per row of C = 768. x[i], gamma[i], beta[i], out[...]: 4 sectors each. Warp partials in
// shared memory: s_part[wid], s_part_sq[wid] by lane 0 only -> 1 lane, 1 wavefront; s_part[lane], s_part_sq[lane]
// read by lanes 0..7 of warp 0 (the 8 warps) -> 1 wavefront. s_mean (a __shared__ scalar): stored by lane 0 of
// warp 0 (1 wavefront), read by every thread -> one word for the warp, 1 wavefront, broadcast. s_rstd the same.
__global__ void layernorm_block(float *__restrict__ out, const float *__restrict__ inp,
                                const float *__restrict__ gamma, const float *__restrict__ beta, int C) {
    __shared__ float s_part[32];
    __shared__ float s_part_sq[32];
    __shared__ float s_mean;
    __shared__ float s_rstd;
    const float *x = inp + (size_t)blockIdx.x * C;
    int lane = threadIdx.x & 31;
    int wid = threadIdx.x >> 5;
    float sum = 0.f, sq = 0.f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        float v = x[i];
        sum += v;
        sq += v * v;
    }
    sum = warp_sum(sum);
    sq = warp_sum(sq);
    if (lane == 0) {
        s_part[wid] = sum;
        s_part_sq[wid] = sq;
    }
    __syncthreads();
    if (wid == 0) {
        sum = lane < (blockDim.x >> 5) ? s_part[lane] : 0.f;
        sq = lane < (blockDim.x >> 5) ? s_part_sq[lane] : 0.f;
        sum = warp_sum(sum);
        sq = warp_sum(sq);
        if (lane == 0) {
            s_mean = sum / C;
            s_rstd = rsqrtf(sq / C - (sum / C) * (sum / C) + 1e-5f);
        }
    }
    __syncthreads();
    float mean = s_mean, rstd = s_rstd;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        out[(size_t)blockIdx.x * C + i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}

// 256-bin histogram of bytes, block 256, n = 2^20. s_hist[b] = 0: 1 wavefront. data[i]: 32 bytes -> 1 sector
// (ideal 1), coalesced. The shared atomic's bin is a loaded byte: unknown. The global atomic on hist[b], b = t:
// uints 0..31 -> 4 sectors (ideal 4) as a store, coalesced; s_hist[b] read for it: 1 wavefront.
__global__ void histogram_shared(const unsigned char *__restrict__ data, unsigned int *__restrict__ hist, size_t n) {
    __shared__ unsigned int s_hist[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) s_hist[b] = 0;
    __syncthreads();
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&s_hist[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        atomicAdd(&hist[b], s_hist[b]);
}

// Work-efficient exclusive scan of n = 256 floats by a block of 128, dynamic shared memory padded by
// CONFLICT_FREE_OFFSET. Warp 0: temp[ai + bankOffsetA] words 0..31, temp[bi + bankOffsetB] words 132..163 -> 1
// wavefront each; g_idata[ai], g_idata[bi], g_odata[ai], g_odata[bi]: 4 sectors. Up-sweep, first step (d = 128,
// offset 1): a = 2t + (2t >> 5) = 0, 2, .., 30, 33, .., 63 and b = 2t + 1 + ((2t + 1) >> 5) = 1, .., 31, 34, .., 64:
// 32 distinct banks each -> 1 wavefront (load of temp[a], load and store of temp[b]). temp[n - 1 + ...] = 0 and the
// down-sweep's first step (d = 1, offset 128 after the up-sweep's 8 steps): thread 0 only -> 1 wavefront each.
__global__ void scan_blelloch_cf(float *g_odata, const float *g_idata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int offset = 1;
    int ai = thid;
    int bi = thid + (n / 2);
    int bankOffsetA = CONFLICT_FREE_OFFSET(ai);
    int bankOffsetB = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bankOffsetA] = g_idata[ai];
    temp[bi + bankOffsetB] = g_idata[bi];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (thid == 0) temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)] = 0;
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    g_odata[ai] = temp[ai + bankOffsetA];
    g_odata[bi] = temp[bi + bankOffsetB];
}

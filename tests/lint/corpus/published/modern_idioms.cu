// Kernels in the styles of today's framework and library code: a vectorized elementwise op over an aligned_vector
// with its scalar tail, a block reduction (warp shuffles, then one partial per warp in shared memory), an RMSNorm row
// per block, a warp-per-row online softmax, a 3-D 7-point stencil marching in z over a shared 2-D tile, a tiled GEMM
// with two shared buffers toggled by buf ^= 1, a radius-R box filter through __ldg, a texture object sampled by
// tex2D, lambdas with captures, a float4 copy whose while loop leaves the index to a scalar tail, a cooperative-groups
// block reduction, a __half2 elementwise add, and a warp-ballot stream compaction.
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <float.h>
#include <cooperative_groups/reduce.h>

template <typename T, int N>
struct alignas(sizeof(T) * N) aligned_vector {
    T val[N];
};

// n = 2^20 + 3, block 256, grid 4 (step 1024). Warp 0: the aligned_vector<float, 4> load and store, lanes on
// consecutive 16-byte vectors -> 512 bytes, 16 sectors (ideal 16). The tail starts at nvec * 4 = 2^20: lanes 0..2
// of block 0 only; out[2^20 + t], in[2^20 + t]: 12 bytes in one sector (ideal 1).
__global__ void vec_scale(int n, float alpha, const float *__restrict__ in, float *__restrict__ out) {
    using V = aligned_vector<float, 4>;
    const int nvec = n / 4;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    for (int i = tid; i < nvec; i += stride) {
        V v = reinterpret_cast<const V *>(in)[i];
#pragma unroll
        for (int k = 0; k < 4; ++k)
            v.val[k] *= alpha;
        reinterpret_cast<V *>(out)[i] = v;
    }
    for (int i = nvec * 4 + tid; i < n; i += stride)
        out[i] = alpha * in[i];
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// BLOCK = 256, n = 2^20. in[i]: 4 sectors (ideal 4). warp_sums[warp] is stored by lane 0 of each warp: no warp has
// 32 lanes on it; warp 0's lane 0, word 0 -> 1 wavefront. Warp 0 reads warp_sums[lane] for lanes 0..7: words 0..7 ->
// 1 wavefront. out[blockIdx.x] by lane 0: one 4-byte word -> 1 sector (ideal 1).
template <int BLOCK>
__global__ void block_reduce_sum(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float warp_sums[BLOCK / 32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    float v = 0.f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x)
        v += in[i];
    v = warp_sum(v);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < BLOCK / 32 ? warp_sums[lane] : 0.f;
        v = warp_sum(v);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}

// One row of C = 768 floats per block of 256. x[c], y[c], weight[c]: 4 sectors (ideal 4). s_warp[threadIdx.x >> 5]
// by lane 0: 1 wavefront. Thread 0 alone reads s_warp[w] (1 wavefront) and stores s_rstd (1 wavefront); every lane
// then reads s_rstd: one word, 1 wavefront, broadcast.
__global__ void rmsnorm_forward(float *__restrict__ out, const float *__restrict__ inp,
                                const float *__restrict__ weight, int C, float eps) {
    __shared__ float s_warp[32];
    __shared__ float s_rstd;
    const float *x = inp + (size_t)blockIdx.x * C;
    float *y = out + (size_t)blockIdx.x * C;
    float ss = 0.f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float v = x[c];
        ss += v * v;
    }
    ss = warp_sum(ss);
    if ((threadIdx.x & 31) == 0)
        s_warp[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int w = 0; w < blockDim.x / 32; ++w)
            t += s_warp[w];
        s_rstd = rsqrtf(t / C + eps);
    }
    __syncthreads();
    const float r = s_rstd;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        y[c] = x[c] * r * weight[c];
}

// A warp per row, N = 4096 rows of C = 1000, block 256. Warp 0 takes row 0: x[c] for c = lane -> 4 sectors
// (ideal 4), and y[c], x[c] again in the second pass: 4 each.
__global__ void softmax_online(float *__restrict__ out, const float *__restrict__ inp, int N, int C) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const float *x = inp + (size_t)row * C;
    float m = -FLT_MAX, s = 0.f;
    for (int c = lane; c < C; c += 32) {
        const float v = x[c];
        const float mn = fmaxf(m, v);
        s = s * expf(m - mn) + expf(v - mn);
        m = mn;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float mo = __shfl_xor_sync(0xffffffffu, m, o);
        const float so = __shfl_xor_sync(0xffffffffu, s, o);
        const float mn = fmaxf(m, mo);
        s = s * expf(m - mn) + so * expf(mo - mn);
        m = mn;
    }
    float *y = out + (size_t)row * C;
    for (int c = lane; c < C; c += 32)
        y[c] = expf(x[c] - m) / s;
}

#define SX 32
#define SY 8

// nx = ny = 256, nz = 64, block 32 x 8. Warp w of block (bx, by): threadIdx.y = w, i = 32 bx + lane, j = 8 by + w.
// in[p - plane], in[p], in[p + plane]: 32 floats of row j, 128-byte aligned -> 4 sectors. tile[ty][tx]: row 1,
// words 35..66 -> 1 wavefront. Left halo (threadIdx.x == 0 && i > 0): no thread of block 0; block (1, 0, 0) lane 0:
// tile[1][0] 1 wavefront, in[p - 1] one word, 1 sector (ideal 1). Right halo: block 0 lane 31, i = 31: tile[1][33],
// in[p + 1]: 1 and 1. Top halo (threadIdx.y == 0 && j > 0): block (0, 1, 0) warp 0: tile[0][tx] words 1..32 -> 1,
// in[p - nx] row 7 -> 4 sectors. Bottom halo: block 0 warp 7: tile[9][tx] words 307..338 -> 1, in[p + nx] row 8 ->
// 4. The update (interior i, j): block 0 has no full warp (i = 0 is not interior); block (1, 0, 0) warp 1 (j = 1,
// i = 32..63): out[p] 4 sectors; tile[2][tx -+ 1], tile[1][tx], tile[3][tx]: 32 consecutive words each -> 1.
__global__ void stencil7_3d(const float *__restrict__ in, float *__restrict__ out, int nx, int ny, int nz, float c0,
                            float c1) {
    __shared__ float tile[SY + 2][SX + 2];
    const int i = blockIdx.x * SX + threadIdx.x;
    const int j = blockIdx.y * SY + threadIdx.y;
    const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    const size_t plane = (size_t)nx * ny;
    size_t p = plane + (size_t)j * nx + i;
    float below = in[p - plane], cur = in[p];
    for (int k = 1; k < nz - 1; ++k, p += plane) {
        const float above = in[p + plane];
        tile[ty][tx] = cur;
        if (threadIdx.x == 0 && i > 0)
            tile[ty][0] = in[p - 1];
        if (threadIdx.x == SX - 1 && i < nx - 1)
            tile[ty][SX + 1] = in[p + 1];
        if (threadIdx.y == 0 && j > 0)
            tile[0][tx] = in[p - nx];
        if (threadIdx.y == SY - 1 && j < ny - 1)
            tile[SY + 1][tx] = in[p + nx];
        __syncthreads();
        if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1)
            out[p] = c0 * cur + c1 * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx] +
                                      below + above);
        __syncthreads();
        below = cur;
        cur = above;
    }
}

#define GT 16

// M = N = K = 1024, block 16 x 16. Warp 0: ty 0..1, tx 0..15. A[row * K + tx]: two rows of 64 bytes -> 4 sectors
// (ideal 4); B[ty * N + col] the same; with t = 16 the next tile's A and B: 4 each. As[.][ty][tx], Bs[.][ty][tx]
// (buffer 0 or 1, 256 floats apart): words 0..31 of the buffer -> 1 wavefront. As[buf][ty][k]: words 0 and 16 ->
// 1 wavefront; Bs[buf][k][tx]: 16 words, each read by 2 lanes -> 1. After the loop (63 iterations) buf = 1: the
// same banks, 1 each. C[row * N + col]: 4 sectors.
__global__ void sgemm_double_buffer(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                                    int M, int N, int K) {
    __shared__ float As[2][GT][GT];
    __shared__ float Bs[2][GT][GT];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * GT + ty, col = blockIdx.x * GT + tx;
    int buf = 0;
    As[0][ty][tx] = A[row * K + tx];
    Bs[0][ty][tx] = B[ty * N + col];
    __syncthreads();
    float acc = 0.f;
    for (int t = GT; t < K; t += GT) {
        As[buf ^ 1][ty][tx] = A[row * K + t + tx];
        Bs[buf ^ 1][ty][tx] = B[(t + ty) * N + col];
#pragma unroll
        for (int k = 0; k < GT; ++k)
            acc += As[buf][ty][k] * Bs[buf][k][tx];
        __syncthreads();
        buf ^= 1;
    }
#pragma unroll
    for (int k = 0; k < GT; ++k)
        acc += As[buf][ty][k] * Bs[buf][k][tx];
    C[row * N + col] = acc;
}

// R = 2, n = 2^20, block 256. Lanes 0 and 1 of warp 0 return (i < R): warp 1, i = 32..63, is the first full warp.
// __ldg(&in[i + k]) at k = -2: floats 30..61, bytes 120..247 -> sectors 3..7, 5 (ideal 4), offset. out[i]: 4.
template <int R>
__global__ void box_filter_ldg(const float *__restrict__ in, float *__restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < R || i >= n - R)
        return;
    float s = 0.f;
#pragma unroll
    for (int k = -R; k <= R; ++k)
        s += __ldg(&in[i + k]);
    out[i] = s / (2 * R + 1);
}

// width = height = 1024, block 32 x 8. tex2D goes through the texture path: unknown. out[y * width + x]: 4 sectors.
__global__ void resample_tex(cudaTextureObject_t tex, float *__restrict__ out, int width, int height, float a,
                             float b) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    const float u = a * x + b, v = a * y + b;
    out[y * width + x] = tex2D<float>(tex, u + 0.5f, v + 0.5f);
}

// cols = 1024, block 256, grid (1, 4): row r = blockIdx.y = 0 in block 0. The lambdas read and write through
// captured row pointers: row_in[c], bias[c], row_out[c] for c = threadIdx.x -> 4 sectors (ideal 4) each.
__global__ void bias_gelu_lambda(float *__restrict__ out, const float *__restrict__ in,
                                 const float *__restrict__ bias, int cols) {
    const int r = blockIdx.y;
    const float *row_in = in + (size_t)r * cols;
    float *row_out = out + (size_t)r * cols;
    auto load = [&](int c) { return row_in[c] + bias[c]; };
    auto store = [=](int c, float v) { row_out[c] = v; };
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = load(c);
        store(c, 0.5f * v * (1.f + tanhf(0.79788456f * v)));
    }
}

// n = 2^20 + 2, block 256, grid 4: step 4096. The float4 copy: lanes on consecutive 16-byte vectors -> 16 sectors
// (ideal 16). Thread g leaves the while loop at the first i = 4 g + 4096 m with i + 3 >= n: i = 2^20 for g = 0
// (2^20 + 3 >= n), past n for every other thread. The tail is lane 0 of block 0 alone: out[2^20], in[2^20]: 1 sector
// (ideal 1).
__global__ void copy_vec4_while(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    const int step = gridDim.x * blockDim.x * 4;
    while (i + 3 < n) {
        reinterpret_cast<float4 *>(out)[i / 4] = reinterpret_cast<const float4 *>(in)[i / 4];
        i += step;
    }
    for (; i < n; ++i)
        out[i] = in[i];
}

namespace cg = cooperative_groups;

// Block 256, n = 2^20, through cooperative groups: in[i] (i = 256 blockIdx.x + rank): 4 sectors (ideal 4).
// smem[warp.meta_group_rank()] by lane 0 of each warp: 1 wavefront. Warp 0 reads smem[thread_rank] for the 8 lanes
// below meta_group_size() = 8: words 0..7, 1 wavefront. out[group_index().x] by lane 0: 1 sector (ideal 1).
__global__ void cg_block_reduce(const float *__restrict__ in, float *__restrict__ out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    extern __shared__ float smem[];
    float v = 0.f;
    for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n; i += block.size() * gridDim.x)
        v += in[i];
    for (int o = warp.size() / 2; o > 0; o /= 2)
        v += warp.shfl_down(v, o);
    if (warp.thread_rank() == 0)
        smem[warp.meta_group_rank()] = v;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        v = warp.thread_rank() < warp.meta_group_size() ? smem[warp.thread_rank()] : 0.f;
        v = cg::reduce(warp, v, cg::plus<float>());
        if (warp.thread_rank() == 0)
            out[block.group_index().x] = v;
    }
}

// n = 2^20 halves, block 256: one __half2 (4 bytes) per lane -> 128 bytes, 4 sectors (ideal 4) each.
__global__ void half2_add(const __half *__restrict__ a, const __half *__restrict__ b, __half *__restrict__ c,
                          long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 < n) {
        const __half2 x = reinterpret_cast<const __half2 *>(a)[i];
        const __half2 y = reinterpret_cast<const __half2 *>(b)[i];
        reinterpret_cast<__half2 *>(c)[i] = __hadd2(x, y);
    }
}

// n = 2^20, block 256. in[i] for the keep test: 4 sectors. Lane 0's atomicAdd on count: one address, 1 sector. The
// output slot comes from the atomic's result and the kept lanes from the data: both unknown.
__global__ void ballot_compact(const int *__restrict__ in, int *__restrict__ out, int *count, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const bool keep = i < n && in[i] > 0;
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    int base = 0;
    if (lane == 0)
        base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (keep)
        out[base + __popc(mask & ((1u << lane) - 1))] = in[i];
}

// Matrix-vector products (N = 1, or M <= 8 rows of A sharing each read of B) in FP32, row-major: the
// memory-bound shapes of gpumemlab.matmul, built for DRAM bandwidth rather than FMA rate.

#include "common.cuh"

// With one row or one column the product reads every element of the matrix once and does 2 flops per
// element (0.5 flop/byte): memory-bound, so these kernels are built for DRAM bandwidth, not FMA rate.
// VEC = 4: float4 loads (K, or N, a multiple of 4 and 16-byte aligned arrays); VEC = 1: any shape.
// SPLIT: block row y = blockIdx.y owns the k range [y * k_chunk, y * k_chunk + k_chunk), so that a short row (or
// column) of outputs still spreads over every SM. Each block stores its partial sums in `work` (split-major:
// work[y * M * N + i * N + j]); the last block of a column (or row) block to take its ticket adds the partials with
// the whole block, in a fixed order, and writes C (one launch, the same bits every run; the cuda-samples
// threadFenceReduction hand-off, as reduce7). `ticket` holds one zeroed counter per block of outputs; the last
// arrival leaves it at 0 again, so the host keeps one set per stream. Unsplit launches never touch work or ticket
// (the host passes null).

// One warp's dot product of a row of A and b over [kb, ke), lanes striding along the row (coalesced); lane 0 gets it.
template <int VEC>
__device__ __forceinline__ float row_dot(const float* __restrict__ a, const float* __restrict__ b, int kb, int ke,
                                         int lane) {
    float sum = 0.0f;
    if (VEC == 4) {
        const float4* a4 = reinterpret_cast<const float4*>(a);
        const float4* b4 = reinterpret_cast<const float4*>(b);
#pragma unroll 4
        for (int q = kb / 4 + lane; q < ke / 4; q += 32) {
            const float4 x = __ldcs(a4 + q), y = __ldg(b4 + q);  // A streams (read once), b stays cached
            sum = fmaf(x.x, y.x, fmaf(x.y, y.y, fmaf(x.z, y.z, fmaf(x.w, y.w, sum))));
        }
    } else {
#pragma unroll 4
        for (int k = kb + lane; k < ke; k += 32) sum = fmaf(__ldcs(a + k), __ldg(b + k), sum);
    }
    return warp_sum(sum);
}

// gemv_rows (N = 1): c[i] = A[i, :] . b, one warp per row (row_dot), deterministic.
// SPLIT: k_chunk is a multiple of 32 VEC; the partials are work[y * M + row], one counter per block of 8 rows; the
// last block adds them as it read A: a warp per row, lanes striding over the splits (__ldcg: at L2, where the other
// SMs' stores landed; L1 may hold lines of an earlier launch), a shuffle tree.
// Minimum blocks per SM: 8 when split, whose bookkeeping otherwise took 36 registers on sm_90 (6 blocks per SM,
// so fewer k ranges); 0 (no minimum) unsplit (a minimum of 1 let ptxas take 48 registers).
template <int VEC, bool SPLIT>
__global__ void __launch_bounds__(256, SPLIT ? 8 : 0)
    gemv_rows(float* __restrict__ c, const float* __restrict__ A, const float* __restrict__ b, float* __restrict__ work,
              unsigned* __restrict__ ticket, int M, int K, int k_chunk) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (!SPLIT && row >= M) return;  // whole warps leave together: the shuffles see full warps
    const int kb = SPLIT ? blockIdx.y * k_chunk : 0;
    const int ke = SPLIT ? min(K, kb + k_chunk) : K;
    float sum = row < M ? row_dot<VEC>(A + (long long)row * K, b, kb, ke, lane) : 0.0f;  // warp-uniform
    if (!SPLIT) {
        if (lane == 0) c[row] = sum;
        return;
    }
    if (lane == 0 && row < M) work[(long long)blockIdx.y * M + row] = sum;
    if (!last_split(ticket + blockIdx.x) || row >= M) return;
    sum = 0.0f;
#pragma unroll 4
    for (int y = lane; y < gridDim.y; y += 32) sum += __ldcg(work + (long long)y * M + row);  // 4 loads, then adds
    sum = warp_sum(sum);
    if (lane == 0) c[row] = sum;
}

// VEC adjacent floats of a row that is read once (streaming loads: they should not evict b or a); AT_L2: partials
// other blocks stored (__ldcg, as above)
template <int VEC, bool AT_L2 = false>
__device__ __forceinline__ void load_vec(float (&y)[VEC], const float* p) {
    if constexpr (VEC == 4) {
        const float4* p4 = reinterpret_cast<const float4*>(p);
        const float4 v = AT_L2 ? __ldcg(p4) : __ldcs(p4);
        y[0] = v.x;
        y[1] = v.y;
        y[2] = v.z;
        y[3] = v.w;
    } else {
        y[0] = AT_L2 ? __ldcg(p) : __ldcs(p);
    }
}

// One row k of B (y: this thread's VEC columns) times column k of the M rows of A, into acc.
template <int VEC, int ROWS>
__device__ __forceinline__ void gemv_cols_step(float (&acc)[ROWS][VEC], const float (&y)[VEC],
                                               const float* __restrict__ a, int M, int K, int k) {
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const float x = i < M ? __ldg(a + (long long)i * K + k) : 0.0f;  // one address per warp: a broadcast
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[i][q] = fmaf(x, y[q], acc[i][q]);
    }
}

// gemv_cols' block sums: the 8 warps' acc (each thread's VEC columns of the M rows) added through shared memory in
// warp order, a fixed order, one row at a time, and stored into dst's M x N rows.
template <int VEC, int ROWS>
__device__ __forceinline__ void store_block_sums(float (&part)[8][32 * VEC], const float (&acc)[ROWS][VEC],
                                                 float* __restrict__ dst, int M, int N) {
    const int lane = threadIdx.x, r = threadIdx.y;
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        if (i >= M) break;  // uniform over the block: every thread reaches the same barriers
#pragma unroll
        for (int q = 0; q < VEC; ++q) part[r][lane * VEC + q] = acc[i][q];
        __syncthreads();  // every warp's partial sums of row i are in shared memory
        for (int t = r * 32 + lane; t < 32 * VEC; t += 256) {
            float s = part[0][t];
#pragma unroll
            for (int w = 1; w < 8; ++w) s += part[w][t];
            const int j = blockIdx.x * 32 * VEC + t;
            if (j < N) dst[(long long)i * N + j] = s;
        }
        __syncthreads();  // part is rewritten for the next row
    }
}

// Rows of B each gemv_cols thread loads before it uses the first (see the launch bounds below).
constexpr int GEMV_DEPTH = 4;

// The split epilogue's last gemv_cols block: acc = this thread's VEC columns of the M rows summed over the splits
// r, r + 8, ... (warp r of 8, as the k rows), in split order. All U splits' loads are issued before the first add
// (U x ROWS x VEC registers: 4 splits for up to 2 rows, 2 for more); past the last split or M they count as zeros,
// which add nothing.
template <int VEC, int ROWS, int U>
__device__ __forceinline__ void add_split_partials(float (&acc)[ROWS][VEC], const float* __restrict__ work, int M,
                                                   int N, int col) {
    const int splits = gridDim.y;
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[i][q] = 0.0f;
    if (col >= N) return;
    for (int y0 = threadIdx.y; y0 < splits; y0 += 8 * U) {
        float v[U][ROWS][VEC];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i) {
                const int y = y0 + 8 * u;
                if (y < splits && i < M) {
                    load_vec<VEC, true>(v[u][i], work + ((long long)y * M + i) * N + col);
                } else {
#pragma unroll
                    for (int q = 0; q < VEC; ++q) v[u][i][q] = 0.0f;
                }
            }
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i)
#pragma unroll
                for (int q = 0; q < VEC; ++q) acc[i][q] += v[u][i][q];
    }
}

// gemv_cols (M <= ROWS, ROWS <= 8): C[i][j] = A[i, :] . B[:, j] for the M rows of A. A block is 32 x 8
// threads: the 32 lanes of a warp read VEC adjacent columns each of one row of B (a warp reads 128 or 512
// contiguous bytes), the 8 warps take every 8th row of the block's k range, and each element of B read
// serves all M rows of A (B is read once: the skinny product stays memory-bound like M = 1); then the warps
// add their partial sums through shared memory in a fixed order, one row of C at a time. SPLIT (see above): the
// partials are work[(y * M + i) * N + j], one counter per column block; the last block adds them
// the way it read B: lanes along the columns, the 8 warps taking every 8th split, then the same shared-memory sums.
// __launch_bounds__: without it ptxas kept ROWS = 8 at 72 registers by consuming each row of B right after its
// load (one 512-byte read in flight per warp, the memory-level parallelism that left 8 x 8192 x 8192 at 0.74x of
// cuBLAS). With a minimum of 2 blocks (8 rows), 3 (4 rows), 6 (1 row, float4) or 4 (the rest) per SM every float4
// one keeps all GEMV_DEPTH rows in flight on sm_90 (tests/test_sass.py checks the SASS; NVRTC 13.0 kept only 2-3
// rows in flight with 4 blocks for 4 rows and 8 for the float4 1-row kernel); 3 blocks for 8 rows capped it at 80
// registers and serialized the loads; 32 registers made sm_100 spill the scalar 1-row kernel, and a 48-register cap
// spilled gemv_cols<4, false, 4> there.
// The scalar 1-row split kernel: with 4 blocks ptxas took 48-52 registers on sm_90; a minimum of 8 keeps it at 31
// there. From sm_100 on 32 registers spill, so 4 as the rest.
#if __CUDA_ARCH__ >= 1000
constexpr int GEMV_SCALAR_TICKET_MINB = 4;
#else
constexpr int GEMV_SCALAR_TICKET_MINB = 8;
#endif
__host__ __device__ constexpr int gemv_min_blocks(int vec, bool split, int rows) {
    if (rows == 8) return 2;
    if (rows == 4) return 3;
    if (rows == 1 && vec == 4) return 6;
    return rows == 1 && split ? GEMV_SCALAR_TICKET_MINB : 4;
}
template <int VEC, bool SPLIT, int ROWS>
__global__ void __launch_bounds__(256, gemv_min_blocks(VEC, SPLIT, ROWS))
    gemv_cols(float* __restrict__ c, const float* __restrict__ a, const float* __restrict__ B,
              float* __restrict__ work, unsigned* __restrict__ ticket, int M, int N, int K, int k_chunk) {
    __shared__ float part[8][32 * VEC];
    const int lane = threadIdx.x, r = threadIdx.y;
    const int col = (blockIdx.x * 32 + lane) * VEC;
    const int kb = SPLIT ? blockIdx.y * k_chunk : 0;
    const int kend = SPLIT ? min(K, kb + k_chunk) : K;
    float acc[ROWS][VEC];
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[i][q] = 0.0f;
    if (col < N) {
        int k = kb + r;
        for (; k + 8 * (GEMV_DEPTH - 1) < kend; k += 8 * GEMV_DEPTH) {
            float y[GEMV_DEPTH][VEC];
#pragma unroll
            for (int u = 0; u < GEMV_DEPTH; ++u) load_vec<VEC>(y[u], B + (long long)(k + 8 * u) * N + col);
#pragma unroll
            for (int u = 0; u < GEMV_DEPTH; ++u) gemv_cols_step<VEC, ROWS>(acc, y[u], a, M, K, k + 8 * u);
        }
        for (; k < kend; k += 8) {  // the last rows of the range, fewer than GEMV_DEPTH per warp
            float y[VEC];
            load_vec<VEC>(y, B + (long long)k * N + col);
            gemv_cols_step<VEC, ROWS>(acc, y, a, M, K, k);
        }
    }
    // the block's sums: into C, or this split's partials
    store_block_sums<VEC, ROWS>(part, acc, SPLIT ? work + (long long)blockIdx.y * M * N : c, M, N);
    if (!SPLIT || !last_split(ticket + blockIdx.x)) return;
    add_split_partials<VEC, ROWS, ROWS <= 2 ? 4 : 2>(acc, work, M, N, col);
    store_block_sums<VEC, ROWS>(part, acc, c, M, N);
}

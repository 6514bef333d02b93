// Matrix-multiplication family: the seeds' ladder from one thread per output to a register-blocked,
// cp.async-pipelined SGEMM. Every kernel computes C = A B (or C = A A^T) in FP32, all matrices
// row-major unless the name says otherwise: A is M x K, B is K x N, C is M x N. Offsets into the
// matrices are 64-bit (M*K can pass 2^31); the dimensions themselves are int.

#include "common.cuh"

// ------------------------------------------------------------------ 1-2. one thread per output
// naive<false>: one thread per output, B read along a row so a warp's B loads coalesce (seed 000 / 002)
// naive<true>: N (= B) stored column-major: neighbouring threads read K floats apart, uncoalesced (seed 000)
template <bool B_COL_MAJOR>
__global__ void naive(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                      int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        const float* a = A + (long long)row * K;
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float b = B_COL_MAJOR ? B[(long long)col * K + k] : B[(long long)k * N + col];
            sum += a[k] * b;
        }
        C[(long long)row * N + col] = sum;
    }
}

// ------------------------------------------------------------------ 3. transposed_b
// transpose_naive: Bt = B^T, the seed's one-element-per-thread transpose (seed 004); transposed_b
// then runs naive<true> on Bt, whose layout is exactly "B stored column-major".
extern "C" __global__ void transpose_naive(float* __restrict__ Bt, const float* __restrict__ B, int K, int N) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (k < K && col < N) Bt[(long long)col * K + k] = B[(long long)k * N + col];
}

// ------------------------------------------------------------------ 4-6. Best Practices 9.2.3.2 (w = 32)
// A is M x 32, B is 32 x N, blocks of 32 x 32 threads, M and N multiples of 32.
#define TILE_DIM 32

// simple_multiply: each thread reads a row of A (one float per 32-byte sector used) and a column of B (seed 003)
extern "C" __global__ void simple_multiply(float* __restrict__ c, const float* __restrict__ a,
                                           const float* __restrict__ b, int N) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) sum += a[row * TILE_DIM + i] * b[(long long)i * N + col];
    c[(long long)row * N + col] = sum;
}

// coalesced_multiply: the warp's row of A loaded once, coalesced, into shared memory; __syncwarp (seed 003)
extern "C" __global__ void coalesced_multiply(float* __restrict__ c, const float* __restrict__ a,
                                              const float* __restrict__ b, int N) {
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    __syncwarp();  // only this warp reads the row it wrote
    for (int i = 0; i < TILE_DIM; i++) sum += aTile[threadIdx.y][i] * b[(long long)i * N + col];
    c[(long long)row * N + col] = sum;
}

// shared_ab_multiply: tiles of A and B both in shared memory, no redundant B reads (seed 003)
extern "C" __global__ void shared_ab_multiply(float* __restrict__ c, const float* __restrict__ a,
                                              const float* __restrict__ b, int N) {
    __shared__ float aTile[TILE_DIM][TILE_DIM], bTile[TILE_DIM][TILE_DIM];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    bTile[threadIdx.y][threadIdx.x] = b[(long long)threadIdx.y * N + col];
    __syncthreads();  // a warp reads B rows that other warps wrote
    for (int i = 0; i < TILE_DIM; i++) sum += aTile[threadIdx.y][i] * bTile[i][threadIdx.x];
    c[(long long)row * N + col] = sum;
}

// ------------------------------------------------------------------ 7. tiled (any M, N, K)
// tiled<TILE>: TILE x TILE shared tiles of A and B, zero-padded at the edges, bounds-checked store (seed 002)
template <int TILE>
__global__ void tiled(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                      int M, int N, int K) {
    __shared__ float sh_A[TILE][TILE];
    __shared__ float sh_B[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = TILE * blockIdx.y + ty;
    const int col = TILE * blockIdx.x + tx;
    float value = 0.0f;
    for (int phase = 0; phase < (K + TILE - 1) / TILE; phase++) {
        const int ka = phase * TILE + tx, kb = phase * TILE + ty;
        sh_A[ty][tx] = (row < M && ka < K) ? A[(long long)row * K + ka] : 0.0f;
        sh_B[ty][tx] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++) value += sh_A[ty][k] * sh_B[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = value;
}

// ------------------------------------------------------------------ 8. corner turning
// corner_turning<TILE, PAD>: N (= B) column-major, read coalesced along k and transposed into
// shared memory (seed 000 exercise, Fig. 6.4); PAD = 1 removes the TILE-way bank conflict of the
// transposed store Nds[tx][ty].
template <int TILE, int PAD>
__global__ void corner_turning(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ Bcm,
                               int M, int N, int K) {
    __shared__ float Mds[TILE][TILE];
    __shared__ float Nds[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int n_rowstart = blockIdx.x * TILE;  // rows of the stored (column-major) N are columns of B
    float value = 0.0f;
    for (int ph = 0; ph < (K + TILE - 1) / TILE; ++ph) {
        const int k = ph * TILE + tx;
        Mds[ty][tx] = (row < M && k < K) ? A[(long long)row * K + k] : 0.0f;
        Nds[tx][ty] = (n_rowstart + ty < N && k < K) ? Bcm[(long long)(n_rowstart + ty) * K + k] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) value += Mds[ty][kk] * Nds[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = value;
}

// ------------------------------------------------------------------ 9. thread coarsening
// coarsened<TILE, COARSE>: one block computes COARSE adjacent output tiles, reusing each A tile
// COARSE times (seed 000, COARSE_FACTOR); bounds checks and zero padding added for any M, N, K.
template <int TILE, int COARSE>
__global__ void coarsened(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                          int M, int N, int K) {
    __shared__ float Mds[TILE][TILE];
    __shared__ float Nds[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int colStart = blockIdx.x * TILE * COARSE + tx;
    float Pvalue[COARSE];
#pragma unroll
    for (int c = 0; c < COARSE; ++c) Pvalue[c] = 0.0f;
    for (int ph = 0; ph < (K + TILE - 1) / TILE; ++ph) {
        const int ka = ph * TILE + tx, kb = ph * TILE + ty;
        Mds[ty][tx] = (row < M && ka < K) ? A[(long long)row * K + ka] : 0.0f;
#pragma unroll
        for (int c = 0; c < COARSE; ++c) {
            const int col = colStart + c * TILE;
            Nds[ty][tx] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < TILE; ++k) Pvalue[c] += Mds[ty][k] * Nds[k][tx];
            __syncthreads();
        }
    }
#pragma unroll
    for (int c = 0; c < COARSE; ++c) {
        const int col = colStart + c * TILE;
        if (row < M && col < N) C[(long long)row * N + col] = Pvalue[c];
    }
}

// ------------------------------------------------------------------ 10-12. C = A A^T (Best Practices 9.2.3.3)
// A is M x 32, C is M x M, blocks of 32 x 32 threads, M a multiple of 32.

// aat_simple: a[col*TILE_DIM + i] walks A^T with a stride of 32 floats: strided, wasteful reads (seed 003)
extern "C" __global__ void aat_simple(float* __restrict__ c, const float* __restrict__ a, int M) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) sum += a[row * TILE_DIM + i] * a[col * TILE_DIM + i];
    c[(long long)row * M + col] = sum;
}

// aat_tiled<PAD>: both tiles read coalesced, the A^T tile transposed in shared memory; with PAD = 0 the
// store transposedTile[tx][ty] walks a column of a 32 x 32 tile (32-way bank conflict), 32 x 33 removes it (seed 003)
template <int PAD>
__global__ void aat_tiled(float* __restrict__ c, const float* __restrict__ a, int M) {
    __shared__ float aTile[TILE_DIM][TILE_DIM], transposedTile[TILE_DIM][TILE_DIM + PAD];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    transposedTile[threadIdx.x][threadIdx.y] = a[(blockIdx.x * blockDim.x + threadIdx.y) * TILE_DIM + threadIdx.x];
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i++) sum += aTile[threadIdx.y][i] * transposedTile[i][threadIdx.x];
    c[(long long)row * M + col] = sum;
}

// ------------------------------------------------------------------ 13. register blocking
// cp.async (sm_80+): global -> shared without a register round trip; `bytes` = 0 zero-fills the
// destination (edge tiles). Older GPUs get an ordinary load/store with the same meaning.
template <int BYTES>
__device__ __forceinline__ void cp_async(float* dst, const float* src, bool pred) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const int n = pred ? BYTES : 0;
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(n));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(BYTES), "r"(n));
#else
    if (BYTES == 16)
        *reinterpret_cast<float4*>(dst) = pred ? *reinterpret_cast<const float4*>(src) : make_float4(0.f, 0.f, 0.f, 0.f);
    else
        *dst = pred ? *src : 0.0f;
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
#endif
}

// A 16-byte shared-memory load. PINNED: a volatile load, which ptxas keeps in program order; the
// register-blocked kernel's fragment loads then stay a k step ahead of their FFMAs instead of being sunk
// to just before their first use (which leaves the FFMAs waiting on the load: short-scoreboard stalls).
template <bool PINNED>
__device__ __forceinline__ float4 lds128(const float* p) {
#if __CUDA_ARCH__ >= 700
    if (PINNED) {
        float4 v;
        const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
        asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a));
        return v;
    }
#endif
    return *reinterpret_cast<const float4*>(p);
}

// register_blocked<...>: each block computes a BM x BN tile of C from a STAGES-deep ring of
// BK-wide shared tiles filled by cp.async; each warp a WM x WN warp tile; each thread
// (WM*WN/32 outputs) a grid of WMITER x WNITER register blocks of TM x TN, read from shared memory
// with 16-byte loads. A is stored transposed (As[k][m]) so that a thread's TM rows are one float4.
//   VEC = 4: N % 4 == 0 and 16-byte aligned B and C: B tiles by 16-byte cp.async, float4 stores.
//   VEC = 1: any N, K: B tiles by 4-byte cp.async, scalar stores.
//   ALOAD = 0: A tiles by 4-byte cp.async, transposed on the way into shared memory.
//   ALOAD = 1 (VEC = 4 and K % 4 == 0 only): A by 16-byte loads into registers one tile ahead,
//   stored transposed (siboehm's kernel 12 style); a warp stores 16 rows x 2 k-quads, one wavefront.
//   DBUF = 1: the fragments read from shared memory are double-buffered in registers across k and
//   across tiles: the barrier sits before the last k step, so the next tile's first fragments are
//   in flight while that step's FFMAs issue (no exposed shared-memory latency after a barrier).
// Lanes are interleaved (as CUTLASS's RowMajorInterleaved<2>): lanes n and n^1 read the same float4 of B,
// n and n^2 the same of A, so every fragment LDS.128 takes 2 wavefronts instead of 4.
//   ORDER: the order in which a k step's outer product visits the thread tile (it steers ptxas's
//   schedule and register allocation): 0 row by row; 1 column by column; 2 column by column, serpentine
//   along the rows. Row order needs the second A float4 only halfway through a step, so ptxas loads it late.
//   PIN = 1: the fragment loads are pinned in program order (volatile, see lds128). ORDER 2 + PIN 1 keeps
//   every fragment load a k step ahead of its FFMAs (docs/notes/matmul.md: +5 to +9 points of cuBLAS).
// Edge tiles are zero-filled (the extra products add zeros) and stores are bounds-checked, so any
// M, N, K >= 1 is correct. Blocks are visited in groups of GROUP_M tile rows for L2 reuse.
// SPLIT (split-K): block row y = blockIdx.y owns the k range [y * k_chunk, y * k_chunk + k_chunk)
// (k_chunk a multiple of BK) and adds its partial tile into C with atomicAdd (C zeroed first); for
// problems whose tiles cannot fill the GPU. A template flag, so the plain kernel keeps its registers.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int STAGES, int VEC, int ALOAD, int MINB,
          bool SPLIT, int DBUF, int ORDER = 0, int PIN = 0>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
register_blocked(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int M, int N, int K,
                 int k_chunk) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int TCOLS = WSUBN / TN, TROWS = WSUBM / TM;  // a sub-tile's lanes along N and along M
    constexpr bool A_REG = ALOAD == 1 && VEC == 4;
    constexpr int AS = BM + 4;                     // A^T row pitch: keeps float4 alignment, spreads transposed stores
    constexpr int BS = BN;
    constexpr int A_STAGE = BK * AS, B_STAGE = BK * BS;
    constexpr int GROUP_M = 8;
    constexpr int KQ = BK / 4;                     // float4s along k in a row of the A tile
    constexpr int B_PER_ROW = BN / VEC, B_LOADS = (BK * BN) / (NT * VEC), B_RSTEP = NT / B_PER_ROW;
    constexpr int A_LOADS = A_REG ? (BM * BK) / (4 * NT) : (BM * BK) / NT;
    constexpr int A_RSTEP = A_REG ? NT / KQ : NT / BK;
    static_assert(WMITER >= 1 && WMITER * 32 * TM * TN * WNITER == WM * WN, "warp tile does not split into 32 threads");
    static_assert(TCOLS * TROWS == 32 && TCOLS >= 2 && TROWS >= 2, "sub-tile is not 32 interleavable lanes");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "register blocks are read as float4");
    static_assert((BM * BK) % NT == 0 && (BK * BN) % (NT * VEC) == 0 && NT % B_PER_ROW == 0, "tile loads do not split evenly");
    static_assert(!A_REG || ((BM * BK) % (4 * NT) == 0 && NT % (16 * KQ) == 0 && BM % 16 == 0 && KQ % 2 == 0),
                  "A tile does not split into float4 per thread");
    static_assert(A_REG || NT % BK == 0, "A tile rows do not split evenly");
    static_assert(STAGES >= 2, "at least two stages");
    static_assert(ORDER >= 0 && ORDER <= 2, "ORDER is 0, 1 or 2");
    static_assert(PIN == 0 || PIN == 1, "PIN is 0 or 1");
    const int lda = K, ldb = N;  // row pitches of A and B in floats

    extern __shared__ float4 smem4[];
    float* As = reinterpret_cast<float*>(smem4);
    float* Bs = As + STAGES * A_STAGE;

    // grouped rasterization: consecutive blocks share a few A panels and sweep B
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int pid_m = first_m + (pid % in_group) % group_rows;
    const int pid_n = (pid % in_group) / group_rows;
    const int m0 = pid_m * BM, n0 = pid_n * BN;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
    const int t_n = (lane >> 1) % TCOLS, t_m = (lane & 1) | (((lane >> 1) / TCOLS) << 1);
    const int kb = SPLIT ? blockIdx.y * k_chunk : 0;  // this split's first k (tile loads use absolute k)
    const int kend = SPLIT ? min(K, kb + k_chunk) : K;  // one past its last k
    const int ktiles = (kend - kb + BK - 1) / BK;

    // Per-thread load coordinates: row r0 + i * RSTEP, fixed column; sources advance one tile per issue.
    const int b_r0 = tid / B_PER_ROW, b_c = (tid % B_PER_ROW) * VEC;
    const bool b_col_ok = n0 + b_c < N;
    const float* b_src = B + (long long)(kb + b_r0) * ldb + n0 + b_c;
    const int a_r0 = A_REG ? (tid % 16) + 16 * (tid / (16 * KQ)) : tid / BK;
    const int a_k = A_REG ? 4 * ((tid / 16) % KQ) : tid % BK;
    const float* a_src = A + (long long)(m0 + a_r0) * lda + kb + a_k;

    int issued = 0;  // tiles whose cp.async copies were issued (B, and A when ALOAD = 0)
    auto issue_async = [&]() {  // the next tile's copies into its stage; always one commit group
        if (issued < ktiles) {
            const int krem = kend - (kb + issued * BK);  // valid k rows in this tile
            float* bs = Bs + (issued % STAGES) * B_STAGE + b_r0 * BS + b_c;
#pragma unroll
            for (int i = 0; i < B_LOADS; ++i) {
                const bool ok = b_col_ok && b_r0 + i * B_RSTEP < krem;
                cp_async<4 * VEC>(bs + i * B_RSTEP * BS, ok ? b_src + (long long)i * B_RSTEP * ldb : B, ok);
            }
            b_src += (long long)BK * ldb;
            if (!A_REG) {
                float* as = As + (issued % STAGES) * A_STAGE + a_k * AS + a_r0;
#pragma unroll
                for (int i = 0; i < A_LOADS; ++i) {
                    const bool ok = m0 + a_r0 + i * A_RSTEP < M && a_k < krem;
                    cp_async<4>(as + i * A_RSTEP, ok ? a_src + (long long)i * A_RSTEP * lda : A, ok);
                }
                a_src += BK;
            }
        }
        cp_async_commit();
        ++issued;
    };
    constexpr int A_VECS = A_REG ? A_LOADS : 1;
    float4 a_regs[A_VECS];
    int loaded = 0;  // tiles whose A went through a_regs
    auto load_a_regs = [&]() {
        const int krem = kend - (kb + loaded * BK);
#pragma unroll
        for (int i = 0; i < A_VECS; ++i)
            a_regs[i] = (m0 + a_r0 + i * A_RSTEP < M && a_k < krem)
                            ? *reinterpret_cast<const float4*>(a_src + (long long)i * A_RSTEP * lda)
                            : make_float4(0.f, 0.f, 0.f, 0.f);
        a_src += BK;
    };
    auto store_a_regs = [&]() {  // into the stage of the tile that load_a_regs read last
        float* as = As + (loaded % STAGES) * A_STAGE + a_k * AS + a_r0;
#pragma unroll
        for (int i = 0; i < A_VECS; ++i) {
            as[0 * AS + i * A_RSTEP] = a_regs[i].x;
            as[1 * AS + i * A_RSTEP] = a_regs[i].y;
            as[2 * AS + i * A_RSTEP] = a_regs[i].z;
            as[3 * AS + i * A_RSTEP] = a_regs[i].w;
        }
        ++loaded;
    };

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0f;

    float ra[2][WMITER * TM], rb[2][WNITER * TN];
    const float* a_frag = As + warp_m * WM + t_m * TM;
    const float* b_frag = Bs + warp_n * WN + t_n * TN;
    auto load_frag = [&](int buf, int stage, int k) {
        const float* as = a_frag + stage * A_STAGE + k * AS;
        const float* bs = b_frag + stage * B_STAGE + k * BS;
#pragma unroll
        for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = lds128<PIN == 1>(as + wm * WSUBM + i);
                ra[buf][wm * TM + i + 0] = v.x; ra[buf][wm * TM + i + 1] = v.y;
                ra[buf][wm * TM + i + 2] = v.z; ra[buf][wm * TM + i + 3] = v.w;
            }
#pragma unroll
        for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = lds128<PIN == 1>(bs + wn * WSUBN + j);
                rb[buf][wn * TN + j + 0] = v.x; rb[buf][wn * TN + j + 1] = v.y;
                rb[buf][wn * TN + j + 2] = v.z; rb[buf][wn * TN + j + 3] = v.w;
            }
    };

    // prologue: the first tiles in flight (one commit group per tile, empty groups past the end);
    // DBUF keeps one more tile of B in flight, since its barrier comes before a tile's last step
    constexpr int AHEAD = DBUF ? STAGES : STAGES - 1;
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
        if (A_REG && s < ktiles && (DBUF ? s < 1 : true)) {
            load_a_regs();
            store_a_regs();
        }
        issue_async();
    }
    if (DBUF) {
        if (A_REG && ktiles > 1) load_a_regs();  // tile 1, stored before tile 0's last step
        cp_async_wait<STAGES - 1>();
        __syncthreads();
        load_frag(0, 0, 0);
    }

    int stage = 0;  // the stage of tile t
    for (int t = 0; t < ktiles; ++t) {
        if (!DBUF) {
            cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed
            __syncthreads();              // everyone's have; everyone is done with tile t-1's stage
            issue_async();                // tile t + STAGES - 1 into the stage tile t-1 used
            if (A_REG && t + STAGES - 1 < ktiles) load_a_regs();
        }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (DBUF) {
                if (k + 1 < BK) {
                    load_frag((k + 1) & 1, stage, k + 1);
                } else if (t + 1 < ktiles) {  // uniform: the whole block takes this branch or none does
                    if (A_REG) store_a_regs();    // tile t+1's A, into a stage last read two tiles ago
                    cp_async_wait<STAGES - 2>();  // tile t+1's B (and async A) copies have landed
                    __syncthreads();              // everyone's have; everyone has read all of tile t's fragments
                    issue_async();                // tile t + STAGES into tile t's stage
                    if (A_REG && loaded < ktiles) load_a_regs();  // tile t+2
                    stage = stage + 1 == STAGES ? 0 : stage + 1;
                    load_frag(0, stage, 0);
                }
            } else {
                load_frag(k & 1, stage, k);
            }
            const int buf = k & 1;
            constexpr int RM = WMITER * TM, RN = WNITER * TN;
#pragma unroll
            for (int s = 0; s < RM * RN; ++s) {
                const int outer = ORDER == 0 ? s / RN : s / RM, inner = ORDER == 0 ? s % RN : s % RM;
                const int i = ORDER == 0 ? outer : (ORDER == 2 && (outer & 1) ? RM - 1 - inner : inner);
                const int j = ORDER == 0 ? inner : outer;
                acc[i][j] = fmaf(ra[buf][i], rb[buf][j], acc[i][j]);
            }
        }
        if (!DBUF) {
            if (A_REG && t + STAGES - 1 < ktiles) store_a_regs();  // its stage was freed by the barrier above
            stage = stage + 1 == STAGES ? 0 : stage + 1;
        }
    }
    cp_async_wait<0>();  // no copy may outlive the block (empty groups only, but keep the rule simple)

    // epilogue: bounds-checked stores, float4 when every row of C is 16-byte aligned; atomics when split
    const bool c_vec = VEC == 4 && !SPLIT;
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = m0 + warp_m * WM + wm * WSUBM + t_m * TM + i;
            if (row >= M) continue;
            float* crow = C + (long long)row * N;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const int col = n0 + warp_n * WN + wn * WSUBN + t_n * TN + j;
                    const int ii = wm * TM + i, jj = wn * TN + j;
                    if (c_vec) {
                        if (col < N)
                            *reinterpret_cast<float4*>(crow + col) =
                                make_float4(acc[ii][jj], acc[ii][jj + 1], acc[ii][jj + 2], acc[ii][jj + 3]);
                    } else {
#pragma unroll
                        for (int q = 0; q < 4; ++q)
                            if (col + q < N) {
                                if (SPLIT) atomicAdd(crow + col + q, acc[ii][jj + q]);
                                else crow[col + q] = acc[ii][jj + q];
                            }
                    }
                }
        }
}

// ------------------------------------------------------------------ 14. matrix-vector (M = 1 or N = 1)
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
        y[0] = v.x; y[1] = v.y; y[2] = v.z; y[3] = v.w;
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
template <int VEC, bool SPLIT, int ROWS>
__global__ void __launch_bounds__(256, ROWS == 8 ? 2 : ROWS == 4 ? 3 : (ROWS == 1 && VEC == 4 ? 6 :
                                   ROWS == 1 && SPLIT ? GEMV_SCALAR_TICKET_MINB : 4))
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

// The production SGEMM: register-blocked, cp.async-pipelined, warp-tiled C = A B in FP32 for any M, N, K
// (row-major A M x K, B K x N, C M x N; 64-bit offsets, int dimensions). The tuned configurations and the
// split-K launches are chosen by ops/matmul (kernels/tuned/matmul.json).

#include "common.cuh"

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

// Four consecutive floats of a register fragment, r[0..4), from s[0..4) in shared memory: one 16-byte load. The
// loops over a fragment stay in the kernel: moved in here they changed ptxas's schedule of 8 of the 64x64 kernels.
template <bool PINNED>
__device__ __forceinline__ void load_fragment4(float* r, const float* s) {
    const float4 v = lds128<PINNED>(s);
    r[0] = v.x;
    r[1] = v.y;
    r[2] = v.z;
    r[3] = v.w;
}

// One operand's BK x BD shared tile (element (k, d) at s[k * PITCH + d]) filled by cp.async from global memory
// where element (k, d) of the tile is at src[k * ld + d] (KC false: contiguous along d, VEC floats per copy) or
// src[d * ld + k] (KC true: contiguous along k, one float per copy, consecutive threads along k). KC is the seeds'
// corner turning: the operand is read coalesced along the dimension it is stored by and written transposed into
// shared memory (PITCH padded by the caller to spread the transposed stores over the banks).
template <int BK, int BD, int PITCH, int NT, int VEC, bool KC>
struct TileCopy {
    static constexpr int PER = KC ? BK : BD / VEC;     // threads along the contiguous dimension
    static constexpr int STEP = NT / PER;               // lines of the other dimension per pass
    static constexpr int LOADS = (BK * BD) / (NT * VEC);
    static_assert(NT % PER == 0 && (BK * BD) % (NT * VEC) == 0 && (!KC || VEC == 1), "tile copies do not split evenly");
    const float* src;  // this thread's first element of the next tile
    int ld, line, col;  // row pitch; this thread's first line (across the contiguous dimension) and column (along it)
    int d0, D;          // the block's first d and the operand's extent along d
    bool col_ok;        // KC: unused; else the column's VEC floats lie inside D

    __device__ __forceinline__ TileCopy(const float* base, int ld_, int tid, int d0_, int D_, int kb)
        : ld(ld_), d0(d0_), D(D_) {
        line = tid / PER;
        col = (tid % PER) * VEC;
        col_ok = d0 + col < D;
        src = KC ? base + (long long)(d0 + line) * ld + kb + col : base + (long long)(kb + line) * ld + d0 + col;
    }

    // the next tile into `stage`; `krem`: valid k of this tile; `base`: an in-bounds address for zero-filled copies
    __device__ __forceinline__ void issue(float* stage, int krem, const float* base) {
        float* dst = KC ? stage + col * PITCH + line : stage + line * PITCH + col;
#pragma unroll
        for (int i = 0; i < LOADS; ++i) {
            const bool ok = KC ? (d0 + line + i * STEP < D && col < krem) : (col_ok && line + i * STEP < krem);
            cp_async<4 * VEC>(dst + (KC ? i * STEP : i * STEP * PITCH), ok ? src + (long long)i * STEP * ld : base, ok);
        }
        src += KC ? BK : (long long)BK * ld;
    }
};

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
// TA, TB (layouts): 0 row-major, 1 column-major operand (a transposed or Fortran-ordered view), each with its own
// pitch (lda, ldb: elements between rows, or between columns when column-major). A column-major A is read along M
// straight into its transposed tile (VEC floats per copy; TA needs M % 4 == 0 for VEC = 4); a column-major B along K
// by TileCopy's corner turning into a tile padded by 4 floats (one float per copy, any VEC). ALOAD = 1 applies to a
// row-major A only. STRIDED = 1 reads the pitches lda_, ldb_ and batches: blockIdx.z selects A + z batch_a,
// B + z batch_b, C + z M N (a step of 0 broadcasts); STRIDED = 0 is one dense row-major product (lda = K, ldb = N).
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int STAGES, int VEC, int ALOAD, int MINB,
          bool SPLIT, int DBUF, int ORDER = 0, int PIN = 0, int TA = 0, int TB = 0, int STRIDED = 0>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
    register_blocked(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int M, int N, int K,
                     int k_chunk, int lda_, int ldb_, long long batch_a, long long batch_b) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int TCOLS = WSUBN / TN, TROWS = WSUBM / TM;  // a sub-tile's lanes along N and along M
    constexpr bool A_REG = ALOAD == 1 && VEC == 4 && TA == 0;
    constexpr int AS = BM + 4;                     // A^T row pitch: keeps float4 alignment, spreads transposed stores
    constexpr int BS = TB ? BN + 4 : BN;           // B row pitch, padded where B is written transposed
    constexpr int A_STAGE = BK * AS, B_STAGE = BK * BS;
    constexpr int GROUP_M = 8;
    constexpr int KQ = BK / 4;                     // float4s along k in a row of the A tile
    constexpr int A_LOADS = (BM * BK) / (4 * NT);  // float4s per thread of the register path
    constexpr int A_RSTEP = NT / KQ;
    using ACopy = TileCopy<BK, BM, AS, NT, TA ? VEC : 1, TA == 0>;
    using BCopy = TileCopy<BK, BN, BS, NT, TB ? 1 : VEC, TB == 1>;
    static_assert(WMITER >= 1 && WMITER * 32 * TM * TN * WNITER == WM * WN, "warp tile does not split into 32 threads");
    static_assert(TCOLS * TROWS == 32 && TCOLS >= 2 && TROWS >= 2, "sub-tile is not 32 interleavable lanes");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "register blocks are read as float4");
    static_assert(!A_REG || ((BM * BK) % (4 * NT) == 0 && NT % (16 * KQ) == 0 && BM % 16 == 0 && KQ % 2 == 0),
                  "A tile does not split into float4 per thread");
    static_assert(STAGES >= 2, "at least two stages");
    static_assert(ORDER >= 0 && ORDER <= 2, "ORDER is 0, 1 or 2");
    static_assert(PIN == 0 || PIN == 1, "PIN is 0 or 1");
    static_assert((TA == 0 || TA == 1) && (TB == 0 || TB == 1), "TA and TB are 0 (row-major) or 1 (column-major)");
    static_assert(STRIDED == 1 || (TA == 0 && TB == 0), "column-major operands take the strided instantiation");
    // the dense instantiation (STRIDED 0) ignores the pitches and batch steps: its code is the plain SGEMM's
    const int lda = STRIDED ? lda_ : K, ldb = STRIDED ? ldb_ : N;
    if (STRIDED) {
        A += blockIdx.z * batch_a;
        B += blockIdx.z * batch_b;
        C += blockIdx.z * (long long)M * N;
    }

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

    BCopy b_copy(B, ldb, threadIdx.x, n0, N, kb);
    ACopy a_copy(A, lda, threadIdx.x, m0, M, kb);  // unused on the register path
    // the register path (row-major A, ALOAD = 1): float4s along k, one tile ahead
    const int a_r0 = (tid % 16) + 16 * (tid / (16 * KQ));
    const int a_k = 4 * ((tid / 16) % KQ);
    const float* a_src = A + (long long)(m0 + a_r0) * lda + kb + a_k;

    int issued = 0;  // tiles whose cp.async copies were issued (B, and A off the register path)
    auto issue_async = [&]() {  // the next tile's copies into its stage; always one commit group
        if (issued < ktiles) {
            const int krem = kend - (kb + issued * BK);  // valid k rows in this tile
            b_copy.issue(Bs + (issued % STAGES) * B_STAGE, krem, B);
            if (!A_REG) a_copy.issue(As + (issued % STAGES) * A_STAGE, krem, A);
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
            for (int i = 0; i < TM; i += 4) load_fragment4<PIN == 1>(&ra[buf][wm * TM + i], as + wm * WSUBM + i);
#pragma unroll
        for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
            for (int j = 0; j < TN; j += 4) load_fragment4<PIN == 1>(&rb[buf][wn * TN + j], bs + wn * WSUBN + j);
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

// Reduction family: the Harris / How_to_optimize ladder of seed 004 (reduce0 -> reduce2 are the seed's own
// kernels), continued to warp shuffles and vectorized multi-block passes, plus the single-block final pass
// the library uses. Every kernel writes one partial per block; inputs of any length (out-of-range lanes add 0).
// Indices are 64-bit. Every kernel requires blockDim.x == BLOCK (a power of two, >= 64).

#include "common.cuh"

template <typename Acc> __device__ __forceinline__ Acc hsum(float4 v) { return ((Acc)v.x + (Acc)v.y) + ((Acc)v.z + (Acc)v.w); }
template <typename Acc> __device__ __forceinline__ Acc hsum(int4 v) { return ((Acc)v.x + (Acc)v.y) + ((Acc)v.z + (Acc)v.w); }
template <typename Acc> __device__ __forceinline__ Acc hsum(double2 v) { return (Acc)v.x + (Acc)v.y; }

// Block-wide sum by warp shuffles; the result is valid in thread 0. Called once per kernel.
template <typename T, int BLOCK> __device__ __forceinline__ T block_sum(T v) {
    __shared__ T warp_sums[BLOCK / 32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < BLOCK / 32 ? warp_sums[lane] : T(0);
        v = warp_sum(v);
    }
    return v;
}

// The prologue of reduce0..2: one element per thread into shared memory, zero past the end.
template <typename T>
__device__ __forceinline__ void load_one_per_thread(T* sdata, const T* __restrict__ in, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    sdata[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
}

// reduce0: interleaved addressing, `tid % (2*s)`: divergent warps and a slow modulo (seed 004 reduce; Harris #1)
template <typename T, int BLOCK>
__global__ void reduce0(T* __restrict__ out, const T* __restrict__ in, long long n) {
    __shared__ T sdata[BLOCK];
    const unsigned tid = threadIdx.x;
    load_one_per_thread(sdata, in, n);
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// reduce1: strided index `2*s*tid`: no divergence in early steps, but 2..16-way bank conflicts (seed 004 reduce1; Harris #2)
template <typename T, int BLOCK>
__global__ void reduce1(T* __restrict__ out, const T* __restrict__ in, long long n) {
    __shared__ T sdata[BLOCK];
    const unsigned tid = threadIdx.x;
    load_one_per_thread(sdata, in, n);
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        const unsigned index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// reduce2: sequential addressing, stride halves from blockDim/2: conflict-free (seed 004 reduce2; Harris #3)
template <typename T, int BLOCK>
__global__ void reduce2(T* __restrict__ out, const T* __restrict__ in, long long n) {
    __shared__ T sdata[BLOCK];
    const unsigned tid = threadIdx.x;
    load_one_per_thread(sdata, in, n);
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// first add during load: each block reads 2*BLOCK elements, so no thread idles in the first step (Harris #4)
template <typename T, int BLOCK> __device__ __forceinline__ T load_pair(const T* __restrict__ in, long long n) {
    const long long i = (long long)blockIdx.x * (2 * BLOCK) + threadIdx.x;
    T v = i < n ? in[i] : T(0);
    if (i + BLOCK < n) v += in[i + BLOCK];
    return v;
}

// reduce3: reduce2 with the first add during load: half the blocks (Harris #4)
template <typename T, int BLOCK>
__global__ void reduce3(T* __restrict__ out, const T* __restrict__ in, long long n) {
    __shared__ T sdata[BLOCK];
    const unsigned tid = threadIdx.x;
    sdata[tid] = load_pair<T, BLOCK>(in, n);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// reduce4: reduce3 with the last warp unrolled; __syncwarp between each read and write keeps the
// warp-synchronous steps race-free under independent thread scheduling (Harris #5, Volta-safe)
template <typename T, int BLOCK>
__global__ void reduce4(T* __restrict__ out, const T* __restrict__ in, long long n) {
    __shared__ T sdata[BLOCK];
    const unsigned tid = threadIdx.x;
    sdata[tid] = load_pair<T, BLOCK>(in, n);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        volatile T* vs = sdata;
        T v = vs[tid];
#pragma unroll
        for (int off = 32; off > 0; off >>= 1) {
            v += vs[tid + off];
            __syncwarp();
            vs[tid] = v;
            __syncwarp();
        }
        if (tid == 0) out[blockIdx.x] = v;
    }
}

// reduce5: first add during load, then warp shuffles (__shfl_down_sync): shared memory only for 8 warp sums
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce5(T* __restrict__ out, const T* __restrict__ in, long long n) {
    const T v = block_sum<T, BLOCK>(load_pair<T, BLOCK>(in, n));
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// 16-byte read-only load. LOAD 0: __ldg (ld.global.nc); 1: PTX ld.global.nc.L1::no_allocate.L2::256B (read once,
// the L2 fetches 256-byte blocks; the L2 size hint is sm_80+ PTX, so kernels/reduce.py declares LOAD 1 min_sm 80);
// 2: ld.global.nc.L1::no_allocate only (read once, no L1 line allocated; sm_70+)
template <int LOAD> __device__ __forceinline__ uint4 ld_nc16(const void* p) {
    uint4 r;
    if constexpr (LOAD == 1) {
#if __CUDA_ARCH__ >= 800
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
#else
        static_assert(LOAD != 1, "LOAD 1 (the L2::256B hint) needs sm_80 or newer");
#endif
    } else
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}
template <int LOAD, typename V> __device__ __forceinline__ V load16(const V* p) {
    if constexpr (LOAD == 0) {
        return __ldg(p);
    } else {
        union {
            uint4 u;
            V v;
        } c;
        c.u = ld_nc16<LOAD>(p);
        return c.v;
    }
}

// sum of the N vectors r[0], r[S], r[2S], ... as a balanced tree: element u meets u + N/2 first (depth log2 N; a
// recursion, so no array index survives to run time: a loop over an accumulator array left it in local memory)
template <typename Acc, int N, int S = 1, typename V> __device__ __forceinline__ Acc pairwise_hsum(const V* r) {
    if constexpr (N == 1) return hsum<Acc>(r[0]);
    else return pairwise_hsum<Acc, N / 2, 2 * S>(r) + pairwise_hsum<Acc, N / 2, 2 * S>(r + S);
}

// UNROLL independent 16-byte loads (v[base + u*BLOCK], all in range) before any add, summed pairwise into acc
template <typename Acc, int BLOCK, int UNROLL, int LOAD, typename V>
__device__ __forceinline__ void add_batch(Acc& acc, const V* __restrict__ v, long long base) {
    V r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = load16<LOAD>(v + base + u * BLOCK);
    acc += pairwise_hsum<Acc, UNROLL>(r);
}

// the loads of a batch that fall before `end`, one at a time
template <typename Acc, int BLOCK, int UNROLL, int LOAD, typename V>
__device__ __forceinline__ void add_partial_batch(Acc& acc, const V* __restrict__ v, long long base, long long end) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long j = base + (long long)u * BLOCK;
        if (j < end) acc += hsum<Acc>(load16<LOAD>(v + j));
    }
}

// One thread's share of a multi-block pass: head/tail elements outside 16-byte alignment first, then the
// 16-byte vectors in batches of UNROLL loads per thread (a tile of BLOCK x UNROLL vectors per block).
// MAP 0: each block reads an even, contiguous share (boundaries on 512 bytes, so blocks finish together);
// MAP 1: strip-mined tiles, tile t to block t mod gridDim (CUB's GRID_MAPPING_STRIP_MINE): the resident blocks
// sweep the array together; the partial last tile goes to the block whose turn it is.
template <typename T, typename Acc, int BLOCK, int UNROLL, int LOAD, int MAP>
__device__ __forceinline__ Acc thread_share(const T* __restrict__ in, long long n) {
    typedef typename Vec16<T>::type V;
    constexpr int W = sizeof(V) / sizeof(T);
    const unsigned tid = threadIdx.x;
    long long head = (long long)(((16u - ((unsigned)(unsigned long long)in & 15u)) & 15u) / sizeof(T));
    if (head > n) head = n;
    const long long nv = (n - head) / W;
    const long long tail0 = head + nv * W;
    const long long g = (long long)blockIdx.x * BLOCK + tid;
    Acc acc = Acc(0);
    if (g < head) acc += (Acc)in[g];
    if (g < n - tail0) acc += (Acc)in[tail0 + g];
    const V* __restrict__ v = reinterpret_cast<const V*>(in + head);
    if constexpr (MAP == 0) {
        const long long chunks = (nv + 31) / 32;
        const long long begin = min(nv, chunks * blockIdx.x / gridDim.x * 32);
        const long long end = min(nv, chunks * (blockIdx.x + 1) / gridDim.x * 32);
        long long base = begin + tid;
        for (; base + (UNROLL - 1) * BLOCK < end; base += UNROLL * BLOCK) add_batch<Acc, BLOCK, UNROLL, LOAD>(acc, v, base);
        add_partial_batch<Acc, BLOCK, UNROLL, LOAD>(acc, v, base, end);
    } else {
        constexpr long long TILE = (long long)BLOCK * UNROLL;
        const long long full = nv / TILE;
        long long t = blockIdx.x;
        for (; t < full; t += gridDim.x) add_batch<Acc, BLOCK, UNROLL, LOAD>(acc, v, t * TILE + tid);
        if (t == full) add_partial_batch<Acc, BLOCK, UNROLL, LOAD>(acc, v, full * TILE + tid, nv);
    }
    return acc;
}

// Min blocks per SM for __launch_bounds__: the register budget ptxas must meet (without one it sinks the loads
// to their first use, 4 in flight). x16 needs ~80 registers for its 64 loaded words (3 blocks of 256 fit);
// 8-byte accumulators need more registers than 2048 threads allow at x4. x4 with 4-byte sums gets 2048 threads
// (32 registers) up to sm_90; sm_100/sm_103's ptxas needs one more 64-bit register in reduce7's even-share path
// (8 B spilled at 32), so there it gets 1536 threads (40 registers, as sm_86/sm_120 get from their 1536-thread SMs).
#if __CUDA_ARCH__ >= 1000
#define REDUCE_X4_THREADS 1536
#else
#define REDUCE_X4_THREADS 2048
#endif
__host__ __device__ constexpr int reduce_min_blocks(int block, int unroll, int acc_bytes) {
    const int threads = unroll >= 16 ? 512 : (unroll >= 8 || acc_bytes > 4 ? 1024 : REDUCE_X4_THREADS);
    return threads / block > 0 ? threads / block : 1;
}
#define REDUCE_BOUNDS __launch_bounds__(BLOCK, reduce_min_blocks(BLOCK, UNROLL, sizeof(Acc)))

// reduce6: vectorized multi-block pass (16-byte loads, UNROLL per thread, grid of a few waves at most), one
// partial per block; a second launch (reduce_final) adds the partials: deterministic, no atomics
template <typename T, typename Acc, int BLOCK, int UNROLL, int LOAD, int MAP>
__global__ void REDUCE_BOUNDS reduce6(Acc* __restrict__ partial, const T* __restrict__ in, long long n) {
    const Acc acc = block_sum<Acc, BLOCK>(thread_share<T, Acc, BLOCK, UNROLL, LOAD, MAP>(in, n));
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// reduce7: reduce6 in one launch: the last block to finish (an integer atomic ticket after __threadfence)
// adds the partials in a fixed order, writes *out and resets the ticket (cuda-samples threadFenceReduction):
// deterministic, no float atomics, no second launch.
template <typename T, typename Acc, int BLOCK, int UNROLL, int LOAD, int MAP>
__global__ void REDUCE_BOUNDS reduce7(Acc* __restrict__ out, Acc* __restrict__ partial, unsigned* __restrict__ ticket,
                                      const T* __restrict__ in, long long n) {
    __shared__ bool last;
    Acc acc = block_sum<Acc, BLOCK>(thread_share<T, Acc, BLOCK, UNROLL, LOAD, MAP>(in, n));
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = acc;
        __threadfence();  // the partial is visible device-wide before the ticket is taken
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();      // also orders block_sum's warp_sums reads before its reuse below
    if (!last) return;
    __threadfence();
    acc = Acc(0);
#pragma unroll 8
    for (unsigned i = threadIdx.x; i < gridDim.x; i += BLOCK) acc += __ldcg(partial + i);  // L2: other SMs wrote them
    acc = block_sum<Acc, BLOCK>(acc);
    if (threadIdx.x == 0) {
        *out = acc;
        *ticket = 0u;  // ready for the next launch on this stream
    }
}

// reduce_final: one block adds n values (the partials of a first pass, or a small input) into *out
template <typename T, typename Acc, int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_final(Acc* __restrict__ out, const T* __restrict__ in, long long n) {
    Acc acc = Acc(0);
#pragma unroll 4
    for (long long i = threadIdx.x; i < n; i += BLOCK) acc += (Acc)in[i];
    acc = block_sum<Acc, BLOCK>(acc);
    if (threadIdx.x == 0) *out = acc;
}

// ---------------------------------------------------------------- reductions along axes (gpumemlab.sum(axis=...))
// The library collapses the reduced axes of a contiguous array to `n` and the kept axes around them to `outer`
// (before) and `inner` (after). Every result is `acc / divisor` (1 for a sum, the count for a mean), in Acc.

template <typename Acc> __device__ __forceinline__ Acc hsum(float v) { return (Acc)v; }
template <typename Acc> __device__ __forceinline__ Acc hsum(double v) { return (Acc)v; }
template <typename Acc> __device__ __forceinline__ Acc hsum(int v) { return (Acc)v; }
template <typename Acc> __device__ __forceinline__ Acc hsum(long long v) { return (Acc)v; }
template <typename Acc> __device__ __forceinline__ Acc hsum(longlong2 v) { return (Acc)v.x + (Acc)v.y; }

// element type, or its 16-byte vector when VEC (then the row length and the base are multiples of 16 bytes)
template <typename T, bool VEC> struct Load { typedef T type; };
template <typename T> struct Load<T, true> { typedef typename Vec16<T>::type type; };

// sum_rows (inner == 1): out[r] = sum of row r (n contiguous elements). TPR threads per row: 1 for rows of at most
// 128 bytes (a warp reads 32 adjacent rows: each load instruction spans them with stride n, and the lines it brings
// into L1 serve the row's next loads, so DRAM sees every byte once), 32 (a warp; BLOCK/32 rows per block) for short
// rows, BLOCK (the block) for long ones; each thread keeps 4 loads in flight. Few long
// rows: blockIdx.y splits each row into runs of `per_split` vectors (TPR == BLOCK only), each written to
// partial[split][r] for sum_splits to add in order.
// No __launch_bounds__ on sum_rows / sum_cols: with it ptxas caps registers low enough to spill some
// instantiations (int->double, long long) on sm_100 / sm_120; without it none spills on any supported arch.
template <typename T, typename Acc, bool VEC, int TPR, int BLOCK>
__global__ void sum_rows(Acc* __restrict__ out, Acc* __restrict__ partial, const T* __restrict__ in,
                         long long rows, long long n, long long per_split, Acc divisor) {
    typedef typename Load<T, VEC>::type V;
    constexpr int W = sizeof(V) / sizeof(T);
    const long long r = (long long)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    const long long nv = n / W;
    const long long end = (blockIdx.y + 1) * per_split < nv ? (blockIdx.y + 1) * per_split : nv;
    const int lane = threadIdx.x % TPR;
    Acc acc = Acc(0);
    if (r < rows) {
        const V* __restrict__ row = reinterpret_cast<const V*>(in + r * n);
        long long i = blockIdx.y * per_split + lane;
        for (; i + 3 * TPR < end; i += 4 * TPR) {
            const V a = __ldg(row + i), b = __ldg(row + i + TPR), c = __ldg(row + i + 2 * TPR), d = __ldg(row + i + 3 * TPR);
            acc += (hsum<Acc>(a) + hsum<Acc>(b)) + (hsum<Acc>(c) + hsum<Acc>(d));
        }
        for (; i < end; i += TPR) acc += hsum<Acc>(__ldg(row + i));
    }
    if constexpr (TPR == 1) {
        if (r < rows) out[r] = acc / divisor;
    } else if constexpr (TPR == 32) {
        acc = warp_sum(acc);  // the whole warp shares one row, so every lane takes part
        if (lane == 0 && r < rows) out[r] = acc / divisor;
    } else {
        acc = block_sum<Acc, BLOCK>(acc);
        if (threadIdx.x == 0) {
            if (gridDim.y == 1) out[r] = acc / divisor;
            else partial[blockIdx.y * rows + r] = acc;
        }
    }
}

// store16: four (two) results in one 16-byte store. Inline PTX: a vector value built from scalars is stored as
// scalars by the compiler, which leaves each sector partly written by every store instruction of a warp.
__device__ __forceinline__ void store16(float* p, const float* a) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a[0]), "f"(a[1]), "f"(a[2]), "f"(a[3])
                 : "memory");
}
__device__ __forceinline__ void store16(int* p, const int* a) {
    asm volatile("st.global.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3])
                 : "memory");
}
__device__ __forceinline__ void store16(double* p, const double* a) {
    asm volatile("st.global.v2.f64 [%0], {%1, %2};" ::"l"(p), "d"(a[0]), "d"(a[1]) : "memory");
}
__device__ __forceinline__ void store16(long long* p, const long long* a) {
    asm volatile("st.global.v2.s64 [%0], {%1, %2};" ::"l"(p), "l"(a[0]), "l"(a[1]) : "memory");
}

// store_results: out[0..W) = acc[0..W) / divisor (no division for a sum), as 16-byte stores where out is 16-byte
// aligned: whole sectors written at once (a warp's scalar stores leave every sector partly written in turn)
template <typename Acc, int W>
__device__ __forceinline__ void store_results(Acc* __restrict__ out, Acc* acc, Acc divisor) {
    constexpr int PER = 16 / sizeof(Acc);  // results per 16-byte store
    if (divisor != Acc(1)) {
#pragma unroll
        for (int k = 0; k < W; ++k) acc[k] = acc[k] / divisor;
    }
    if constexpr (W % PER == 0) {
        if ((reinterpret_cast<unsigned long long>(out) & 15u) == 0) {
#pragma unroll
            for (int v = 0; v < W / PER; ++v) store16(out + v * PER, acc + v * PER);
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < W; ++k) out[k] = acc[k];  // a misaligned out (an offset view)
}

// sum_cols (inner > 1): out[o][c] = sum over j of in[o][j][c]. Coalesced: the 32 threads of a warp own 32*W
// adjacent columns and read one row of them together (W = 16 bytes / element when VEC); the RB warps of a block
// take every RB-th row. blockIdx.x -> (o, column block); blockIdx.y -> a split of the rows: with gridDim.y > 1
// each split writes partial[split][o][c] and sum_splits adds them in split order (deterministic, no atomics).
template <typename T, typename Acc, bool VEC, int RB>
__global__ void sum_cols(Acc* __restrict__ out, Acc* __restrict__ partial, const T* __restrict__ in,
                         long long n, long long inner, long long rows_per_split, Acc divisor) {
    typedef typename Load<T, VEC>::type V;
    constexpr int W = sizeof(V) / sizeof(T);
    __shared__ Acc s[RB][32 * W];
    const long long col_blocks = (inner + 32 * W - 1) / (32 * W);
    const long long o = blockIdx.x / col_blocks;
    const long long c = ((blockIdx.x % col_blocks) * 32 + threadIdx.x) * W;
    const long long j0 = blockIdx.y * rows_per_split;
    const long long j1 = j0 + rows_per_split < n ? j0 + rows_per_split : n;
    Acc acc[W];
#pragma unroll
    for (int k = 0; k < W; ++k) acc[k] = Acc(0);
    if (c < inner) {
        const T* __restrict__ base = in + o * n * inner + c;
        const long long step = RB * inner;
        long long j = j0 + threadIdx.y;
        const T* p = base + j * inner;
        for (; j + 3 * RB < j1; j += 4 * RB, p += 4 * step) {
            const V a = __ldg(reinterpret_cast<const V*>(p)), b = __ldg(reinterpret_cast<const V*>(p + step));
            const V e = __ldg(reinterpret_cast<const V*>(p + 2 * step)), f = __ldg(reinterpret_cast<const V*>(p + 3 * step));
            const T* ta = reinterpret_cast<const T*>(&a);
            const T* tb = reinterpret_cast<const T*>(&b);
            const T* te = reinterpret_cast<const T*>(&e);
            const T* tf = reinterpret_cast<const T*>(&f);
#pragma unroll
            for (int k = 0; k < W; ++k) acc[k] += ((Acc)ta[k] + (Acc)tb[k]) + ((Acc)te[k] + (Acc)tf[k]);
        }
        for (; j < j1; j += RB, p += step) {
            const V a = __ldg(reinterpret_cast<const V*>(p));
            const T* ta = reinterpret_cast<const T*>(&a);
#pragma unroll
            for (int k = 0; k < W; ++k) acc[k] += (Acc)ta[k];
        }
    }
#pragma unroll
    for (int k = 0; k < W; ++k) s[threadIdx.y][threadIdx.x * W + k] = acc[k];
    __syncthreads();
    if (threadIdx.y == 0 && c < inner) {
        Acc t[W];
#pragma unroll
        for (int k = 0; k < W; ++k) {
            t[k] = s[0][threadIdx.x * W + k];
#pragma unroll
            for (int y = 1; y < RB; ++y) t[k] += s[y][threadIdx.x * W + k];
        }
        // all W columns are there: with VEC inner % W == 0, without it W == 1
        Acc* dst = gridDim.y == 1 ? out + o * inner + c
                                  : partial + ((long long)blockIdx.y * gridDim.x / col_blocks + o) * inner + c;
        store_results<Acc, W>(dst, t, gridDim.y == 1 ? divisor : Acc(1));
    }
}

// sum_cols_thread (inner > 1, columns enough to fill the GPU): a thread per W adjacent columns of one o (W = 16
// bytes / element when VEC), walking down the n rows 4 at a time with their loads issued together (predicated past
// the end); a warp's 32 threads read 32 W-vectors of a row together (coalesced). No block reduction and no split:
// each result is one thread's sum, in row order.
template <typename T, typename Acc, bool VEC>
__global__ void sum_cols_thread(Acc* __restrict__ out, const T* __restrict__ in, long long outer, long long n,
                                long long inner, Acc divisor) {
    typedef typename Load<T, VEC>::type V;
    constexpr int W = sizeof(V) / sizeof(T);
    const long long vectors = inner / W;  // with VEC the host checks inner % W == 0
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= outer * vectors) return;
    const long long o = outer == 1 ? 0 : g / vectors, c = (g - o * vectors) * W;  // no 64-bit division for one o
    const T* p = in + o * n * inner + c;
    Acc acc[W];
#pragma unroll
    for (int k = 0; k < W; ++k) acc[k] = Acc(0);
    const V zero = {};
    for (long long j = 0; j < n; j += 4, p += 4 * inner) {
        V v[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) v[r] = j + r < n ? __ldg(reinterpret_cast<const V*>(p + r * inner)) : zero;
        const T* a = reinterpret_cast<const T*>(&v[0]);
        const T* b = reinterpret_cast<const T*>(&v[1]);
        const T* e = reinterpret_cast<const T*>(&v[2]);
        const T* f = reinterpret_cast<const T*>(&v[3]);
#pragma unroll
        for (int k = 0; k < W; ++k) acc[k] += ((Acc)a[k] + (Acc)b[k]) + ((Acc)e[k] + (Acc)f[k]);
    }
    store_results<Acc, W>(out + o * inner + c, acc, divisor);
}

// block_sums: the block's sums of each thread's INNER values, valid in thread 0 (acc[k]); s: the block's scratch. Ends
// with warp 0 still reading s: a __syncthreads must come before s is written again.
template <typename Acc, int INNER, int BLOCK>
__device__ __forceinline__ void block_sums(Acc (&acc)[INNER], Acc (&s)[INNER][BLOCK / 32]) {
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < INNER; ++k) {
        const Acc w = warp_sum(acc[k]);
        if (lane == 0) s[k][warp] = w;
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int k = 0; k < INNER; ++k) acc[k] = warp_sum(lane < BLOCK / 32 ? s[k][lane] : Acc(0));
    }
}

// sum_cols_narrow<T, Acc, VEC, INNER, BLOCK> (inner == INNER, a few columns, many rows): the n rows of one o are a
// contiguous run of n * INNER elements, read as periods of P = lcm(W, INNER) elements (P / W loads of W, W = 16 bytes
// / element when VEC). Element k of every period belongs to column k % INNER, so a thread keeps INNER sums and a warp
// reads 32 adjacent periods (coalesced) instead of leaving 32 - INNER lanes idle. blockIdx.x = o; the gridDim.y blocks
// (splits) of a run take its periods in grid-stride order, split 0 also the tail (fewer than P elements). With
// gridDim.y > 1 each writes partial[split][o][c], and the last of run o's blocks to finish (an integer ticket per
// run, as reduce7) adds them, its threads taking every BLOCK-th split in order, then a block sum: one launch,
// deterministic, no float atomics; it leaves ticket[o] at 0. With VEC the host checks that every run starts on 16
// bytes. No __launch_bounds__, as for sum_rows (a spill on sm_100).
__host__ __device__ constexpr int gcd_int(int a, int b) { return b == 0 ? a : gcd_int(b, a % b); }
template <typename T, typename Acc, bool VEC, int INNER, int BLOCK>
__global__ void sum_cols_narrow(Acc* __restrict__ out, Acc* __restrict__ partial, unsigned* __restrict__ ticket,
                                const T* __restrict__ in, long long n, Acc divisor) {
    typedef typename Load<T, VEC>::type V;
    constexpr int W = sizeof(V) / sizeof(T);
    constexpr int P = W / gcd_int(W, INNER) * INNER;  // lcm(W, INNER)
    constexpr int Q = P / W;
    __shared__ Acc s[INNER][BLOCK / 32];
    __shared__ bool last;
    const long long o = blockIdx.x, run = n * INNER, periods = run / P;
    const T* base = in + o * run;
    Acc acc[INNER];
#pragma unroll
    for (int k = 0; k < INNER; ++k) acc[k] = Acc(0);
    for (long long i = (long long)blockIdx.y * BLOCK + threadIdx.x; i < periods; i += (long long)gridDim.y * BLOCK) {
        const V* v = reinterpret_cast<const V*>(base + i * P);
#pragma unroll
        for (int l = 0; l < Q; ++l) {
            const V x = __ldg(v + l);
            const T* t = reinterpret_cast<const T*>(&x);
#pragma unroll
            for (int k = 0; k < W; ++k) acc[(l * W + k) % INNER] += (Acc)t[k];
        }
    }
    block_sums<Acc, INNER, BLOCK>(acc, s);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < INNER; ++k) {
            Acc w = acc[k];
            if (blockIdx.y == 0)  // the tail (fewer than P elements; its first is in column 0)
                for (long long e = periods * P + k; e < run; e += INNER) w += (Acc)base[e];
            if (gridDim.y == 1) out[o * INNER + k] = w / divisor;
            else partial[((long long)blockIdx.y * gridDim.x + o) * INNER + k] = w;
        }
        if (gridDim.y > 1) {
            __threadfence();  // the partials are visible device-wide before the ticket is taken
            last = atomicAdd(ticket + o, 1u) == gridDim.y - 1;
        }
    }
    if (gridDim.y == 1) return;
    __syncthreads();  // last is set; warp 0's reads of s are done
    if (!last) return;
    __threadfence();
#pragma unroll
    for (int k = 0; k < INNER; ++k) acc[k] = Acc(0);
    for (unsigned y = threadIdx.x; y < gridDim.y; y += BLOCK) {
#pragma unroll
        for (int k = 0; k < INNER; ++k) acc[k] += __ldcg(partial + ((long long)y * gridDim.x + o) * INNER + k);
    }
    block_sums<Acc, INNER, BLOCK>(acc, s);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < INNER; ++k) out[o * INNER + k] = acc[k] / divisor;
        ticket[o] = 0u;  // ready for the next launch on this stream
    }
}

// sum_splits_wide: out[i] = (the splits' partials of result i) / divisor for many splits of few results: a block per
// result, its threads taking every BLOCK-th split, then a block sum (a fixed tree: deterministic). sum_splits' one
// thread per result would chain one add per split.
template <typename Acc, int BLOCK>
__global__ void __launch_bounds__(BLOCK) sum_splits_wide(Acc* __restrict__ out, const Acc* __restrict__ partial,
                                                         long long m, int splits, Acc divisor) {
    for (long long i = blockIdx.x; i < m; i += gridDim.x) {
        Acc t = Acc(0);
        for (int s = threadIdx.x; s < splits; s += BLOCK) t += partial[(long long)s * m + i];
        t = block_sum<Acc, BLOCK>(t);
        if (threadIdx.x == 0) out[i] = t / divisor;
        __syncthreads();  // block_sum's shared memory serves the next result
    }
}

// sum_splits: out[i] = (partial[0][i] + partial[1][i] + ...) / divisor, the splits in order
template <typename Acc>
__global__ void __launch_bounds__(256) sum_splits(Acc* __restrict__ out, const Acc* __restrict__ partial, long long m,
                                                  int splits, Acc divisor) {
    for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < m; i += (long long)gridDim.x * 256) {
        Acc t = partial[i];
        for (int s = 1; s < splits; ++s) t += partial[(long long)s * m + i];
        out[i] = t / divisor;
    }
}

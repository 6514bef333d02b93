// Transpose family (cuda-samples `transpose`; seeds 001 and 003: coalescing through shared memory, padding
// against bank conflicts). `in` is rows x cols (row-major), `out` is cols x rows; copies keep the shape.
// Any shape: tiles past the edge are masked. Tile rows beyond gridDim.y are covered by a grid-stride loop
// so very tall matrices fit the 65535 limit of gridDim.y. Block: (TILE, BLOCK_ROWS) threads.

// copy_tile<SHARED=false>: row-to-row copy with the transpose's indexing, the ceiling (cuda-samples copy);
// SHARED=true stages each tile through shared memory first (cuda-samples copySharedMem)
template <typename T, int TILE, int BLOCK_ROWS, bool SHARED>
__global__ void copy_tile(T* __restrict__ out, const T* __restrict__ in, int rows, int cols) {
    __shared__ T tile[SHARED ? TILE : 1][SHARED ? TILE : 1];
    const int tiles_y = (rows + TILE - 1) / TILE;
    const int x = blockIdx.x * TILE + threadIdx.x;
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int y = by * TILE + threadIdx.y;
#pragma unroll
        for (int j = 0; j < TILE; j += BLOCK_ROWS) {
            const bool ok = x < cols && y + j < rows;
            if constexpr (SHARED) {
                if (ok) tile[threadIdx.y + j][threadIdx.x] = in[(long long)(y + j) * cols + x];
            } else {
                if (ok) out[(long long)(y + j) * cols + x] = in[(long long)(y + j) * cols + x];
            }
        }
        if constexpr (SHARED) {
            __syncthreads();
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < cols && y + j < rows) out[(long long)(y + j) * cols + x] = tile[threadIdx.y + j][threadIdx.x];
            __syncthreads();
        }
    }
}

// transpose_naive: reads coalesced, writes strided by `rows` (one sector per element) (cuda-samples transposeNaive)
template <typename T, int TILE, int BLOCK_ROWS>
__global__ void transpose_naive(T* __restrict__ out, const T* __restrict__ in, int rows, int cols) {
    const int tiles_y = (rows + TILE - 1) / TILE;
    const int x = blockIdx.x * TILE + threadIdx.x;
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int y = by * TILE + threadIdx.y;
#pragma unroll
        for (int j = 0; j < TILE; j += BLOCK_ROWS)
            if (x < cols && y + j < rows) out[(long long)x * rows + y + j] = in[(long long)(y + j) * cols + x];
    }
}

// transpose_tiled<PAD>: coalesced both ways through a shared TILE x (TILE+PAD) tile (seed 003 / cuda-samples
// transposeCoalesced with PAD=0: 32-way bank conflicts on the column read; PAD=1: transposeNoBankConflicts;
// BLOCK_ROWS < TILE: each thread moves TILE/BLOCK_ROWS elements, the coarsened 32x8 form)
template <typename T, int TILE, int BLOCK_ROWS, int PAD>
__global__ void transpose_tiled(T* __restrict__ out, const T* __restrict__ in, int rows, int cols) {
    __shared__ T tile[TILE][TILE + PAD];
    const int tiles_y = (rows + TILE - 1) / TILE;
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        int x = blockIdx.x * TILE + threadIdx.x;
        int y = by * TILE + threadIdx.y;
#pragma unroll
        for (int j = 0; j < TILE; j += BLOCK_ROWS)
            if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(long long)(y + j) * cols + x];
        __syncthreads();
        x = by * TILE + threadIdx.x;          // column of out = row of in
        y = blockIdx.x * TILE + threadIdx.y;  // row of out = column of in
#pragma unroll
        for (int j = 0; j < TILE; j += BLOCK_ROWS)
            if (x < rows && y + j < cols) out[(long long)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        __syncthreads();  // the next tile overwrites `tile`
    }
}

template <typename V, typename T> struct Pack;
template <> struct Pack<float4, float> {
    static __device__ __forceinline__ float4 make(const float* e) { return make_float4(e[0], e[1], e[2], e[3]); }
};
template <> struct Pack<int4, int> {
    static __device__ __forceinline__ int4 make(const int* e) { return make_int4(e[0], e[1], e[2], e[3]); }
};
template <> struct Pack<double2, double> {
    static __device__ __forceinline__ double2 make(const double* e) { return make_double2(e[0], e[1]); }
};

// transpose_vec: TILE x TILE tile, 256 threads, 16-byte global loads AND stores (float4 / int4 / double2), each
// thread with TILE*TILE/(256*W) loads in flight; shared tile XOR-swizzled on 16-byte chunks (chunk ^ (row/W)%8)
// so the vector stores and the column gathers are both conflict-free. Needs rows % W == 0, cols % W == 0 and
// 16-byte aligned arrays (W = elements per vector); the library checks. Block: 256 threads (1-D).
// Interior tiles take an unmasked path, and MINB (min blocks per SM) keeps ptxas from interleaving each load
// with its shared store, so that all loads of a thread are in flight together.
// TR: the tile's rows (default TILE: square); a TR x TILE tile writes output rows of TR elements.
template <typename T, typename V, int TILE, int SPAN = 8, int TR = TILE> struct VecTile {
    static constexpr int NT = 256;
    static constexpr int W = sizeof(V) / sizeof(T);  // elements per 16-byte vector
    static constexpr int CPR = TILE / W;             // vectors (chunks) per tile row
    static constexpr int OCPR = TR / W;              // vectors per output row of the tile
    static constexpr int RPP = NT / CPR;             // tile rows loaded per pass
    static constexpr int LOADS = TR / RPP;           // vector loads per thread
    // swizzle width in chunks: 8 (as first written), or SPAN where a store instruction gathers SPAN chunks of one
    // tile column, so that they fall in distinct banks (at most the chunks of a row)
    static constexpr int SWZ = ((SPAN > 8 ? SPAN : 8) < CPR ? (SPAN > 8 ? SPAN : 8) : CPR) - 1;
    static_assert(CPR % 8 == 0 && TILE % 32 == 0 && TR % 32 == 0 && NT % CPR == 0, "tile shape");

    // the thread's LOADS vectors of the tile at (row0, col0), global -> registers
    template <bool MASK>
    static __device__ __forceinline__ void fetch(V (&buf)[LOADS], const V* __restrict__ in, int rows, int cols,
                                                 int row0, int col0) {
        const int q = threadIdx.x % CPR;
#pragma unroll
        for (int p = 0; p < LOADS; ++p) {
            const int r = threadIdx.x / CPR + p * RPP;
            const long long at = (long long)(row0 + r) * (cols / W) + col0 / W + q;
            if (!MASK || (row0 + r < rows && col0 + q * W < cols)) buf[p] = __ldg(in + at);
            else buf[p] = V{};
        }
    }

    // registers -> the swizzled shared tile
    static __device__ __forceinline__ void put(V* __restrict__ tile, const V (&buf)[LOADS]) {
        const int q = threadIdx.x % CPR;
#pragma unroll
        for (int p = 0; p < LOADS; ++p) {
            const int r = threadIdx.x / CPR + p * RPP;
            tile[r * CPR + (q ^ ((r / W) & SWZ))] = buf[p];
        }
    }

    // fetch, unmasked for an interior tile
    static __device__ __forceinline__ void fetch_at(V (&buf)[LOADS], const V* __restrict__ in, int rows, int cols,
                                                    int row0, int col0) {
        if (row0 + TR <= rows && col0 + TILE <= cols) fetch<false>(buf, in, rows, cols, row0, col0);
        else fetch<true>(buf, in, rows, cols, row0, col0);
    }

    // SPAN (the struct's): lanes per output row in one store instruction (8: 128-byte pieces; 16 or 32: a float
    // tile row's 256 or 512 bytes)
    template <bool MASK>
    static __device__ __forceinline__ void store(V* __restrict__ out, const T* __restrict__ tile, int rows, int cols,
                                                 int row0, int col0) {
        static_assert(OCPR % SPAN == 0 && NT % SPAN == 0, "span");
        constexpr int ROWS = NT / SPAN;     // output rows per pass
        const int tk = threadIdx.x % SPAN;  // vector along the output row
        const int tj = threadIdx.x / SPAN;  // output row within the tile
#pragma unroll
        for (int a = 0; a < TILE / ROWS; ++a) {
#pragma unroll
            for (int b = 0; b < OCPR / SPAN; ++b) {
                const int j = tj + ROWS * a;  // output row within the tile (= input column)
                const int k = tk + SPAN * b;  // output vector: input rows k*W .. k*W+W-1
                T e[W];
#pragma unroll
                for (int i = 0; i < W; ++i) {
                    const int r = k * W + i;
                    e[i] = tile[r * TILE + (((j / W) ^ ((r / W) & SWZ)) * W) + j % W];
                }
                if (!MASK || (col0 + j < cols && row0 + k * W < rows))
                    out[(long long)(col0 + j) * (rows / W) + row0 / W + k] = Pack<V, T>::make(e);
            }
        }
    }
};

// TILE x TR elements moved per block (TR: tile rows, default TILE, so that a store instruction can write longer output
// runs with the same tile width); SPAN: lanes per output row of a store instruction (VecTile::store). A block moves
// tile column blockIdx.x, tile rows blockIdx.y, blockIdx.y + gridDim.y, ... (a grid capped at 65535 rows of tiles).
template <typename T, typename V, int TILE, int MINB, int SPAN = 8, int TR = TILE>
__global__ void __launch_bounds__(256, MINB) transpose_vec(T* __restrict__ out, const T* __restrict__ in, int rows, int cols) {
    typedef VecTile<T, V, TILE, SPAN, TR> VT;
    static_assert(TR * TILE * sizeof(T) <= 48 * 1024, "the tile is static shared memory");
    __shared__ V tile[TR * TILE / VT::W];
    const V* __restrict__ in_v = reinterpret_cast<const V*>(in);
    V* __restrict__ out_v = reinterpret_cast<V*>(out);
    const int tiles_y = (rows + TR - 1) / TR;
    const int col0 = blockIdx.x * TILE;
    const T* tile_e = reinterpret_cast<const T*>(tile);
    V buf[VT::LOADS];
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int row0 = by * TR;
        const bool interior = row0 + TR <= rows && col0 + TILE <= cols;
        VT::fetch_at(buf, in_v, rows, cols, row0, col0);
        VT::put(tile, buf);
        __syncthreads();
        if (interior) VT::template store<false>(out_v, tile_e, rows, cols, row0, col0);
        else VT::template store<true>(out_v, tile_e, rows, cols, row0, col0);
        __syncthreads();
    }
}

// transpose_thin: one side s < 32 (the other, L, long). A block moves `chunk` positions of the long side: in global
// memory they are s runs of `chunk` elements (stride L) on one side and one contiguous run of chunk*s elements on
// the other, so both the loads and the stores are coalesced (a 32-wide tile would leave 32-s of 32 lanes idle).
// SHORT_ROWS: in is s x L (out L x s: the contiguous side is out); else in is L x s (in is the contiguous side).
// chunk = 2^log_chunk ~ THIN_ELEMS / s keeps the bytes per block (and loads in flight per thread) the same for any
// s. The dynamic shared tile is s rows of `pitch` = chunk + ceil(32/s) elements: the flat side's gathers (row f % s,
// column f / s) then fall in distinct banks. f / s is __umulhi(f, magic), magic = ceil(2^32 / s): exact for
// f < 2^16 (the host checks s*chunk does). BATCH loads per thread are issued before their shared stores.
template <typename T>
__device__ __forceinline__ int thin_slot(int f, int s, unsigned magic, int pitch) {
    const int q = s == 1 ? f : (int)__umulhi((unsigned)f, magic);
    return (f - q * s) * pitch + q;
}

template <typename T, bool SHORT_ROWS>
__global__ void __launch_bounds__(256) transpose_thin(T* __restrict__ out, const T* __restrict__ in, int rows, int cols,
                                                      int log_chunk, int pitch, unsigned magic) {
    constexpr int BATCH = 8;
    extern __shared__ __align__(16) unsigned char thin_smem[];
    T* tile = reinterpret_cast<T*>(thin_smem);
    const int s = SHORT_ROWS ? rows : cols;
    const long long L = SHORT_ROWS ? cols : rows;
    const int chunk = 1 << log_chunk;
    const long long p0 = (long long)blockIdx.x * chunk;
    const int len = L - p0 < chunk ? (int)(L - p0) : chunk;
    const int total = len * s;
    const int span = s << log_chunk;  // run-side index e: run e >> log_chunk, position e & (chunk - 1)
    // load: the input side into the tile; T v[BATCH] keeps BATCH loads in flight
    for (int base = threadIdx.x; base < (SHORT_ROWS ? span : total); base += 256 * BATCH) {
        T v[BATCH];
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            const int e = base + u * 256;
            if constexpr (SHORT_ROWS) {
                const int k = e & (chunk - 1);
                v[u] = e < span && k < len ? __ldg(in + (long long)(e >> log_chunk) * L + p0 + k) : T(0);
            } else {
                v[u] = e < total ? __ldg(in + p0 * s + e) : T(0);
            }
        }
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            const int e = base + u * 256;
            if constexpr (SHORT_ROWS) {
                if (e < span) tile[(e >> log_chunk) * pitch + (e & (chunk - 1))] = v[u];
            } else {
                if (e < total) tile[thin_slot<T>(e, s, magic, pitch)] = v[u];
            }
        }
    }
    __syncthreads();
    // store: the output side from the tile
    if constexpr (SHORT_ROWS) {
        for (int f = threadIdx.x; f < total; f += 256) out[p0 * s + f] = tile[thin_slot<T>(f, s, magic, pitch)];
    } else {
        for (int e = threadIdx.x; e < span; e += 256) {
            const int k = e & (chunk - 1);
            if (k < len) out[(long long)(e >> log_chunk) * L + p0 + k] = tile[(e >> log_chunk) * pitch + k];
        }
    }
}

// ---------------------------------------------------------------- the library's layouts: any strides, any dtype
// These move bytes: T is a word of the element's size (unsigned char .. uint4), never the dtype. Strides are in
// elements and may be negative or zero; the host folds the layout to its fewest dimensions first.

// transpose_strided: a batch of 2-D transposes through a padded TILE x TILE shared tile (seed 003's coalescing
// through shared memory, seed 001's padding: rows of an odd number of banks, so a column read is conflict-free), read and written through strides. Output axis `a` is contiguous in
// `out` (stride 1) and strided by in_sa in `in`; axis `b` is the input's fastest (in_sb, usually 1) and has output
// stride out_sb. Loads run along b, stores along a: both coalesced. Up to 4 batch axes (innermost first: sizes
// n0..n3, input strides i0..i3, output strides o0..o3), a tile row per blockIdx.y and a batch entry per blockIdx.z,
// both grid-strided past the 65535 limit. Block: (TILE, BLOCK_ROWS).
// clang-format off: it takes TILE * BLOCK_ROWS for a pointer declaration (TILE* BLOCK_ROWS)
template <typename T, int TILE, int BLOCK_ROWS>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_strided(
    T* __restrict__ out, const T* __restrict__ in, int na, int nb, long long in_sa, long long in_sb,
    long long out_sb, long long nbatch, long long n0, long long n1, long long n2, long long i0, long long i1,
    long long i2, long long i3, long long o0, long long o1, long long o2, long long o3) {
    // clang-format on
    constexpr int PAD = sizeof(T) >= 4 ? 1 : 4 / sizeof(T);  // a tile row of an odd number of 4-byte banks
    __shared__ T tile[TILE][TILE + PAD];
    const int tiles_b = (nb + TILE - 1) / TILE;
    const int a0 = blockIdx.x * TILE;
    for (long long z = blockIdx.z; z < nbatch; z += gridDim.z) {
        long long r = z, q;
        // clang-format off: one line per dimension of the batch index's mixed-radix split
        q = r / n0; long long in_z = (r - q * n0) * i0, out_z = (r - q * n0) * o0; r = q;
        q = r / n1; in_z += (r - q * n1) * i1; out_z += (r - q * n1) * o1; r = q;
        q = r / n2; in_z += (r - q * n2) * i2; out_z += (r - q * n2) * o2; r = q;
        in_z += r * i3; out_z += r * o3;
        // clang-format on
        for (int by = blockIdx.y; by < tiles_b; by += gridDim.y) {
            const int b0 = by * TILE;
            const int b = b0 + threadIdx.x;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                const int a = a0 + threadIdx.y + j;
                if (b < nb && a < na) tile[threadIdx.y + j][threadIdx.x] = in[in_z + a * in_sa + b * in_sb];
            }
            __syncthreads();
            const int a = a0 + threadIdx.x;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                const int bb = b0 + threadIdx.y + j;
                if (a < na && bb < nb) out[out_z + bb * out_sb + a] = tile[threadIdx.x][bb - b0];
            }
            __syncthreads();  // the next tile overwrites `tile`
        }
    }
}

// gather_strided: out[i] = in[offset(i)] for a C-contiguous out of `rank` <= 6 axes (innermost first: sizes n0..n4
// and the outermost implied, input strides s0..s5), I the index type (unsigned when the count fits 32 bits: cheaper
// divisions). UNROLL loads of a thread are issued before its stores. Block: 256 threads.
template <typename T, typename I>
__global__ void __launch_bounds__(256) gather_strided(
    T* __restrict__ out, const T* __restrict__ in, I n, int rank, I n0, I n1, I n2, I n3, I n4, long long s0,
    long long s1, long long s2, long long s3, long long s4, long long s5) {
    constexpr int UNROLL = 4;
    const I sizes[5] = {n0, n1, n2, n3, n4};
    const long long strides[6] = {s0, s1, s2, s3, s4, s5};
    const I step = (I)gridDim.x * 256 * UNROLL;
    for (I base = (I)blockIdx.x * 256 * UNROLL + threadIdx.x; base < n; base += step) {
        T v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            I r = base + (I)u * 256;
            if (r < n) {
                long long at = 0;
#pragma unroll
                for (int d = 0; d < 6; ++d) {  // no break: fully unrolled, the arrays stay in registers
                    if (d + 1 == rank) {  // the outermost axis: no division
                        at += (long long)r * strides[d];
                    } else if (d + 1 < rank) {
                        const I q = r / sizes[d < 5 ? d : 4];
                        at += (long long)(r - q * sizes[d < 5 ? d : 4]) * strides[d];
                        r = q;
                    }
                }
                v[u] = in[at];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            if (base + (I)u * 256 < n) out[base + (I)u * 256] = v[u];
    }
}

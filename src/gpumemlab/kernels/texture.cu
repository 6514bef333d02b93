// Texture-memory kernels (seed 001, "Textures in CUDA", "Texture Addressing", "Two CUDA Texture Types"):
// 2-D sampling at (row, col) coordinates through a texture object (hardware addressing and filtering)
// and the same sampling in software from global memory, the reference the texture unit is measured
// against. Coordinates are float2 (x = row, y = col); a sample's position in pixels is
// p = coordinate * scale + offset, pixel centers at integers (the convention of scipy's map_coordinates).

enum Address {
    CLAMP = 0,
    WRAP = 1,
    MIRROR = 2,
    BORDER = 3
};

// Where the exact (software-weighted) kernels read the 2x2 texels of a sample: plain or read-only-cache (__ldg)
// loads of single floats, __ldg of the aligned float4 holding (c, c + 1) of each row, or a texture object over a
// CUDA array (block-linear layout: a 32-byte sector holds a 4 x 2 texel tile): four point fetches at texel
// centers, or one tex2Dgather of the whole 2x2 footprint. Texels are selected in software either way (exact).
enum Source {
    GLOBAL = 0,
    LDG = 1,
    ROW4 = 2,
    TEX_POINTS = 3,
    TEX_GATHER = 4
};

// address<ADDR>: the texel an out-of-range index reads (-1: the border, which reads 0)
template <int ADDR>
__device__ __forceinline__ int address(int i, int size) {
    if (ADDR == CLAMP) return min(max(i, 0), size - 1);
    if (ADDR == WRAP) {
        i %= size;
        return i < 0 ? i + size : i;
    }
    if (ADDR == MIRROR) {  // half-sample symmetric: ... b a | a b c | c b ...
        const int period = 2 * size;
        int m = i % period;
        m = m < 0 ? m + period : m;
        return m < size ? m : period - 1 - m;
    }
    return (i < 0 || i >= size) ? -1 : i;
}

template <int ADDR, int LDG_>
__device__ __forceinline__ float texel(const float* img, long long pitch, int r, int c, int h, int w) {
    r = address<ADDR>(r, h);
    c = address<ADDR>(c, w);
    if (ADDR == BORDER && (r < 0 || c < 0)) return 0.0f;
    const float* p = img + (long long)r * pitch + c;
    return LDG_ ? __ldg(p) : *p;
}

// texel of a point-filtered texture at the center of the (software-addressed) texel: exact selection, whatever the
// texture unit's fixed-point coordinate rounding; the object's own address mode never comes into play
template <int ADDR>
__device__ __forceinline__ float tex_texel(cudaTextureObject_t tex, int r, int c, int h, int w) {
    r = address<ADDR>(r, h);
    c = address<ADDR>(c, w);
    const float t = tex2D<float>(tex, c + 0.5f, r + 0.5f);
    return (ADDR == BORDER && (r < 0 || c < 0)) ? 0.0f : t;
}

// q's element k as two levels of selects (a switch on k compiles to branches that wait on q's load)
__device__ __forceinline__ float lane(float4 q, int k) {
    const float lo = (k & 1) ? q.y : q.x, hi = (k & 1) ? q.w : q.z;
    return (k & 2) ? hi : lo;
}

// row_pair<ADDR>: pixels c and c + 1 of row r (already addressed) with one aligned float4 load of c's 16-byte chunk
// (the host checks the base and pitch alignment) and a float load for c + 1 only where it is not in that chunk
// (c % 4 == 3, an edge) or for both where the chunk passes the row's end. Loads predicated, no branches: a thread's
// loads for all its samples go out before the first one is used.
template <int ADDR>
__device__ __forceinline__ float2 row_pair(const float* img, long long pitch, int r, int c, int w) {
    const int a = address<ADDR>(c, w), b = address<ADDR>(c + 1, w);
    const bool row_ok = ADDR != BORDER || r >= 0;
    const float* row = img + (long long)(row_ok ? r : 0) * pitch;
    const bool chunk = row_ok && a >= 0 && (a | 3) < w;
    const bool next_in_chunk = chunk && b == a + 1 && (a & 3) != 3;
    const float4 q = chunk ? __ldg(reinterpret_cast<const float4*>(row + (a & ~3))) : make_float4(0, 0, 0, 0);
    const float sa = (row_ok && !chunk && a >= 0) ? __ldg(row + a) : 0.0f;
    const float sb = (row_ok && !next_in_chunk && b >= 0) ? __ldg(row + b) : 0.0f;
    return make_float2(chunk ? lane(q, a & 3) : sa, next_in_chunk ? lane(q, (a & 3) + 1) : sb);
}

// pick: texel (gr + dr, gc + dc) of a tex2Dgather result, whose components come in Direct3D Gather4 order:
// (gr + 1, gc), (gr + 1, gc + 1), (gr, gc + 1), (gr, gc); zero for a border texel
__device__ __forceinline__ float pick(float4 g, int dr, int dc, bool border) {
    const float top = dc ? g.z : g.w, bottom = dc ? g.y : g.x;
    return border ? 0.0f : (dr ? bottom : top);
}

// The 2x2 texels (r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1) from SRC.
template <int ADDR, int SRC>
__device__ __forceinline__ float4 quad(const float* img, long long pitch, cudaTextureObject_t tex,
                                       int r, int c, int h, int w) {
    if (SRC == ROW4) {
        const float2 top = row_pair<ADDR>(img, pitch, address<ADDR>(r, h), c, w);
        const float2 bottom = row_pair<ADDR>(img, pitch, address<ADDR>(r + 1, h), c, w);
        return make_float4(top.x, top.y, bottom.x, bottom.y);
    }
    if (SRC == TEX_GATHER) {
        static_assert(SRC != TEX_GATHER || ADDR != WRAP, "gather: wrap's seam splits the footprint; use points");
        // texels addressed in software; the gathered pair on each axis starts at g (g and g + 1 inside the image)
        // and holds both addressed texels, since clamp, mirror and border keep neighbours adjacent or equal
        const int ra = address<ADDR>(r, h), rb = address<ADDR>(r + 1, h);
        const int ca = address<ADDR>(c, w), cb = address<ADDR>(c + 1, w);
        const int gr = max(min(min(ra < 0 ? rb : ra, rb < 0 ? ra : rb), h - 2), 0);
        const int gc = max(min(min(ca < 0 ? cb : ca, cb < 0 ? ca : cb), w - 2), 0);
        // at (gc + 1, gr + 1) the footprint's fraction is exactly 0.5: texels gr..gr+1, gc..gc+1 whatever the
        // texture unit's coordinate rounding
        const float4 g = tex2Dgather<float4>(tex, (float)gc + 1.0f, (float)gr + 1.0f, 0);
        return make_float4(pick(g, ra - gr, ca - gc, ra < 0 || ca < 0), pick(g, ra - gr, cb - gc, ra < 0 || cb < 0),
                           pick(g, rb - gr, ca - gc, rb < 0 || ca < 0), pick(g, rb - gr, cb - gc, rb < 0 || cb < 0));
    }
    if (SRC == TEX_POINTS)
        return make_float4(tex_texel<ADDR>(tex, r, c, h, w), tex_texel<ADDR>(tex, r, c + 1, h, w),
                           tex_texel<ADDR>(tex, r + 1, c, h, w), tex_texel<ADDR>(tex, r + 1, c + 1, h, w));
    return make_float4(texel<ADDR, SRC>(img, pitch, r, c, h, w), texel<ADDR, SRC>(img, pitch, r, c + 1, h, w),
                       texel<ADDR, SRC>(img, pitch, r + 1, c, h, w), texel<ADDR, SRC>(img, pitch, r + 1, c + 1, h, w));
}

// Bilinear or point filtering by the texture unit (the object's filter mode); x is the column, y the row.
struct TexFetch {
    cudaTextureObject_t tex;
    float row_scale, row_offset, col_scale, col_offset;
    __device__ __forceinline__ float operator()(float2 rc) const {
        return tex2D<float>(tex, fmaf(rc.y, col_scale, col_offset), fmaf(rc.x, row_scale, row_offset));
    }
};

// ExactFetch<ADDR, LINEAR, SRC, FP32>: software interpolation from SRC's texels. FP32 0: weights and sums in
// double, rounded once to float; FP32 1: map_coordinates' own float arithmetic (its weights, its order of sums).
// Nearest (LINEAR 0) reads the texel at floor(p + 0.5), as the texture unit's point filter and order=0 do.
template <int ADDR, int LINEAR, int SRC, int FP32>
struct ExactFetch {
    const float* img;
    long long pitch;
    cudaTextureObject_t tex;
    int h, w;
    float row_scale, row_offset, col_scale, col_offset;

    __device__ __forceinline__ float one(int r, int c) const {
        if (SRC == TEX_POINTS || SRC == TEX_GATHER) return tex_texel<ADDR>(tex, r, c, h, w);
        return texel<ADDR, SRC == GLOBAL ? 0 : 1>(img, pitch, r, c, h, w);
    }

    __device__ __forceinline__ float operator()(float2 rc) const {
        if (FP32) {
            const float pr = fmaf(rc.x, row_scale, row_offset), pc = fmaf(rc.y, col_scale, col_offset);
            if (!LINEAR) return one((int)floorf(pr + 0.5f), (int)floorf(pc + 0.5f));
            const int r = (int)floorf(pr), c = (int)floorf(pc);
            const float4 t = quad<ADDR, SRC>(img, pitch, tex, r, c, h, w);
            const float wr0 = (float)(r + 1) - pr, wr1 = pr - (float)r;
            const float wc0 = (float)(c + 1) - pc, wc1 = pc - (float)c;
            float s = 0.0f;
            s += wr0 * wc0 * t.x;
            s += wr0 * wc1 * t.y;
            s += wr1 * wc0 * t.z;
            s += wr1 * wc1 * t.w;
            return s;
        }
        const double pr = (double)rc.x * row_scale + row_offset;
        const double pc = (double)rc.y * col_scale + col_offset;
        if (!LINEAR) return one((int)floor(pr + 0.5), (int)floor(pc + 0.5));
        const double r0 = floor(pr), c0 = floor(pc);
        const double fr = pr - r0, fc = pc - c0;
        const float4 t = quad<ADDR, SRC>(img, pitch, tex, (int)r0, (int)c0, h, w);
        const double top = (1.0 - fc) * t.x + fc * t.y;
        const double bottom = (1.0 - fc) * t.z + fc * t.w;
        return (float)((1.0 - fr) * top + fr * bottom);
    }
};

// sample_points<VEC, UNROLL>: which samples a thread takes. The samples, viewed as rows of `width`, are cut into
// tiles of UNROLL rows x (blockDim.x * VEC) columns, one per block, `tiles` of them across a row; a thread takes
// VEC adjacent samples (one float2 or float4 coordinate load, one float or float2 store) in each of the tile's
// UNROLL rows. In program order every coordinate load comes before the first fetch and every fetch before the
// first store, so a thread can have UNROLL * VEC samples in flight (ptxas keeps that order for the texture fetches;
// for the software-weighted kernels it may interleave samples to save registers). Flat order: width = blockDim.x * VEC, one tile per row (a block takes
// UNROLL consecutive chunks); rows order: width = the output's row length, so a block's rows are neighbouring
// output rows whose fetches overlap in the image (2-D locality). VEC 2: the host guarantees an even n and width,
// 16-byte aligned coordinates and 8-byte aligned output.
// SAMPLE_STREAM 1 (-D): the coordinates and the output, each touched once, load and store with the evict-first hint
// (ld/st.global.cs) so that they leave L2 to the image's texels, which scattered samples re-read
#ifndef SAMPLE_STREAM
#define SAMPLE_STREAM 0
#endif
template <class T>
__device__ __forceinline__ T load_once(const T* p) { return SAMPLE_STREAM ? __ldcs(p) : __ldg(p); }
template <class T>
__device__ __forceinline__ void store_once(T* p, T v) {
    if (SAMPLE_STREAM) __stcs(p, v);
    else *p = v;
}

// observe: OBSERVERS blocks spread over the grid (its first half at least) count, in their first warp, the
// neighbouring points (lane i and i + 1, mod 32) that lie more than SCATTER_PX pixels apart on either axis, and write
// the count (0..32) to seen[k] (mapped host memory: the host reads it after this launch, with no sync, to lay out its
// next call on the same coordinates; the samples do not depend on it). Called after the stores; an observing warp
// reads its first points again (p: the thread's first, in L1 or L2 by now) so that no other warp keeps them in
// registers.
#define OBSERVERS 8
#define SCATTER_PX 16.0f
template <class Fetch>
__device__ __forceinline__ void observe(unsigned* seen, const float2* p, const Fetch& f) {
    if (seen == nullptr || threadIdx.x >= 32) return;
    // observers: blocks k * every (k < OBSERVERS), every the largest power of two <= gridDim.x / OBSERVERS: no divide
    const unsigned shift = 31 - __clz(max(gridDim.x / OBSERVERS, 1u)), k = blockIdx.x >> shift;
    if ((blockIdx.x & ((1u << shift) - 1)) != 0 || k >= OBSERVERS) return;
    const float2 rc = *p;
    const int next = (threadIdx.x + 1) & 31;
    const float dr = (__shfl_sync(0xffffffffu, rc.x, next) - rc.x) * f.row_scale;
    const float dc = (__shfl_sync(0xffffffffu, rc.y, next) - rc.y) * f.col_scale;
    const unsigned far = __popc(__ballot_sync(0xffffffffu, !(fabsf(dr) <= SCATTER_PX && fabsf(dc) <= SCATTER_PX)));
    if (threadIdx.x == 0) {
        *(volatile unsigned*)(seen + k) = far;
        for (unsigned j = gridDim.x; k == 0 && j < OBSERVERS; ++j) *(volatile unsigned*)(seen + j) = far;  // few blocks
    }
}

template <int VEC, int UNROLL, class Fetch>
__device__ __forceinline__ void sample_points(float* __restrict__ out, const float2* __restrict__ coords,
                                              long long n, int width, int tiles, const Fetch& fetch,
                                              unsigned* seen = nullptr) {
    static_assert(VEC == 1 || VEC == 2, "VEC: one or two samples per coordinate load");
    const unsigned band = blockIdx.x / (unsigned)tiles, tile = blockIdx.x - band * (unsigned)tiles;
    const int col = (int)(tile * blockDim.x + threadIdx.x) * VEC;
    const long long first = (long long)band * UNROLL * width + col;
    const bool in_row = col < width;
    // loads are unconditional (an index past the end reads the last sample, never stored): a predicated load
    // is sunk next to its use by the compiler, which serializes the coordinate loads with the fetches
    const long long last = n - VEC;
    float2 rc[UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = min(first + (long long)u * width, last);
        if (VEC == 2) {
            const float4 q = load_once(reinterpret_cast<const float4*>(coords + i));
            rc[u][0] = make_float2(q.x, q.y);
            rc[u][VEC - 1] = make_float2(q.z, q.w);
        } else {
            rc[u][0] = load_once(coords + i);
        }
    }
    float v[UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[u][k] = fetch(rc[u][k]);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = first + (long long)u * width;
        if (in_row && i < n) {
            if (VEC == 2) store_once(reinterpret_cast<float2*>(out + i), make_float2(v[u][0], v[u][VEC - 1]));
            else store_once(out + i, v[u][0]);
        }
    }
    observe(seen, coords + min(first, last), fetch);  // after the stores: the samples never wait for it
}

// sample_tex: tex2D through a texture object; its filter (point or bilinear with 9-bit fixed-point weights),
// address mode and coordinate normalization live in the object. One sample per thread.
extern "C" __global__ void sample_tex(float* __restrict__ out, cudaTextureObject_t tex,
                                      const float2* __restrict__ coords, long long n,
                                      float row_scale, float row_offset, float col_scale, float col_offset) {
    sample_points<1, 1>(out, coords, n, (int)blockDim.x, 1,
                        TexFetch{tex, row_scale, row_offset, col_scale, col_offset});
}

// sample_tex_tiled<VEC, UNROLL>: the same fetch, UNROLL x VEC samples per thread in flat or rows order
// (memory-level parallelism: more coordinate loads and texture fetches in flight per thread). `seen`: as
// sample_exact's (null where the coordinates are not in texels: the observed distances would not be pixels).
template <int VEC, int UNROLL>
__global__ void sample_tex_tiled(float* __restrict__ out, cudaTextureObject_t tex,
                                 const float2* __restrict__ coords, long long n, int width, int tiles,
                                 float row_scale, float row_offset, float col_scale, float col_offset,
                                 unsigned* seen) {
    sample_points<VEC, UNROLL>(out, coords, n, width, tiles,
                               TexFetch{tex, row_scale, row_offset, col_scale, col_offset}, seen);
}

// sample_soft<ADDR, LINEAR, LDG>: the same sample from a pitched row-major image with plain (LDG 0) or
// read-only-cache (LDG 1) loads; bilinear weights and sums in double, as the float64 reference does. One sample
// per thread.
template <int ADDR, int LINEAR, int LDG_>
__global__ void sample_soft(float* __restrict__ out, const float* img, long long pitch, int h, int w,
                            const float2* __restrict__ coords, long long n,
                            float row_scale, float row_offset, float col_scale, float col_offset) {
    sample_points<1, 1>(out, coords, n, (int)blockDim.x, 1,
                        ExactFetch<ADDR, LINEAR, LDG_ ? LDG : GLOBAL, 0>{img, pitch, 0, h, w, row_scale, row_offset,
                                                                         col_scale, col_offset});
}

// sample_exact<ADDR, LINEAR, SRC, FP32, VEC, UNROLL>: software interpolation (exact texel selection, software
// weights) with the texels from SRC (the pitched image `img` or the CUDA-array texture `tex`), UNROLL x VEC
// samples per thread in flat or rows order. `seen`: where observe() reports how scattered the points are (or null).
template <int ADDR, int LINEAR, int SRC, int FP32, int VEC, int UNROLL>
__global__ void sample_exact(float* __restrict__ out, const float* img, long long pitch, cudaTextureObject_t tex,
                             int h, int w, const float2* __restrict__ coords, long long n, int width, int tiles,
                             float row_scale, float row_offset, float col_scale, float col_offset,
                             unsigned* seen) {
    sample_points<VEC, UNROLL>(out, coords, n, width, tiles,
                               ExactFetch<ADDR, LINEAR, SRC, FP32>{img, pitch, tex, h, w, row_scale, row_offset,
                                                                   col_scale, col_offset},
                               seen);
}

// ---------------- the other texture types (seed 001, "Two CUDA Texture Types", "CUDA Texturing Steps")

// lookup_global<T>: out[i] = table[idx[i]] * scale, a 1-D gather with global loads (scale 1/255 for uint8: what
// the normalized-float read mode returns)
template <typename T>
__global__ void lookup_global(float* __restrict__ out, const T* __restrict__ table, const int* __restrict__ idx,
                              long long n, float scale) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)table[idx[i]] * scale;
}

// lookup_fetch: the same gather with tex1Dfetch on a texture bound to linear memory (integer addressing; with the
// normalized-float read mode an 8-bit table comes back as floats in [0, 1])
extern "C" __global__ void lookup_fetch(float* __restrict__ out, cudaTextureObject_t tex, const int* __restrict__ idx,
                                        long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, idx[i]);
}

// lookup_tex1d: the same gather with tex1D on a 1-D CUDA array, point filtering at the texel centers
extern "C" __global__ void lookup_tex1d(float* __restrict__ out, cudaTextureObject_t tex, const int* __restrict__ idx,
                                        long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, idx[i] + 0.5f);
}

// sample3d_soft: trilinear interpolation of a (d, h, w) volume at (z, y, x) points inside it, eight global loads per
// point (indices clamped to the volume), the reference for tex3D's hardware filtering
extern "C" __global__ void sample3d_soft(float* __restrict__ out, const float* __restrict__ vol, int d, int h, int w,
                                         const float* __restrict__ pts, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float z = pts[3 * i], y = pts[3 * i + 1], x = pts[3 * i + 2];
    const float z0 = floorf(z), y0 = floorf(y), x0 = floorf(x);
    const float fz = z - z0, fy = y - y0, fx = x - x0;
    const int zi = (int)z0, yi = (int)y0, xi = (int)x0;
    const int z1 = min(zi + 1, d - 1), y1 = min(yi + 1, h - 1), x1 = min(xi + 1, w - 1);
    const long long plane = (long long)h * w;
    const float* a = vol + zi * plane;
    const float* b = vol + z1 * plane;
    const float c00 = a[yi * w + xi] + fx * (a[yi * w + x1] - a[yi * w + xi]);
    const float c01 = a[y1 * w + xi] + fx * (a[y1 * w + x1] - a[y1 * w + xi]);
    const float c10 = b[yi * w + xi] + fx * (b[yi * w + x1] - b[yi * w + xi]);
    const float c11 = b[y1 * w + xi] + fx * (b[y1 * w + x1] - b[y1 * w + xi]);
    const float c0 = c00 + fy * (c01 - c00), c1 = c10 + fy * (c11 - c10);
    out[i] = c0 + fz * (c1 - c0);
}

// sample3d_tex: the same with tex3D on a 3-D CUDA array, trilinear filtering in the texture unit
extern "C" __global__ void sample3d_tex(float* __restrict__ out, cudaTextureObject_t tex, const float* __restrict__ pts,
                                        long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(tex, pts[3 * i + 2] + 0.5f, pts[3 * i + 1] + 0.5f, pts[3 * i] + 0.5f);
}

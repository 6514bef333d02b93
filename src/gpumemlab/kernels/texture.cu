// Texture-memory kernels (seed 001, "Textures in CUDA", "Texture Addressing", "Two CUDA Texture Types"):
// 2-D sampling at (row, col) coordinates through a texture object (hardware addressing and filtering)
// and the same sampling in software from global memory, the reference the texture unit is measured
// against. Coordinates are float2 (x = row, y = col); a sample's position in pixels is
// p = coordinate * scale + offset, pixel centers at integers (the convention of scipy's map_coordinates).

enum Address { CLAMP = 0, WRAP = 1, MIRROR = 2, BORDER = 3 };

// address<ADDR>: the texel an out-of-range index reads (-1: the border, which reads 0)
template <int ADDR>
__device__ __forceinline__ int address(int i, int size) {
    if (ADDR == CLAMP) return min(max(i, 0), size - 1);
    if (ADDR == WRAP) { i %= size; return i < 0 ? i + size : i; }
    if (ADDR == MIRROR) {  // half-sample symmetric: ... b a | a b c | c b ...
        const int period = 2 * size;
        int m = i % period;
        m = m < 0 ? m + period : m;
        return m < size ? m : period - 1 - m;
    }
    return (i < 0 || i >= size) ? -1 : i;
}

template <int ADDR, int LDG>
__device__ __forceinline__ float texel(const float* img, long long pitch, int r, int c, int h, int w) {
    r = address<ADDR>(r, h);
    c = address<ADDR>(c, w);
    if (ADDR == BORDER && (r < 0 || c < 0)) return 0.0f;
    const float* p = img + (long long)r * pitch + c;
    return LDG ? __ldg(p) : *p;
}

// sample_tex: tex2D through a texture object; its filter (point or bilinear with 9-bit fixed-point weights),
// address mode and coordinate normalization live in the object. x is the column, y the row.
extern "C" __global__ void sample_tex(float* __restrict__ out, cudaTextureObject_t tex,
                                      const float2* __restrict__ coords, long long n,
                                      float row_scale, float row_offset, float col_scale, float col_offset) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float2 rc = coords[i];
        out[i] = tex2D<float>(tex, fmaf(rc.y, col_scale, col_offset), fmaf(rc.x, row_scale, row_offset));
    }
}

// sample_soft<ADDR, LINEAR, LDG>: the same sample from a pitched row-major image with plain (LDG 0) or
// read-only-cache (LDG 1) loads; bilinear weights and sums in double, as map_coordinates(order=1) does;
// nearest (LINEAR 0) reads the texel at floor(p + 0.5), as the texture unit's point filter and order=0 do.
template <int ADDR, int LINEAR, int LDG>
__global__ void sample_soft(float* __restrict__ out, const float* img, long long pitch, int h, int w,
                            const float2* __restrict__ coords, long long n,
                            float row_scale, float row_offset, float col_scale, float col_offset) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float2 rc = coords[i];
    const double pr = (double)rc.x * row_scale + row_offset;
    const double pc = (double)rc.y * col_scale + col_offset;
    if (LINEAR) {
        const double r0 = floor(pr), c0 = floor(pc);
        const double fr = pr - r0, fc = pc - c0;
        const int r = (int)r0, c = (int)c0;
        const double top = (1.0 - fc) * texel<ADDR, LDG>(img, pitch, r, c, h, w) +
                           fc * texel<ADDR, LDG>(img, pitch, r, c + 1, h, w);
        const double bottom = (1.0 - fc) * texel<ADDR, LDG>(img, pitch, r + 1, c, h, w) +
                              fc * texel<ADDR, LDG>(img, pitch, r + 1, c + 1, h, w);
        out[i] = (float)((1.0 - fr) * top + fr * bottom);
    } else {
        out[i] = texel<ADDR, LDG>(img, pitch, (int)floor(pr + 0.5), (int)floor(pc + 0.5), h, w);
    }
}

// Stencils with halos staged in shared memory, a direct 2-D convolution and an im2col in the style of the
// frameworks' CPU/GPU ports (a grid-stride loop over (channel, h_out, w_out) and a pointer walked down the columns).
#define RAD 3
#define BDIM_X 32
#define BDIM_Y 8
#define HALO 1
#define KSIZE 3
#define IDX2(r, c, ld) ((r) * (ld) + (c))
#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// 1-D stencil of radius 3, block 256: `in` is padded by RAD elements on each side, so `in[g + RAD]` is the centre.
// temp[l] (store): words 3..34 for warp 0 -> 32 banks, 1 wavefront. in[g + RAD]: bytes 12..139 -> 5 sectors (ideal 4),
// consecutive from a misaligned start: offset. The halos, threadIdx.x < 3 (3 lanes of warp 0 in every block):
// temp[l - RAD] words 0..2 and temp[l + blockDim.x] words 259..261 -> 1 wavefront each; in[g] bytes 0..11 and
// in[g + RAD + blockDim.x] bytes 1036..1047 -> 1 sector each (ideal 1). The sum loop's first iteration (offset -3):
// temp[l - 3] = words 0..31 -> 1 wavefront. out[g]: 4 sectors.
__global__ void stencil_1d(const int *in, int *out) {
    __shared__ int temp[256 + 2 * RAD];
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    int l = threadIdx.x + RAD;
    temp[l] = in[g + RAD];
    if (threadIdx.x < RAD) {
        temp[l - RAD] = in[g];
        temp[l + blockDim.x] = in[g + RAD + blockDim.x];
    }
    __syncthreads();
    int result = 0;
    for (int offset = -RAD; offset <= RAD; offset++)
        result += temp[l + offset];
    out[g] = result;
}

// 5-point Jacobi step, 32 x 8 tiles with a one-cell halo, nx = ny = 1024, block (32, 8). tile is [10][34] floats.
// Warp w of a block is row threadIdx.y = w. tile[ty][tx] (store, warp 0): words 35..66 -> 1 wavefront;
// u[IDX2(gy, gx, nx)]: 128 aligned bytes -> 4 sectors. Left halo (threadIdx.x < 1 && gx >= 1): no lane in block 0,
// lane 0 of each warp in block (1,0,0): 1 lane -> tile word 34 + 34 * threadIdx.y, 1 wavefront; u 1 sector.
// Right halo (threadIdx.x >= 31): lane 31 in block 0 -> 1 wavefront, 1 sector. Top halo (threadIdx.y < 1 &&
// gy >= 1): no lane in block 0; block (0,1,0) warp 0 -> tile row 0, words 1..32 -> 1 wavefront; u row 7 -> 4
// sectors. Bottom halo (threadIdx.y >= 7): warp 7 of block 0 -> tile row 9, words 307..338 -> 1; u row 8 -> 4.
// The update: gy > 0 and gx > 0 leave block 0's warps partial (warp 1: lanes 1..31); block (1,0,0) warp 1 (gy = 1,
// gx = 32..63) is the first full warp: unew bytes 4096 + 128 .. + 255 -> 4 sectors; the four tile loads read rows
// 1..3 of the tile, 32 consecutive words each -> 1 wavefront each.
__global__ void jacobi_2d_halo(const float *__restrict__ u, float *__restrict__ unew, int nx, int ny) {
    __shared__ float tile[BDIM_Y + 2 * HALO][BDIM_X + 2 * HALO];
    int tx = threadIdx.x + HALO, ty = threadIdx.y + HALO;
    int gx = blockIdx.x * BDIM_X + threadIdx.x;
    int gy = blockIdx.y * BDIM_Y + threadIdx.y;
    bool inside = gx < nx && gy < ny;
    if (inside) tile[ty][tx] = u[IDX2(gy, gx, nx)];
    if (threadIdx.x < HALO && gx >= HALO) tile[ty][tx - HALO] = u[IDX2(gy, gx - HALO, nx)];
    if (threadIdx.x >= BDIM_X - HALO && gx + HALO < nx) tile[ty][tx + HALO] = u[IDX2(gy, gx + HALO, nx)];
    if (threadIdx.y < HALO && gy >= HALO) tile[ty - HALO][tx] = u[IDX2(gy - HALO, gx, nx)];
    if (threadIdx.y >= BDIM_Y - HALO && gy + HALO < ny) tile[ty + HALO][tx] = u[IDX2(gy + HALO, gx, nx)];
    __syncthreads();
    if (inside && gx > 0 && gy > 0 && gx < nx - 1 && gy < ny - 1)
        unew[IDX2(gy, gx, nx)] = 0.25f * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx]);
}

// Direct 3 x 3 convolution, a thread per output pixel, block (16, 16), width = height = 1024. Warp 0 is rows y = 0
// and 1, x = 0..15. img at (i, j) = (0, 0): two aligned 64-byte runs -> 4 sectors (ideal 4), coalesced. filt[...]:
// one address for the warp -> 1 sector, broadcast. out[y * 1022 + x]: row 0 bytes 0..63 (2 sectors), row 1 bytes
// 4088..4151 (3 sectors) -> 5 sectors, ideal 4; two runs of consecutive lanes: scattered.
__global__ void conv2d_direct(const float *__restrict__ img, const float *__restrict__ filt, float *__restrict__ out,
                              int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width - KSIZE + 1 || y >= height - KSIZE + 1) return;
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < KSIZE; ++i) {
#pragma unroll
        for (int j = 0; j < KSIZE; ++j)
            acc += img[(y + i) * width + (x + j)] * filt[i * KSIZE + j];
    }
    out[y * (width - KSIZE + 1) + x] = acc;
}

// im2col, 3 channels of 64 x 64, a 3 x 3 kernel, pad 1, stride 1: n = 3 * 64 * 64, block 256, 4 blocks (the grid-stride
// step is 1024). Warp 0: index 0..31 -> w_out 0..31, h_out 0, c_in 0. The store *col_ptr (i = j = 0): data_col +
// w_out -> 4 sectors. The image load runs only where (h, w) is inside: at i = j = 0, h = h_out - 1, so warps 0 and 1
// (h_out 0) have no lane and warp 2 (h_out 1, w_out 0..31) misses lane 0 (w = -1); warp 3 (h_out 1, w_out 32..63,
// w = 31..62) is the first full one: data_im + 31..62 -> bytes 124..251 -> 5 sectors (ideal 4), offset.
__global__ void im2col(const int n, const float *data_im, const int height, const int width, const int ksize,
                       const int pad, const int stride, const int height_col, const int width_col, float *data_col) {
    CUDA_KERNEL_LOOP(index, n) {
        const int w_out = index % width_col;
        const int h_index = index / width_col;
        const int h_out = h_index % height_col;
        const int c_in = h_index / height_col;
        const int c_out = c_in * ksize * ksize;
        const int h_in = h_out * stride - pad;
        const int w_in = w_out * stride - pad;
        float *col_ptr = data_col + (c_out * height_col + h_out) * width_col + w_out;
        const float *im_ptr = data_im + (c_in * height + h_in) * width + w_in;
        for (int i = 0; i < ksize; ++i) {
            for (int j = 0; j < ksize; ++j) {
                int h = h_in + i;
                int w = w_in + j;
                *col_ptr = (h >= 0 && w >= 0 && h < height && w < width) ? im_ptr[i * width + j] : 0.f;
                col_ptr += height_col * width_col;
            }
        }
    }
}

// Transposes with TILE_DIM / BLOCK_ROWS macros: a flat shared buffer indexed by hand (unpadded and padded), and a
// template over the element type and the padding (doubles: 8-byte banks accesses in half-warp phases).
#define TILE_DIM 32
#define BLOCK_ROWS 8
#define PADDED_DIM (TILE_DIM + 1)

// Block (32, 8), width = height = 1000 (block 0 lies inside). idata and odata rows of 1000 floats: row 0 -> 4
// sectors. buf[(threadIdx.y + j) * TILE_DIM + threadIdx.x]: words 0..31 -> 1 wavefront. The column read
// buf[threadIdx.x * TILE_DIM + threadIdx.y + j]: words 32t, all in bank 0 -> 32 wavefronts (ideal 1), 32-way.
__global__ void transpose_flat(float *odata, const float *idata, int width, int height) {
    __shared__ float buf[TILE_DIM * TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            buf[(threadIdx.y + j) * TILE_DIM + threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            odata[(y + j) * height + x] = buf[threadIdx.x * TILE_DIM + threadIdx.y + j];
}

// The same with rows of PADDED_DIM = 33 words: the column read takes words 33t -> banks t -> 1 wavefront.
__global__ void transpose_flat_padded(float *odata, const float *idata, int width, int height) {
    __shared__ float buf[TILE_DIM * PADDED_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            buf[(threadIdx.y + j) * PADDED_DIM + threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            odata[(y + j) * height + x] = buf[threadIdx.x * PADDED_DIM + threadIdx.y + j];
}

// T = double, n = 1024, block (32, 8). in/out rows: 32 doubles = 256 aligned bytes -> 8 sectors (ideal 8).
// tile store, row 0: words 0..63 in two half-warp phases of 32 words -> 2 wavefronts (ideal 2).
// PAD = 0, column read tile[t][0]: bytes 256 t -> words 64t and 64t + 1: each half-warp puts 16 distinct words in
// bank 0 and 16 in bank 1 -> 16 per phase, 32 wavefronts (ideal 2), 16-way. PAD = 1: rows of 66 words, words 66t ->
// banks 2t mod 32 and 2t + 1: all 32 banks once per phase -> 2 wavefronts (ideal 2), conflict-free.
template <typename T, int PAD>
__global__ void transpose_tile(T *__restrict__ out, const T *__restrict__ in, int n) {
    __shared__ T tile[TILE_DIM][TILE_DIM + PAD];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Transposes in the style of the CUDA samples' transpose.cu: TILE_DIM x TILE_DIM tiles, BLOCK_ROWS rows per
// pass, blocks of TILE_DIM x BLOCK_ROWS. width = height = 1024 (square: the diagonal branch taken).
#define TILE_DIM 32
#define BLOCK_ROWS 8

// Copy through shared memory (the ceiling): every access row-wise. Warp w of block 0 is row ty = w, tx = lane:
// idata/odata 32 consecutive floats -> 4 sectors (ideal 4); tile[ty + i][tx] -> 1 wavefront.
__global__ void copySharedMem(float *odata, float *idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index = xIndex + width * yIndex;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        if (xIndex < width && yIndex < height) {
            tile[threadIdx.y][threadIdx.x] = idata[index];
        }
    }
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        if (xIndex < height && yIndex < width) {
            odata[index] = tile[threadIdx.y][threadIdx.x];
        }
    }
}

// Diagonal block reordering: block (0, 0) stays (0, 0). Padded tile [32][33]: the column read
// tile[tx][ty + i] touches words 33*lane + ty -> 32 different banks -> 1 wavefront. Global: 4 sectors each.
__global__ void transposeDiagonal(float *odata, float *idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int blockIdx_x, blockIdx_y;
    if (width == height) {
        blockIdx_y = blockIdx.x;
        blockIdx_x = (blockIdx.x + blockIdx.y) % gridDim.x;
    } else {
        int bid = blockIdx.x + gridDim.x * blockIdx.y;
        blockIdx_y = bid % gridDim.y;
        blockIdx_x = ((bid / gridDim.y) + blockIdx_y) % gridDim.x;
    }
    int xIndex = blockIdx_x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx_y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + (yIndex) * width;
    xIndex = blockIdx_y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx_x * TILE_DIM + threadIdx.y;
    int index_out = xIndex + (yIndex) * height;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
    }
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
    }
}

// Fine-grained: only the shared transpose; global both row-wise (4 sectors), column read of the padded
// block[tx][ty + i] -> 1 wavefront.
__global__ void transposeFineGrained(float *odata, float *idata, int width, int height) {
    __shared__ float block[TILE_DIM][TILE_DIM + 1];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index = xIndex + (yIndex) * width;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        block[threadIdx.y + i][threadIdx.x] = idata[index + i * width];
    }
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        odata[index + i * height] = block[threadIdx.x][threadIdx.y + i];
    }
}

// Coarse-grained: the blocks move, the elements inside them do not; all accesses row-wise: 4 sectors,
// 1 wavefront.
__global__ void transposeCoarseGrained(float *odata, float *idata, int width, int height) {
    __shared__ float block[TILE_DIM][TILE_DIM + 1];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + (yIndex) * width;
    xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
    int index_out = xIndex + (yIndex) * height;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        block[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
    }
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        odata[index_out + i * height] = block[threadIdx.y + i][threadIdx.x];
    }
}

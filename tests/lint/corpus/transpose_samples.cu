// cuda-samples style transposes: TILE_DIM 32, BLOCK_ROWS 8, block (32, 8), width = height = 1024 (--let).
#define TILE_DIM 32
#define BLOCK_ROWS 8

// Store: lane k (threadIdx.x = k) writes odata[k * 1024 + y]: 4096 bytes apart -> 32 sectors per request,
// ideal 4 (32 floats fit in 4 sectors if consecutive); stride >= 128 bytes -> "column-major".
// Load: idata[y * 1024 + k]: 128 consecutive bytes -> 4 sectors, coalesced.
__global__ void transposeNaive(float* odata, const float* idata, int width, int height) {
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * width + (y + j)] = idata[(y + j) * width + x];
}

// tile[threadIdx.x][threadIdx.y + j] with a 32-word row pitch: lane k reads word 32k -> every lane in bank 0,
// 32 distinct words -> 32 wavefronts, ideal 1, 32-way conflict. The store tile[threadIdx.y + j][threadIdx.x]:
// lanes read words 0..31 of one row -> 1 wavefront.
__global__ void transposeCoalesced(float* odata, const float* idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Padded to 33 words per row: lane k reads word 33k, bank (33k) % 32 = k -> 32 distinct banks, 1 wavefront.
__global__ void transposeNoBankConflicts(float* odata, const float* idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

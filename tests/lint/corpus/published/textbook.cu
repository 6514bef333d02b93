// Textbook kernels in the style of the well-known GPU programming course book: ELL sparse matrix-vector product
// (column-major padded storage), 1-D convolution with the mask in constant memory, a 2-D tiled convolution whose
// block loads the input tile with its halo (out-of-range cells set to 0), and a Brent-Kung style scan of one block.
#define MAX_MASK_WIDTH 5
#define O_TILE_WIDTH 12
#define BLOCK_WIDTH (O_TILE_WIDTH + MAX_MASK_WIDTH - 1)
#define SECTION 256

__constant__ float M[MAX_MASK_WIDTH * MAX_MASK_WIDTH];

// ELL, num_rows = 4096, num_elem = 8, block 256: data[row + i * num_rows] and col_index[...] at i = 0: 32
// consecutive elements -> 4 sectors; x[col_index[...]]: a loaded index, unknown; y[row]: 4 sectors.
__global__ void spmv_ell(int num_rows, const float *data, const int *col_index, int num_elem, const float *x,
                         float *y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        float dot = 0;
        for (int i = 0; i < num_elem; i++)
            dot += data[row + i * num_rows] * x[col_index[row + i * num_rows]];
        y[row] = dot;
    }
}

// 1-D convolution, block 256, width = 2^20, mask in __constant__ (M[j]: 1 word, 1 read, broadcast). N[start + j] at
// j = 0: start = i - 2 -> lanes 1..31 read floats -1..29 of block 0, but lanes 0, 1 are left out by the guard
// (N_start_point + j >= 0): warp 1 (i = 32..63) is the first full one -> floats 30..61, bytes 120..247 -> 5 sectors
// (ideal 4), offset. P[i]: 4 sectors.
__global__ void convolution_1d_const(const float *N, float *P, int Mask_Width, int Width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float Pvalue = 0;
    int N_start_point = i - (Mask_Width / 2);
    for (int j = 0; j < Mask_Width; j++) {
        if (N_start_point + j >= 0 && N_start_point + j < Width) {
            Pvalue += N[N_start_point + j] * M[j];
        }
    }
    P[i] = Pvalue;
}

// 2-D tiled convolution, block BLOCK_WIDTH x BLOCK_WIDTH = 16 x 16, width = height = pitch = 1024. Warp 0 is rows
// ty = 0, 1 of tx = 0..15 in block 0: row_i = ty - 2 < 0 -> N_ds[ty][tx] = 0 for both rows (the else store, 16-word
// rows: words 0..31 -> 1 wavefront); the loads need row_i, col_i >= 0: block 0 has no full warp (col_i < 0 for
// tx < 2); in block (1, 0, 0) col_i = 10 + tx, and warp 1 (ty = 2, 3: row_i = 0, 1) is full -> floats 10..25 of rows
// 0 and 1, bytes 40..103 of each: 3 sectors a row -> 6 sectors (ideal 4), scattered; its N_ds store (then-branch):
// words 32..63 -> 1. N_ds[i + ty][j + tx] at i = j = 0 (ty, tx < 12: lanes 0..11 of rows 0, 1): 24 words -> 1
// wavefront; P store (ty, tx < O_TILE_WIDTH): rows 0, 1 of 12 floats, 48 bytes each at 0 and 4096: 2 sectors each ->
// 4 sectors for 96 bytes (ideal 3), scattered.
__global__ void convolution_2d_tiled(const float *N, float *P, int height, int width, int pitch) {
    __shared__ float N_ds[BLOCK_WIDTH][BLOCK_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row_o = blockIdx.y * O_TILE_WIDTH + ty;
    int col_o = blockIdx.x * O_TILE_WIDTH + tx;
    int row_i = row_o - 2;
    int col_i = col_o - 2;
    if ((row_i >= 0) && (row_i < height) && (col_i >= 0) && (col_i < width)) {
        N_ds[ty][tx] = N[row_i * pitch + col_i];
    } else {
        N_ds[ty][tx] = 0.0f;
    }
    __syncthreads();
    float output = 0.0f;
    if (ty < O_TILE_WIDTH && tx < O_TILE_WIDTH) {
        for (int i = 0; i < MAX_MASK_WIDTH; i++) {
            for (int j = 0; j < MAX_MASK_WIDTH; j++) {
                output += M[i * MAX_MASK_WIDTH + j] * N_ds[i + ty][j + tx];
            }
        }
        if (row_o < height && col_o < width) P[row_o * width + col_o] = output;
    }
}

// Brent-Kung scan of SECTION = 256 elements by 128 threads, block 0. XY[threadIdx.x] and XY[threadIdx.x +
// blockDim.x] stores: words 0..31 and 128..159 -> 1 wavefront; X loads: 4 sectors. Reduction tree, stride 1:
// index = (t + 1) * 2 - 1 = 2t + 1 < 256 for all 128 threads: XY[index] words 1, 3, .., 63 -> 2-way, 2 wavefronts
// (load and store); XY[index - stride] words 0, 2, .., 62 -> 2 wavefronts, 2-way.
__global__ void brent_kung_scan(const float *X, float *Y, int InputSize) {
    __shared__ float XY[SECTION];
    int i = 2 * blockIdx.x * blockDim.x + threadIdx.x;
    if (i < InputSize) XY[threadIdx.x] = X[i];
    if (i + blockDim.x < InputSize) XY[threadIdx.x + blockDim.x] = X[i + blockDim.x];
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < SECTION) XY[index] += XY[index - stride];
    }
    __syncthreads();
    if (i < InputSize) Y[i] = XY[threadIdx.x];
}

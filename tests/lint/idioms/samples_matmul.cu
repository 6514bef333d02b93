// Tiled matrix multiply in the style of the CUDA samples' matrixMul: template block size, As/Bs tiles behind
// AS/BS macros, a loop over the tiles with two induction variables. Launch: block BLOCK_SIZE x BLOCK_SIZE.
#define AS(i, j) As[i][j]
#define BS(i, j) Bs[i][j]

template <int BLOCK_SIZE>
__global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB) {
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int aBegin = wA * BLOCK_SIZE * by;
    int aEnd = aBegin + wA - 1;
    int aStep = BLOCK_SIZE;
    int bBegin = BLOCK_SIZE * bx;
    int bStep = BLOCK_SIZE * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        AS(ty, tx) = A[a + wA * ty + tx];
        BS(ty, tx) = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            Csub += AS(ty, k) * BS(k, tx);
        }
        __syncthreads();
    }
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}

// Block 32 x 32, wA = wB = 1024. Warp w = row ty = w, tx = lane:
//   A[a + wA*ty + tx], B[...], C[...]: 32 consecutive floats -> 4 sectors (ideal 4), coalesced.
//   AS(ty, tx) / BS(ty, tx) stores: 32 consecutive words -> 1 wavefront.
//   AS(ty, k): one word for the warp -> 1 wavefront, broadcast. BS(k, tx): 32 consecutive words -> 1.
// Block 16 x 16 (BLOCK_SIZE 16): a warp holds rows ty, ty + 1, 16 lanes each:
//   A[a + wA*ty + tx]: two runs of 64 bytes, 4 KiB apart -> 4 sectors (ideal 4): each run is 2 aligned sectors.
//   AS(ty, k): words 16*ty and 16*(ty+1): banks 0 and 16 -> 1 wavefront. BS(k, tx): words 16k..16k+15 -> 1.

// Matrix multiplication, the seeds' ladder: from one thread per output to shared-memory tiles, corner turning
// and thread coarsening, plus the Best Practices Guide's w = 32 kernels. Every kernel computes C = A B (or
// C = A A^T) in FP32, all matrices row-major unless the name says otherwise: A is M x K, B is K x N, C is M x N.
// Offsets into the matrices are 64-bit (M*K can pass 2^31); the dimensions themselves are int. The production
// SGEMM is sgemm.cu, the matrix-vector kernels gemv.cu.

#include "common.cuh"

// ------------------------------------------------------------------ 1-2. one thread per output
// naive<false>: one thread per output, B read along a row so a warp's B loads coalesce (seed 000 / 002)
// naive<true>: N (= B) stored column-major: neighbouring threads read K floats apart, uncoalesced (seed 000)
template <bool B_COL_MAJOR>
__global__ void naive(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                      int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        const float* a = A + (long long)row * K;
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float b = B_COL_MAJOR ? B[(long long)col * K + k] : B[(long long)k * N + col];
            sum += a[k] * b;
        }
        C[(long long)row * N + col] = sum;
    }
}

// ------------------------------------------------------------------ 3. transposed_b
// transpose_naive: Bt = B^T, the seed's one-element-per-thread transpose (seed 004); transposed_b
// then runs naive<true> on Bt, whose layout is exactly "B stored column-major".
extern "C" __global__ void transpose_naive(float* __restrict__ Bt, const float* __restrict__ B, int K, int N) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (k < K && col < N) Bt[(long long)col * K + k] = B[(long long)k * N + col];
}

// ------------------------------------------------------------------ 4-6. Best Practices 9.2.3.2 (w = 32)
// A is M x 32, B is 32 x N, blocks of 32 x 32 threads, M and N multiples of 32.
#define TILE_DIM 32

// simple_multiply: each thread reads a row of A (one float per 32-byte sector used) and a column of B (seed 003)
extern "C" __global__ void simple_multiply(float* __restrict__ c, const float* __restrict__ a,
                                           const float* __restrict__ b, int N) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) sum += a[row * TILE_DIM + i] * b[(long long)i * N + col];
    c[(long long)row * N + col] = sum;
}

// coalesced_multiply: the warp's row of A loaded once, coalesced, into shared memory; __syncwarp (seed 003)
extern "C" __global__ void coalesced_multiply(float* __restrict__ c, const float* __restrict__ a,
                                              const float* __restrict__ b, int N) {
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    __syncwarp();  // only this warp reads the row it wrote
    for (int i = 0; i < TILE_DIM; i++) sum += aTile[threadIdx.y][i] * b[(long long)i * N + col];
    c[(long long)row * N + col] = sum;
}

// shared_ab_multiply: tiles of A and B both in shared memory, no redundant B reads (seed 003)
extern "C" __global__ void shared_ab_multiply(float* __restrict__ c, const float* __restrict__ a,
                                              const float* __restrict__ b, int N) {
    __shared__ float aTile[TILE_DIM][TILE_DIM], bTile[TILE_DIM][TILE_DIM];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    bTile[threadIdx.y][threadIdx.x] = b[(long long)threadIdx.y * N + col];
    __syncthreads();  // a warp reads B rows that other warps wrote
    for (int i = 0; i < TILE_DIM; i++) sum += aTile[threadIdx.y][i] * bTile[i][threadIdx.x];
    c[(long long)row * N + col] = sum;
}

// ------------------------------------------------------------------ 7. tiled (any M, N, K)
// tiled<TILE>: TILE x TILE shared tiles of A and B, zero-padded at the edges, bounds-checked store (seed 002)
template <int TILE>
__global__ void tiled(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                      int M, int N, int K) {
    __shared__ float sh_A[TILE][TILE];
    __shared__ float sh_B[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = TILE * blockIdx.y + ty;
    const int col = TILE * blockIdx.x + tx;
    float value = 0.0f;
    for (int phase = 0; phase < (K + TILE - 1) / TILE; phase++) {
        const int ka = phase * TILE + tx, kb = phase * TILE + ty;
        sh_A[ty][tx] = (row < M && ka < K) ? A[(long long)row * K + ka] : 0.0f;
        sh_B[ty][tx] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++) value += sh_A[ty][k] * sh_B[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = value;
}

// ------------------------------------------------------------------ 8. corner turning
// corner_turning<TILE, PAD>: N (= B) column-major, read coalesced along k and transposed into
// shared memory (seed 000 exercise, Fig. 6.4); PAD = 1 removes the TILE-way bank conflict of the
// transposed store Nds[tx][ty].
template <int TILE, int PAD>
__global__ void corner_turning(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ Bcm,
                               int M, int N, int K) {
    __shared__ float Mds[TILE][TILE];
    __shared__ float Nds[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int n_rowstart = blockIdx.x * TILE;  // rows of the stored (column-major) N are columns of B
    float value = 0.0f;
    for (int ph = 0; ph < (K + TILE - 1) / TILE; ++ph) {
        const int k = ph * TILE + tx;
        Mds[ty][tx] = (row < M && k < K) ? A[(long long)row * K + k] : 0.0f;
        Nds[tx][ty] = (n_rowstart + ty < N && k < K) ? Bcm[(long long)(n_rowstart + ty) * K + k] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) value += Mds[ty][kk] * Nds[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = value;
}

// ------------------------------------------------------------------ 9. thread coarsening
// coarsened<TILE, COARSE>: one block computes COARSE adjacent output tiles, reusing each A tile
// COARSE times (seed 000, COARSE_FACTOR); bounds checks and zero padding added for any M, N, K.
template <int TILE, int COARSE>
__global__ void coarsened(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                          int M, int N, int K) {
    __shared__ float Mds[TILE][TILE];
    __shared__ float Nds[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int colStart = blockIdx.x * TILE * COARSE + tx;
    float Pvalue[COARSE];
#pragma unroll
    for (int c = 0; c < COARSE; ++c) Pvalue[c] = 0.0f;
    for (int ph = 0; ph < (K + TILE - 1) / TILE; ++ph) {
        const int ka = ph * TILE + tx, kb = ph * TILE + ty;
        Mds[ty][tx] = (row < M && ka < K) ? A[(long long)row * K + ka] : 0.0f;
#pragma unroll
        for (int c = 0; c < COARSE; ++c) {
            const int col = colStart + c * TILE;
            Nds[ty][tx] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < TILE; ++k) Pvalue[c] += Mds[ty][k] * Nds[k][tx];
            __syncthreads();
        }
    }
#pragma unroll
    for (int c = 0; c < COARSE; ++c) {
        const int col = colStart + c * TILE;
        if (row < M && col < N) C[(long long)row * N + col] = Pvalue[c];
    }
}

// ------------------------------------------------------------------ 10-12. C = A A^T (Best Practices 9.2.3.3)
// A is M x 32, C is M x M, blocks of 32 x 32 threads, M a multiple of 32.

// aat_simple: a[col*TILE_DIM + i] walks A^T with a stride of 32 floats: strided, wasteful reads (seed 003)
extern "C" __global__ void aat_simple(float* __restrict__ c, const float* __restrict__ a, int M) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) sum += a[row * TILE_DIM + i] * a[col * TILE_DIM + i];
    c[(long long)row * M + col] = sum;
}

// aat_tiled<PAD>: both tiles read coalesced, the A^T tile transposed in shared memory; with PAD = 0 the
// store transposedTile[tx][ty] walks a column of a 32 x 32 tile (32-way bank conflict), 32 x 33 removes it (seed 003)
template <int PAD>
__global__ void aat_tiled(float* __restrict__ c, const float* __restrict__ a, int M) {
    __shared__ float aTile[TILE_DIM][TILE_DIM], transposedTile[TILE_DIM][TILE_DIM + PAD];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    transposedTile[threadIdx.x][threadIdx.y] = a[(blockIdx.x * blockDim.x + threadIdx.y) * TILE_DIM + threadIdx.x];
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i++) sum += aTile[threadIdx.y][i] * transposedTile[i][threadIdx.x];
    c[(long long)row * M + col] = sum;
}

// In the style of the PolyBench/GPU kernels: sizes, scalars and the element type from macros and a typedef, 2-D
// blocks of 32 x 8 with one thread per output element, loop counters declared at the top of the kernel.
typedef float DATA_TYPE;
#define NI 512
#define NJ 512
#define NK 512
#define NX 1024
#define NY 1024
#define M 1000
#define ALPHA 32412.0f
#define BETA 2123.0f
#define FLOAT_N 3214212.01f

// gemm, block (32, 8): warp 0 is row i = 0, columns j = 0..31. c[i * NJ + j] (load and store): 4 sectors;
// a[i * NK + k]: one address -> 1 sector, broadcast; b[k * NJ + j]: 4 sectors.
__global__ void gemm_kernel(DATA_TYPE *a, DATA_TYPE *b, DATA_TYPE *c) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i < NI) && (j < NJ)) {
        c[i * NJ + j] *= BETA;
        int k;
        for (k = 0; k < NK; k++) {
            c[i * NJ + j] += ALPHA * a[i * NK + k] * b[k * NJ + j];
        }
    }
}

// atax, first kernel, a thread per row of A, block 256: A[i * NY + j] at j = 0: rows 4096 bytes apart -> 32
// sectors (ideal 4), column-major; x[j]: 1 sector, broadcast; tmp[i] (load and store): 4 sectors.
__global__ void atax_kernel1(DATA_TYPE *A, DATA_TYPE *x, DATA_TYPE *tmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < NX) {
        int j;
        for (j = 0; j < NY; j++) {
            tmp[i] += A[i * NY + j] * x[j];
        }
    }
}

// atax, second kernel, a thread per column: A[i * NY + j] at i = 0: 4 sectors; tmp[i]: broadcast; y[j]: 4 sectors.
__global__ void atax_kernel2(DATA_TYPE *A, DATA_TYPE *y, DATA_TYPE *tmp) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < NY) {
        int i;
        for (i = 0; i < NX; i++) {
            y[j] += A[i * NY + j] * tmp[i];
        }
    }
}

// fdtd-2d, block (32, 8), _fict_ indexed by the time step t = 3: row i = 0 (warp 0) takes ey[j] = _fict_[t]:
// ey[i * NY + j] store, 4 sectors; _fict_[t]: broadcast. The other rows (warp 1, i = 1): ey[i * NY + j] load and
// store, hz[i * NY + j] and hz[(i - 1) * NY + j]: 4 sectors each.
__global__ void fdtd_step1_kernel(DATA_TYPE *_fict_, DATA_TYPE *ex, DATA_TYPE *ey, DATA_TYPE *hz, int t) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i < NX) && (j < NY)) {
        if (i == 0) {
            ey[i * NY + j] = _fict_[t];
        } else {
            ey[i * NY + j] = ey[i * NY + j] - 0.5f * (hz[i * NY + j] - hz[(i - 1) * NY + j]);
        }
    }
}

// 2-D convolution, block (32, 8): the guards i > 0 and j > 0 leave block 0's warps partial; block (1, 0, 0) warp 1
// (i = 1, j = 32..63) is the first full one. A[(i - 1) * NJ + (j - 1)]: floats 31..62 of row 0 -> bytes 124..251,
// 5 sectors (ideal 4), offset; A[(i - 1) * NJ + j]: 4 sectors; A[(i - 1) * NJ + (j + 1)]: 5, offset; the same for
// rows i and i + 1. B[i * NJ + j]: 4 sectors.
__global__ void convolution2d_kernel(DATA_TYPE *A, DATA_TYPE *B) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    DATA_TYPE c11 = +0.2f, c21 = +0.5f, c31 = -0.8f;
    DATA_TYPE c12 = -0.3f, c22 = +0.6f, c32 = -0.9f;
    DATA_TYPE c13 = +0.4f, c23 = +0.7f, c33 = +0.10f;
    if ((i < NI - 1) && (j < NJ - 1) && (i > 0) && (j > 0)) {
        B[i * NJ + j] = c11 * A[(i - 1) * NJ + (j - 1)] + c21 * A[(i - 1) * NJ + (j + 0)] +
                        c31 * A[(i - 1) * NJ + (j + 1)] + c12 * A[(i + 0) * NJ + (j - 1)] +
                        c22 * A[(i + 0) * NJ + (j + 0)] + c32 * A[(i + 0) * NJ + (j + 1)] +
                        c13 * A[(i + 1) * NJ + (j - 1)] + c23 * A[(i + 1) * NJ + (j + 0)] +
                        c33 * A[(i + 1) * NJ + (j + 1)];
    }
}

// covariance's column means, rows of M + 1 floats (1-based columns), block 256: a thread per column j = 1..M (j = 0
// does nothing). Warp 0 misses lane 0 (j = 0), so warp 1 (j = 32..63) is analyzed: mean[j] (store, then load and
// store in the loop): 4 sectors; data[i * (M + 1) + j] at i = 1: row 1 starts at float 1001 -> floats 1033..1064,
// bytes 4132..4259 -> 5 sectors (ideal 4), offset.
__global__ void mean_kernel(DATA_TYPE *mean, DATA_TYPE *data) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if ((j >= 1) && (j < (M + 1))) {
        mean[j] = 0.0f;
        int i;
        for (i = 1; i < (M + 1); i++) {
            mean[j] += data[i * (M + 1) + j];
        }
        mean[j] /= FLOAT_N;
    }
}

// 2-D blocks of 16 x 16: warp 0 is threadIdx.y = 0 and 1, threadIdx.x = 0..15.
// With --let width=1024: row 0 is bytes 0..63 (2 sectors), row 1 bytes 4096..4159 (2 sectors) -> 4 sectors,
// 128 bytes used -> ideal 4: coalesced. With --let width=1001: row 1 starts at byte 4004 (4 past a sector
// boundary), bytes 4004..4067 touch 3 sectors -> 5 sectors, ideal 4; the lane stride is not constant -> scattered.
__global__ void scale2d(float* a, int width, int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height)
        a[row * width + col] *= 2.0f;
}

// Naive matmul, block 16 x 16, N = 1024 (--let n=1024), first iteration k = 0.
// A[row * n + k]: lanes 0-15 read A[0], lanes 16-31 read A[1024]: 2 floats in 2 sectors; the 8 bytes used
// would fit in 1 -> ideal 1, not consecutive and not one address -> scattered.
// B[k * n + col]: lanes 0-15 and 16-31 both read B[0..15] (64 bytes) -> 2 sectors, ideal 2, coalesced.
__global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
        sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

// Jacobi step with boundary guards, block 32 x 8, --let nx=1024 --let ny=1024. In block 0 no warp has 32 lanes
// inside (lane 0 has i = 0, warp 0 has j = 0), so lint takes block (1, 0, 0): i = 32 + k, and its warp 1 (j = 1).
// u[j * nx + i - 1] = u[1055 + k]: bytes 4220 + 4k, k = 0..31 -> sectors 131..135 = 5, ideal 4: offset.
// u[j * nx + i + 1]: bytes 4228 + 4k -> sectors 132..136 = 5: offset. u[(j - 1) * nx + i]: bytes 128..255 -> 4,
// coalesced. un[j * nx + i]: bytes 4224..4351 (4224 = 132 * 32) -> 4, coalesced.
__global__ void jacobi(const float* u, float* un, int nx, int ny) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1)
        un[j * nx + i] = 0.25f * (u[j * nx + i - 1] + u[j * nx + i + 1] + u[(j - 1) * nx + i] + u[(j + 1) * nx + i]);
}

// The CUDA C Programming Guide's shared-memory matrix multiplication: Matrix structs passed by value, helpers.
// Block 16 x 16, --let A.stride=1024 (and B, C), A.width=1024. Warp 0 is rows 0 and 1 of the block: GetElement reads
// elements[row * 1024 + col], bytes 0..63 and 4096..4159 -> 2 + 2 sectors, ideal 4: coalesced, at each call
// (lines 34 and 35); SetElement stores the same pattern into C. Without --let B.stride the B read depends on it.
#define BLOCK_SIZE 16
typedef struct {
    int width;
    int height;
    int stride;
    float* elements;
} Matrix;
__device__ float GetElement(const Matrix A, int row, int col) { return A.elements[row * A.stride + col]; }
__device__ void SetElement(Matrix A, int row, int col, float value) { A.elements[row * A.stride + col] = value; }
__device__ Matrix GetSubMatrix(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width    = BLOCK_SIZE;
    Asub.height   = BLOCK_SIZE;
    Asub.stride   = A.stride;
    Asub.elements = &A.elements[A.stride * BLOCK_SIZE * row + BLOCK_SIZE * col];
    return Asub;
}
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    int blockRow = blockIdx.y;
    int blockCol = blockIdx.x;
    Matrix Csub = GetSubMatrix(C, blockRow, blockCol);
    float Cvalue = 0;
    int row = threadIdx.y;
    int col = threadIdx.x;
    for (int m = 0; m < (A.width / BLOCK_SIZE); ++m) {
        Matrix Asub = GetSubMatrix(A, blockRow, m);
        Matrix Bsub = GetSubMatrix(B, m, blockCol);
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[row][col] = GetElement(Asub, row, col);
        Bs[row][col] = GetElement(Bsub, row, col);
        __syncthreads();
        for (int e = 0; e < BLOCK_SIZE; ++e)
            Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();
    }
    SetElement(Csub, row, col, Cvalue);
}

// A kernel file with its host program: lint reads the launch for the block, template arguments and constant
// integer arguments when none are given on the command line.
#include <cstdio>
#include <cuda_runtime.h>

// Launched below with block 16 x 16, TILE = 16, width = 1000. Warp 0 is rows 0 and 1 (threadIdx.y), 16 floats
// each: m[row * 1000 + col] -> bytes 0..63 (2 sectors) and 4000..4063 (4000 = 125 * 32: 2 sectors) -> 4 sectors,
// ideal 4, coalesced. The padded tile t[16][17]: t[threadIdx.x][threadIdx.y] has lanes k (k < 16) at word 17k and
// lanes 16 + k at word 17k + 1. Banks 17k % 32 are 0, 17, 2, 19, ..., 31 and (17k + 1) % 32 are 1, 18, ..., 15, but
// lane 31 (k = 15) reads word 256, bank 0, as lane 0 reads word 0: a 2-way conflict, 2 wavefronts (ideal 1).
template <int TILE>
__global__ void scale_tile(float* m, int width) {
    __shared__ float t[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    t[threadIdx.y][threadIdx.x] = m[row * width + col];
    __syncthreads();
    m[row * width + col] = 2.0f * t[threadIdx.x][threadIdx.y];
}

// Launched twice with different blocks: lint does not pick one (256 threads assumed, and a note says so).
__global__ void twice(float* a) {
    a[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f;
}

int main() {
    float* d = nullptr;
    cudaMalloc(&d, 1000 * 1000 * sizeof(float));
    dim3 threads(16, 16);
    dim3 grid(63, 63);
    scale_tile<16><<<grid, threads>>>(d, 1000);
    twice<<<4, 128>>>(d);
    twice<<<2, 256>>>(d);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}

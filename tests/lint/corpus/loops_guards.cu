#define DATA_SIZE 16384
#define THREAD_NUM 256

// squaresSum (seed 004), per-thread chunk: size = 16384 / 256 = 64 ints; lane k reads data[64k] at the first
// iteration: 256 bytes apart -> 32 sectors per request, ideal 4 -> the grid-stride loop fix gives 4.
__global__ void squares_chunk(const int* data, int* sum) {
    const int size = DATA_SIZE / THREAD_NUM;
    const int tid = threadIdx.x;
    int tmp = 0;
    for (int i = tid * size; i < (tid + 1) * size; i++)
        tmp += data[i] * data[i];
    sum[tid] = tmp;
}

// Interleaved: lane k reads data[k] -> 4 sectors, coalesced; the step THREAD_NUM is the same for every lane.
__global__ void squares_interleaved(const int* data, int* sum) {
    const int tid = threadIdx.x;
    int tmp = 0;
    for (int i = tid; i < DATA_SIZE; i += THREAD_NUM)
        tmp += data[i] * data[i];
    sum[tid] = tmp;
}

// Reduction with interleaved addressing (seed 004, reduce1): first iteration s = 1, index = 2 * tid;
// sdata[index] for lanes 0..31 of warp 0 (index < 256 for tid < 128): words 0, 2, ..., 62 -> banks 0, 2, ..., 30
// each twice (words 2k and 2k + 32) -> 2 wavefronts, 2-way conflict. sdata[tid] = ... is conflict-free.
__global__ void reduce1(const int* g_idata, int* g_odata) {
    __shared__ int sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = g_idata[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Unsigned wrap: threadIdx.x - 16 is unsigned, so lanes 0..15 wrap to about 4e9 and fail the test; lanes 16..23
// store a[16..23]: 32 bytes = 1 sector. Signed: d = -16..7 < 8 for lanes 0..23: 96 bytes = 3 sectors.
__global__ void wrap_unsigned(float* a) {
    if (threadIdx.x - 16 < 8) a[threadIdx.x] = 0.0f;
}
__global__ void wrap_signed(float* a) {
    int d = threadIdx.x - 16;
    if (d < 8) a[threadIdx.x] = 0.0f;
}

// A guard that selects no thread of the block: 0 requests, not an error.
__global__ void never(float* a) {
    if (threadIdx.x > 4096) a[threadIdx.x] = 1.0f;
}

// Early return keeps warps 0 and 1 (threads 0..63): the first full warp is warp 0, coalesced.
__global__ void early_return(float* a, int n) {
    if (threadIdx.x >= 64) return;
    a[threadIdx.x] = 1.0f;
}

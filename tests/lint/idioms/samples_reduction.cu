// Reductions in the style of the CUDA samples' reduction_kernel.cu: dynamic shared memory through a
// SharedMemory<T> helper struct, templates on the block size, warp shuffles for the last warp.
template <class T>
struct SharedMemory {
    __device__ inline operator T *() {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
    __device__ inline operator const T *() const {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

// Sequential addressing (reduce3): block 256, n = 1 << 20.
//   g_idata[i] with i = 512*blockIdx + tid: 4 sectors (ideal 4), coalesced; g_idata[i + blockDim.x]: same.
//   sdata[tid] store: 1 wavefront. In the loop (s = 128, 64, ..., 1; s >>= 1): sdata[tid + s] load -> 1.
//   g_odata[blockIdx.x] store by lane 0 only: 1 sector (ideal 1).
template <class T>
__global__ void reduce3(T *g_idata, T *g_odata, unsigned int n) {
    T *sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    T mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = mySum = mySum + sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

// reduce6-like: grid-stride while loop (step blockSize * 2 * gridDim.x, the same for every lane), compile-time
// blockSize guards, shuffles. blockSize = 256, block 256, n = 1 << 20:
//   g_idata[i], g_idata[i + blockSize]: 4 sectors, coalesced. sdata[tid] store: 1 wavefront.
//   (blockSize >= 512) branch: never taken -> its sdata[tid + 256] load is not executed (0 requests).
//   sdata[tid + 128] (tid < 128), sdata[tid + 64] (tid < 64), sdata[tid + 32] (tid < 32): 1 wavefront each.
template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const T *__restrict__ g_idata, T *__restrict__ g_odata, unsigned int n) {
    T *sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    T mySum = 0;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    while (i < n) {
        mySum += g_idata[i];
        if (nIsPow2 || i + blockSize < n) mySum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    if ((blockSize >= 512) && (tid < 256)) {
        sdata[tid] = mySum = mySum + sdata[tid + 256];
    }
    __syncthreads();
    if ((blockSize >= 256) && (tid < 128)) {
        sdata[tid] = mySum = mySum + sdata[tid + 128];
    }
    __syncthreads();
    if ((blockSize >= 128) && (tid < 64)) {
        sdata[tid] = mySum = mySum + sdata[tid + 64];
    }
    __syncthreads();
    if (tid < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = warpSize / 2; offset > 0; offset /= 2) {
            mySum += __shfl_down_sync(0xffffffff, mySum, offset);
        }
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

// Interleaved addressing with a modulo test (reduce0): s = 1 first; sdata[tid + s] for every lane (tid % 2 == 0
// keeps the even lanes): words 1, 3, ..., 31 -> 16 lanes, 1 wavefront; the divergence is the cost, not banks.
__global__ void reduce0(int *g_idata, int *g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Histogram and scan in the style of the CUDA samples (histogram256, scan): typedefs, UMUL/UMAD macros,
// per-warp sub-histograms behind a pointer offset into shared memory, shared atomics, ping-pong buffers.
typedef unsigned int uint;
#define LOG2_WARP_SIZE 5U
#define WARP_SIZE (1U << LOG2_WARP_SIZE)
#define HISTOGRAM256_BIN_COUNT 256
#define HISTOGRAM256_THREADBLOCK_SIZE 192
#define WARP_COUNT (HISTOGRAM256_THREADBLOCK_SIZE / WARP_SIZE)
#define HISTOGRAM256_THREADBLOCK_MEMORY (WARP_COUNT * HISTOGRAM256_BIN_COUNT)
#define MERGE_THREADBLOCK_SIZE 256
#define UMUL(a, b) __umul24((a), (b))
#define UMAD(a, b, c) (UMUL((a), (b)) + (c))

inline __device__ void addByte(uint *s_WarpHist, uint data) { atomicAdd(s_WarpHist + data, 1); }

// Block 192 (6 warps). Clearing: s_Hist[tid + i * 192] -> 32 consecutive words, 1 wavefront.
// d_Data[pos] (pos = 192*blockIdx + tid, grid-stride): 4 sectors, coalesced. addByte's atomicAdd: unknown (a
// loaded byte is the address). Merge to global: s_Hist[bin + i * 256] (bin = tid) -> 1 wavefront;
// d_PartialHistograms[256*blockIdx + bin] store: 4 sectors, coalesced.
__global__ void histogram256Kernel(uint *d_PartialHistograms, uint *d_Data, uint dataCount) {
    __shared__ uint s_Hist[HISTOGRAM256_THREADBLOCK_MEMORY];
    uint *s_WarpHist = s_Hist + (threadIdx.x >> LOG2_WARP_SIZE) * HISTOGRAM256_BIN_COUNT;
#pragma unroll
    for (uint i = 0; i < (HISTOGRAM256_THREADBLOCK_MEMORY / HISTOGRAM256_THREADBLOCK_SIZE); i++) {
        s_Hist[threadIdx.x + i * HISTOGRAM256_THREADBLOCK_SIZE] = 0;
    }
    __syncthreads();
    for (uint pos = UMAD(blockIdx.x, blockDim.x, threadIdx.x); pos < dataCount; pos += UMUL(blockDim.x, gridDim.x)) {
        uint data = d_Data[pos];
        addByte(s_WarpHist, (data >> 0) & 0xFFU);
    }
    __syncthreads();
    for (uint bin = threadIdx.x; bin < HISTOGRAM256_BIN_COUNT; bin += HISTOGRAM256_THREADBLOCK_SIZE) {
        uint sum = 0;
        for (uint i = 0; i < WARP_COUNT; i++) {
            sum += s_Hist[bin + i * HISTOGRAM256_BIN_COUNT];
        }
        d_PartialHistograms[blockIdx.x * HISTOGRAM256_BIN_COUNT + bin] = sum;
    }
}

// Merge: block 256, one block per bin. d_PartialHistograms[blockIdx.x + i * 256] with i = tid: lanes 1 KiB apart
// -> 32 sectors (ideal 4), column-major. data[threadIdx.x] store 1 wavefront; the tree loop (stride 128, 64, ...)
// data[threadIdx.x + stride] -> 1. d_Histogram[blockIdx.x] by lane 0: 1 sector.
__global__ void mergeHistogram256Kernel(uint *d_Histogram, uint *d_PartialHistograms, uint histogramCount) {
    uint sum = 0;
    for (uint i = threadIdx.x; i < histogramCount; i += MERGE_THREADBLOCK_SIZE) {
        sum += d_PartialHistograms[blockIdx.x + i * HISTOGRAM256_BIN_COUNT];
    }
    __shared__ uint data[MERGE_THREADBLOCK_SIZE];
    data[threadIdx.x] = sum;
    for (uint stride = MERGE_THREADBLOCK_SIZE / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (threadIdx.x < stride) {
            data[threadIdx.x] += data[threadIdx.x + stride];
        }
    }
    if (threadIdx.x == 0) {
        d_Histogram[blockIdx.x] = data[0];
    }
}

// Naive (Hillis-Steele) scan with a double buffer, block n = 256 threads, dynamic shared float temp[2 * n].
// g_idata[thid - 1] for thid > 0: block 0's warp 0 has lanes 1..31 -> warp 1 is the first full warp:
// g_idata[31..62] -> 128 bytes from byte 124: 5 sectors (ideal 4), offset. temp[pout * n + thid] store 1
// wavefront. In the loop (offset = 1 first): temp[pin * n + thid - offset] (thid >= offset) -> 1 wavefront.
__global__ void scan_naive(float *g_odata, float *g_idata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int pout = 0, pin = 1;
    temp[pout * n + thid] = (thid > 0) ? g_idata[thid - 1] : 0;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            temp[pout * n + thid] += temp[pin * n + thid - offset];
        else
            temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    g_odata[thid] = temp[pout * n + thid];
}

// Work-efficient (Blelloch) scan, block n / 2 = 128 threads, n = 256. g_idata[2 * thid], [2 * thid + 1]: each
// lane 8 bytes apart -> 8 sectors (ideal 4), strided. temp[2 * thid] store: words 0, 2, ..., 62 -> 2 banks
// hold 2 words each at most... every even bank twice -> 2 wavefronts, 2-way. Up-sweep, first pass (d = 128,
// offset = 1): ai = 2 thid, bi = 2 thid + 1 -> temp[ai], temp[bi]: 2 wavefronts each.
__global__ void prescan(float *g_odata, float *g_idata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int offset = 1;
    temp[2 * thid] = g_idata[2 * thid];
    temp[2 * thid + 1] = g_idata[2 * thid + 1];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (thid == 0) { temp[n - 1] = 0; }
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            float t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    g_odata[2 * thid] = temp[2 * thid];
    g_odata[2 * thid + 1] = temp[2 * thid + 1];
}

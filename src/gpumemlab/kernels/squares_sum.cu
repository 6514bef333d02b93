// Sum of squares from the vendor guide (seed 004): the same work, two ways of splitting it.

// squares_sum_chunked: each thread sums its own contiguous chunk; a warp's loads are `chunk` words apart (004, before)
extern "C" __global__ void squares_sum_chunked(int* __restrict__ sum, const int* __restrict__ data, long long n) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long chunk = (n + threads - 1) / threads;
    const long long begin = tid * chunk;
    const long long end = begin + chunk < n ? begin + chunk : n;
    int acc = 0;
    for (long long i = begin; i < end; ++i) acc += data[i] * data[i];
    sum[tid] = acc;
}

// squares_sum_interleaved: thread t reads t, t+T, t+2T...: each warp reads 32 consecutive words (004, after)
extern "C" __global__ void squares_sum_interleaved(int* __restrict__ sum, const int* __restrict__ data, long long n) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (long long i = tid; i < n; i += threads) acc += data[i] * data[i];
    sum[tid] = acc;
}

// Templates, constexpr and the preprocessor.
#ifndef STRIDE
#define STRIDE 4
#endif
#if STRIDE > 2
#define IDX(i) ((i) * STRIDE)
#else
#define IDX(i) (i)
#endif

// With -D STRIDE=1: IDX(i) = i -> 4 sectors, coalesced. Default STRIDE 4: lane k reads float 4k, 16 bytes apart
// -> 512-byte span -> 16 sectors, ideal 4, strided.
__global__ void macro_stride(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[IDX(i)];
}

// --template T=double --template SPREAD=3: lane k reads double 3k, 24 bytes apart; bytes 24k .. 24k + 7 for
// k = 0..31 touch sectors floor(24k / 32) = 0, 0, 1, 2, 3, 3, 4, 5, 6, 6, ... -> 24 distinct sectors
// (every 4 lanes span 96 bytes = 3 sectors: 8 groups x 3), ideal: 256 bytes used -> 8.
template <typename T, int SPREAD>
__global__ void spread(T* out, const T* in) {
    constexpr int S = SPREAD;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * S];
}

// A __device__ helper analyzed at its call site: load(in, 2 * i) is stride 2 -> 8 sectors, ideal 4.
__device__ float load(const float* p, int j) { return p[j]; }
__global__ void through_helper(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = load(in, 2 * i);
}

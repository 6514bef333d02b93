// 1-D patterns of the Best Practices Guide (seed 003: offsetCopy, strideCopy). Block 256, float = 4 bytes.

// Lane k reads float 2k: the warp spans 32 * 8 = 256 bytes -> 8 sectors per request; the 128 bytes it
// uses fit in 4 -> ideal 4; constant stride 8 bytes < 128 -> "strided".
__global__ void stride2(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[2 * i];
}

// Lane k reads float k + 1: bytes 4..131 straddle sectors 0..4 -> 5 sectors, ideal 4 -> "offset".
// The store out[i] is bytes 0..127 -> 4 sectors, coalesced.
__global__ void offset1(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + 1];
}

// Every lane reads the same float: 1 sector, "broadcast".
__global__ void broadcast(float* out, const float* in) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = in[blockIdx.x];
}

// float4: lane k reads bytes 16k..16k+15: 512 bytes -> 16 sectors, ideal 16, coalesced.
__global__ void vec4(float4* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = reinterpret_cast<const float4*>(in)[i];
}

// Each thread reads two neighbouring floats, in[2i] and in[2i + 1]: each load spans 256 bytes, 8 sectors for the
// 128 bytes it uses (ideal 4). One float2 per thread reads both: 256 bytes, 8 sectors, in 1 request instead of 2.
__global__ void pair_sum(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[2 * i] + in[2 * i + 1];
}

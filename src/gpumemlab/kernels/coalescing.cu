// Coalescing patterns of the slides (seed 001): "read a float, increment, write back", and the
// array-of-structures layouts that break coalescing, with their two fixes (shared memory, SoA).

// Access patterns of increment<PATTERN>: which element thread i touches.
#define PAT_COALESCED 0   // k-th thread, k-th word
#define PAT_PARTIAL 1     // some threads do not participate (lanes 3 and 13 of each half-warp)
#define PAT_PERMUTED 2    // permuted within a 128-byte segment (lane -> 31 - lane)
#define PAT_MISALIGNED 3  // k-th thread, (k+1)-th word: start not a multiple of the segment
#define PAT_RANDOM 4      // a bijective hash of i over the whole array: every warp scatters

__device__ __forceinline__ unsigned long long scatter(unsigned long long i, int log2n) {
    // Odd multipliers and xor-shifts are bijections modulo 2^log2n, so this is a permutation.
    const unsigned long long mask = (1ull << log2n) - 1;
    i = (i * 0x9E3779B97F4A7C15ull) & mask;
    i ^= i >> (log2n / 2 + 1);
    i = (i * 0xD6E8FEB86659FD93ull) & mask;
    return i;
}

// increment<PATTERN>: the slides' timing experiment, one float per thread over n floats (n a multiple of 32;
// the random pattern permutes 2^log2n elements, so it needs n == 2^log2n)
template <int PATTERN>
__global__ void increment(float* __restrict__ a, long long n, int log2n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned long long)n) return;
    const unsigned lane = threadIdx.x & 31;
    unsigned long long j = i;
    if (PATTERN == PAT_PARTIAL && ((lane & 15) == 3 || (lane & 15) == 13)) return;
    if (PATTERN == PAT_PERMUTED) j = (i & ~31ull) | (31 - lane);
    if (PATTERN == PAT_MISALIGNED) j = i + 1;  // the array holds n + 32 floats
    if (PATTERN == PAT_RANDOM) j = scatter(i, log2n);
    a[j] += 1.0f;
}

// aos_direct: float3 array of structures read directly: three 4-byte loads 12 bytes apart (seed 001)
extern "C" __global__ void aos_direct(float3* __restrict__ a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 v = a[i];
        v.x += 1.0f;
        v.y += 2.0f;
        v.z += 3.0f;
        a[i] = v;
    }
}

// aos_shared<BLOCK>: float3 staged through shared memory: the block reads 3*BLOCK floats coalesced (seed 001)
template <int BLOCK>
__global__ void aos_shared(float* __restrict__ a, int n) {
    __shared__ float s[3 * BLOCK];
    const long long base = 3ll * blockIdx.x * BLOCK;
    const long long total = 3ll * n;
    for (int k = threadIdx.x; k < 3 * BLOCK; k += BLOCK)
        if (base + k < total) s[k] = a[base + k];
    __syncthreads();
    if ((long long)blockIdx.x * BLOCK + threadIdx.x < n) {  // stride 3 in shared memory: conflict-free
        s[3 * threadIdx.x] += 1.0f;
        s[3 * threadIdx.x + 1] += 2.0f;
        s[3 * threadIdx.x + 2] += 3.0f;
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 3 * BLOCK; k += BLOCK)
        if (base + k < total) a[base + k] = s[k];
}

struct __align__(16) point16 { float x, y, z; };

// aos_align16: __align__(16) structure: one 16-byte load per thread, a quarter of the bytes padding (seed 001)
extern "C" __global__ void aos_align16(point16* __restrict__ a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        point16 v = a[i];
        v.x += 1.0f;
        v.y += 2.0f;
        v.z += 3.0f;
        a[i] = v;
    }
}

// soa: structure of arrays: three coalesced float streams (seed 001)
extern "C" __global__ void soa(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += 1.0f;
        y[i] += 2.0f;
        z[i] += 3.0f;
    }
}

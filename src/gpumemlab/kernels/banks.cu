// Shared-memory bank conflicts at fixed global traffic (seed 001, slide "Shared memory bank conflicts"):
// every variant reads and writes the same floats coalesced; only the stride of the shared-memory slot
// each lane uses, and so the number of lanes per bank, changes.

#define BANK_WARPS 8          // the kernel is launched with 8 warps (256 threads) per block
#define BANK_WORDS 1024       // words per warp: lane * 32 fits, and every STRIDE has the same occupancy

// bank_stride<STRIDE>: out[i] = in[i] + reps, each +1 a store to and a load from this lane's shared
// slot (lane * STRIDE): STRIDE 2^k puts 2^k lanes of a warp in one bank (1 for STRIDE 1).
template <int STRIDE>
__global__ void __launch_bounds__(BANK_WARPS * 32) bank_stride(float* __restrict__ out, const float* __restrict__ in,
                                                               long long n, int reps) {
    __shared__ float s[BANK_WARPS][BANK_WORDS];
    volatile float* ws = s[threadIdx.x >> 5];  // volatile: every round trip really goes through shared memory
    const int slot = ((threadIdx.x & 31) * STRIDE) & (BANK_WORDS - 1);
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float v = in[i];
        for (int r = 0; r < reps; ++r) {
            ws[slot] = v + 1.0f;
            v = ws[slot];
        }
        out[i] = v;
    }
}

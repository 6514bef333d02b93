// Privatization (seed 000, checklist of optimizations): counting keys into bins with atomics. Every variant
// counts the keys k with 0 <= k < bins into the zeroed 64-bit histogram `hist` and records in the zeroed `range`
// the largest key + 1 ([0]) and whether a key was negative ([1]): what bincount needs for its length and its error.

typedef unsigned long long u64;
constexpr long long KEY_MAX = 9223372036854775807LL;  // no <climits>: NVRTC builds without headers
constexpr long long KEY_MIN = -KEY_MAX - 1;

template <typename K, int N> struct alignas(sizeof(K) * N) KeyPack { K v[N]; };

// the keys' range seen by this warp, two atomics per warp (after every lane's loop: all 32 lanes reach it)
__device__ __forceinline__ void record_range(long long* range, long long hi, long long lo) {
    for (int o = 16; o > 0; o >>= 1) {
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    }
    if ((threadIdx.x & 31) == 0 && lo <= hi) {  // lo > hi: the warp read no key
        if (hi >= 0) atomicMax(range, hi < KEY_MAX ? hi + 1 : KEY_MAX);
        if (lo < 0) atomicMax(range + 1, 1LL);
    }
}

// hist_global: one atomicAdd per key on the one global copy; equal keys serialize at L2 (the unprivatized form)
template <typename K>
__global__ void hist_global(u64* __restrict__ hist, long long* __restrict__ range, const K* __restrict__ keys,
                            long long n, long long bins) {
    long long hi = KEY_MIN, lo = KEY_MAX;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long k = (long long)keys[i];
        hi = max(hi, k);
        lo = min(lo, k);
        if (k >= 0 && k < bins) atomicAdd(hist + k, 1ull);
    }
    record_range(range, hi, lo);
}

__device__ __forceinline__ void count_key(unsigned* mine, long long k, long long bins, long long& hi, long long& lo) {
    hi = max(hi, k);
    lo = min(lo, k);
    if (k >= 0 && k < bins) atomicAdd(mine + k, 1u);
}

// hist_private<K, PER_WARP, VEC>: private histograms in shared memory, one per block (the seed's privatization) or
// one per warp (PER_WARP: less contention on skewed keys), updated with shared-memory atomics and added into the
// global copy once per block; VEC keys per load (16-byte loads where VEC * sizeof(K) == 16)
template <typename K, bool PER_WARP, int VEC>
__global__ void hist_private(u64* __restrict__ hist, long long* __restrict__ range, const K* __restrict__ keys,
                             long long n, int bins) {
    extern __shared__ unsigned private_hist[];
    const int copies = PER_WARP ? (int)(blockDim.x >> 5) : 1;
    for (int b = threadIdx.x; b < bins * copies; b += blockDim.x) private_hist[b] = 0;
    __syncthreads();
    unsigned* mine = private_hist + (PER_WARP ? (int)(threadIdx.x >> 5) * bins : 0);
    long long hi = KEY_MIN, lo = KEY_MAX;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long packs = n / VEC;
    const KeyPack<K, VEC>* packed = reinterpret_cast<const KeyPack<K, VEC>*>(keys);
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < packs; p += stride) {
        const KeyPack<K, VEC> v = packed[p];
#pragma unroll
        for (int j = 0; j < VEC; ++j) count_key(mine, (long long)v.v[j], bins, hi, lo);
    }
    for (long long i = packs * VEC + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        count_key(mine, (long long)keys[i], bins, hi, lo);
    record_range(range, hi, lo);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        unsigned c = 0;
        for (int w = 0; w < copies; ++w) c += private_hist[w * bins + b];
        if (c) atomicAdd(hist + b, (u64)c);
    }
}

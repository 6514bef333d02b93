// More spellings, all launched with a 16 x 16 block (warp 0 = rows ty = 0, 1 of 16 lanes), n = 2^20, w = h = 1024,
// p.n = 4096, p.ld = 1: an anonymous-namespace constexpr, a struct of pointers by value, a kernel in a namespace,
// extern "C", __launch_bounds__ with two arguments, auto / static_cast indices, a 2-D grid-stride loop, int4 through
// __ldg, float2 through reinterpret_cast, inline PTX, a lambda, a static constexpr member of a template.
#define BLOCK 16
namespace {
constexpr int kWarpSize = 32;
}
struct Params { float* x; const float* y; int n; int ld; };

// A 1-D index with a 16 x 16 block: both rows of warp 0 have idx = tx, so 16 distinct floats: 2 sectors (ideal 2).
template <typename T>
__global__ void __launch_bounds__(256, 2) axpy_t(T* __restrict__ out, const T* __restrict__ in, T a, int n) {
  const auto idx = static_cast<int>(threadIdx.x + blockIdx.x * blockDim.x);
  if (idx >= n) return;
  out[idx] = a * in[idx] + out[idx];
}

// p.x[i * p.ld], p.y[i]: as above, 2 sectors (ideal 2).
namespace kern {
__global__ void params_k(Params p) {
  unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < p.n) p.x[i * p.ld] = p.y[i];
}
}

// s[16][17]: rows ty = 0, 1 at words 0..15 and 17..32: words 0 and 32 share bank 0 -> 2-way, 2 wavefronts (ideal 1)
// for the store; the column read s[tx][ty]: words 17 tx + ty, word 0 (tx 0, ty 0) and 256 (tx 15, ty 1) in bank 0
// -> 2-way too. Global: two rows of 16 floats, 4 KiB apart, each 64 aligned bytes -> 4 sectors (ideal 4).
extern "C" __global__ void tile2d(float* out, const float* in, int w, int h) {
  __shared__ float s[BLOCK][BLOCK + 1];
  int x = blockIdx.x * BLOCK + threadIdx.x, y = blockIdx.y * BLOCK + threadIdx.y;
  if (x < w && y < h) s[threadIdx.y][threadIdx.x] = in[static_cast<size_t>(y) * w + x];
  __syncthreads();
  x = blockIdx.y * BLOCK + threadIdx.x; y = blockIdx.x * BLOCK + threadIdx.y;
  if (x < h && y < w) out[(size_t)y * h + x] = s[threadIdx.x][threadIdx.y];
}

// img[y * w + x]: two rows of 16 floats -> 4 sectors (ideal 4), load and store.
__global__ void gs2d(float* img, int w, int h) {
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < h; y += blockDim.y * gridDim.y)
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < w; x += blockDim.x * gridDim.x)
      img[y * w + x] *= 2.0f;
}

// int4: 16 distinct lanes x 16 bytes -> 8 sectors (ideal 8).
__global__ void ldg_int4(int4* out, const int4* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __ldg(in + i);
}

// float2 by t = threadIdx.x: 16 distinct x 8 bytes -> 4 sectors (ideal 4), load and store.
__global__ void f2(float2* out, const float* in) {
  int t = threadIdx.x;
  float2 v = reinterpret_cast<const float2*>(in)[t];
  out[t] = make_float2(v.y, v.x);
}

// The PTX load ld.global.nc.f32 [%1] of in + threadIdx.x and out[threadIdx.x]: 16 distinct floats -> 2 sectors.
__global__ void asm_ld(float* out, const float* in) {
  float v;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(in + threadIdx.x));
  out[threadIdx.x] = v;
}

// A lambda's index (no captures: run at the call): out[2 * threadIdx.x], rows y 0, 1 alike -> 4 sectors (ideal 2).
__global__ void lam(float* out, int n) {
  auto f = [](int i) { return i * 2; };
  int i = threadIdx.x;
  out[f(i)] = 1.0f;
}

// lane = tx, wid = 0 in warp 0: partial[wid] stored by the two lanes with tx == 0, one word -> 1 wavefront,
// broadcast; partial[lane] 16 words -> 1. Global: 16 distinct floats -> 2 sectors.
__global__ void warp_lane(float* out, const float* in) {
  int lane = threadIdx.x % kWarpSize;
  int wid = threadIdx.x / kWarpSize;
  __shared__ float partial[kWarpSize];
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  if (lane == 0) partial[wid] = v;
  __syncthreads();
  if (wid == 0) out[blockIdx.x * kWarpSize + lane] = partial[lane];
}

// t[64]: t[(tx * 8) % 64]: words 0, 8, ..., 56 (twice each): banks 0, 8, 16, 24 hold two words each -> 2-way.
template <int N>
struct Tile { static constexpr int kSize = N * N; };

__global__ void static_constexpr_k(float* out) {
  __shared__ float t[Tile<8>::kSize];
  t[threadIdx.x % Tile<8>::kSize] = 0;
  out[threadIdx.x] = t[(threadIdx.x * 8) % Tile<8>::kSize];
}

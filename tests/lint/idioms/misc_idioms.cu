// Everyday idioms: AoS particles, 3-D blocks, dynamic shared memory cut into several arrays, volatile shared
// warp reductions, ternaries and min/max in indices, size_t index math, doubles and chars, a half-warp pattern.
struct Particle {
    float3 pos;
    float3 vel;
    float mass;
    int id;
};

__device__ inline unsigned int gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }

// AoS: sizeof(Particle) = 32; lane k's p[i].pos.x at byte 32k -> 32 sectors (ideal 4), strided (32 bytes < 128).
// p[i].mass: byte 32k + 24 -> 32 sectors. pos_out[i] = p[i].pos: float3 is 4-byte aligned, so three 4-byte
// requests each (x, y, z): the store's lanes 12 bytes apart -> 12 sectors per request (ideal 4), strided; the load
// of p[i].pos 32 per request. Block 256.
__global__ void integrate(Particle *p, float3 *pos_out, float dt, int n) {
    unsigned int i = gtid();
    if (i >= n) return;
    float x = p[i].pos.x;
    float m = p[i].mass;
    p[i].pos.x = x + dt * m;
    pos_out[i] = p[i].pos;
}

// 3-D block (8, 8, 4), volume nx = ny = nz = 256: idx = x + nx * (y + ny * z); warp 0 = threadIdx.y 0..3,
// x 0..7 -> 4 runs of 8 floats (32 bytes, aligned), 1 KiB apart: 4 sectors (ideal 4), coalesced by sectors
// (each run one whole sector). The z-neighbour v[idx + nx*ny]: the same pattern, 4 sectors.
__global__ void stencil3d(float *__restrict__ out, const float *__restrict__ v, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z + 1 >= nz) return;
    size_t idx = x + (size_t)nx * (y + (size_t)ny * z);
    out[idx] = v[idx] + v[idx + (size_t)nx * ny];
}

// Dynamic shared memory cut into a float and an int array: sv = smem, si = (int *)&sv[blockDim.x]. Block 256.
// sv[tid] store, si[tid] store: 1 wavefront each; sv[(tid * 2) % blockDim.x] load: words 0, 2, ..., 62 ->
// 2-way, 2 wavefronts. The global loads: 4 sectors.
__global__ void dyn_shared_split(float *out, const float *a, const int *b) {
    extern __shared__ float smem[];
    float *sv = smem;
    int *si = (int *)&sv[blockDim.x];
    int tid = threadIdx.x;
    sv[tid] = a[blockIdx.x * blockDim.x + tid];
    si[tid] = b[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    out[blockIdx.x * blockDim.x + tid] = sv[(tid * 2) % blockDim.x] + si[tid];
}

// volatile shared warp reduce (pre-shuffle idiom), block 64: tid < 32: sdata[tid] += sdata[tid + 32]: 1 wavefront
// each; then tid + 16 ... 1: lanes read tid + 16 etc.: still consecutive words -> 1.
__device__ void warpReduce(volatile int *sdata, unsigned int tid) {
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 1];
}

__global__ void reduce_volatile(const int *in, int *out) {
    __shared__ int sdata[64];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * 64 + tid];
    __syncthreads();
    if (tid < 32) warpReduce(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Ternary and min/max in an index (clamp to the border), block 256, n = 1000: lane k reads
// in[min(max(i - 1, 0), n - 1)] -> block 0, warp 0: lane 0 and lane 1 both read in[0] -> elements 0..30 ->
// 124 bytes: 4 sectors (ideal 4), coalesced. in[i < n - 1 ? i + 1 : i]: elements 1..32 -> 5 sectors (ideal
// 4), offset.
__global__ void clamp_blur(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float l = in[min(max(i - 1, 0), n - 1)];
    float r = in[i < n - 1 ? i + 1 : i];
    out[i] = 0.5f * (l + r);
}

// Half-warp rows (lane >> 4 picks the row, lane & 15 the column) over doubles, pitch 1024: two runs of 16
// doubles = 128 bytes each -> 8 sectors (ideal 8), coalesced. chars c[i]: 32 bytes -> 1 sector.
__global__ void halfwarp_rows(double *out, const double *in, const char *c, int pitch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int row = warp * 2 + (lane >> 4);
    const int col = lane & 15;
    out[row * pitch + col] = in[row * pitch + col] + c[blockIdx.x * blockDim.x + threadIdx.x];
}

// Row-per-thread (a common mistake): block 256, cols = 64: in[row * cols + j] at j = 0: lanes 256 bytes apart ->
// 32 sectors (ideal 4), column-major; the loop step (j++) is the same for every lane, so every iteration has
// this pattern.
__global__ void row_sum(float *out, const float *in, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float s = 0;
        for (int j = 0; j < cols; j++) s += in[row * cols + j];
        out[row] = s;
    }
}

// Bank conflicts of a 2-D shared array used column-wise with doubles: tile[threadIdx.x][0] on double
// tile[32][32]: 8-byte elements, lane k at word 64k: half-warp phases, each lane bank 0 -> 16 wavefronts per
// phase, 32 wavefronts (ideal 2), 16-way.
__global__ void double_column(double *out) {
    __shared__ double tile[32][32];
    tile[threadIdx.x][threadIdx.y] = 1.0;
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

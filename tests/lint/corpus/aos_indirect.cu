struct Particle { float x, y, z; };  // 12 bytes, aligned to 4: the compiler loads it field by field

// p[i].y: lane k reads bytes 12k + 4 .. 12k + 7; the last lane's ends at byte 379 -> sectors 0..11 = 12 sectors,
// 128 bytes used -> ideal 4; constant stride 12 bytes -> "strided"; SoA makes it 4.
__global__ void aos_member(float* out, const Particle* p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = p[i].y;
}

// A whole Particle: three 4-byte loads 12 bytes apart, each 12 sectors (ideal 4) as above.
__global__ void aos_whole(Particle* out, const Particle* p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Particle q = p[i];
    out[i].x = q.x + q.y + q.z;
}

// in[idx[i]]: the index is a value loaded from memory -> unknown with that reason; idx[i] itself is coalesced.
__global__ void gather(float* out, const float* in, const int* idx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];
}

// A histogram: the atomic is reported as unknown (atomics), the data load is coalesced.
__global__ void histogram(unsigned int* hist, const unsigned char* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[data[i]], 1u);
}

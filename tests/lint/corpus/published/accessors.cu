// Accessor styles of C++ CUDA code: a view whose operator() returns a reference, a method calling another method of
// the same object, methods of an array-of-structs element called in place, a free function returning a reference.
struct View {
    float *data;
    int ld;
    __device__ float &operator()(int r, int c) { return data[(size_t)r * ld + c]; }
    __device__ float &first(int r) { return (*this)(r, 0); }
};

struct Body {
    float x, y, vx, vy;
    __device__ void advance(float dt) {
        x += vx * dt;
        y += vy * dt;
    }
};

__device__ __forceinline__ float &at(float *base, int i) { return base[i]; }

// v.ld = 1024, block (32, 8): warp 0 is row r = 0, columns 0..31. v(r, c) *= s: load and store of 32 consecutive
// floats -> 4 sectors. v.first(c) = s (row c, column 0: rows 4096 bytes apart) -> 32 sectors (ideal 4), column-major.
__global__ void view_ops(View v, float s) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    v(r, c) *= s;
    if (r == 0) v.first(c) = s;
}

// Body is 16 bytes, block 256, n = 2^20: ps[i].advance(dt) reads and writes x and y and reads vx and vy, each 16
// bytes apart across the warp -> 16 sectors (ideal 4), strided.
__global__ void advance_bodies(Body *ps, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ps[i].advance(dt);
}

// Block 256, n = 2^20: at(out, 2 * i) = in[i] stores through the returned reference: 8 sectors (ideal 4), strided;
// in[i]: 4 sectors.
__global__ void scatter_even(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) at(out, 2 * i) = in[i];
}

// Copy-family kernels: the global-memory access patterns of the Best Practices Guide (seed 003)
// and the vector copies that set the device's copy ceiling. Indices are 64-bit: working sets are
// sized from L2 and can exceed 2^31 elements at large strides.

// offset_copy: misaligned access, every thread shifted by `offset` floats (seed 003, offsetCopy figure)
extern "C" __global__ void offset_copy(float* __restrict__ odata, const float* __restrict__ idata,
                                       int offset, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        long long xid = i + offset;
        odata[xid] = idata[xid];
    }
}

// stride_copy: non-unit stride, thread i touches element i*stride (seed 003, strideCopy figure)
extern "C" __global__ void stride_copy(float* __restrict__ odata, const float* __restrict__ idata,
                                       int stride, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        long long xid = i * stride;
        odata[xid] = idata[xid];
    }
}

// indexed_copy_ilp<UNROLL>: the same 4-byte accesses as offset_copy/stride_copy (element i*stride + offset),
// but each thread issues UNROLL independent loads before its first store, grid-stride, so enough bytes are in
// flight to saturate DRAM and the misaligned/strided penalty is not hidden by the kernel's own latency limit.
template <int UNROLL>
__global__ void indexed_copy_ilp(float* __restrict__ odata, const float* __restrict__ idata,
                                 int offset, int stride, long long n) {
    const long long step = (long long)gridDim.x * blockDim.x * UNROLL;
    for (long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; base < n; base += step) {
        float v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            long long i = base + (long long)u * blockDim.x;
            if (i < n) v[u] = idata[i * stride + offset];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            long long i = base + (long long)u * blockDim.x;
            if (i < n) odata[i * stride + offset] = v[u];
        }
    }
}

// copy_vec<T, UNROLL>: each thread moves UNROLL elements of T (4, 8 or 16 bytes), all loads issued
// before the first store so several requests are in flight; grid-stride for any grid size. The stride loop
// is kept rolled and full chunks load unguarded so that a thread has exactly UNROLL loads in flight (ptxas
// unrolls a rolled-by-default UNROLL = 1 loop 4x, and serializes predicated load/store pairs).
template <typename T, int UNROLL>
__global__ void copy_vec(T* __restrict__ out, const T* __restrict__ in, long long n) {
    const long long step = (long long)gridDim.x * blockDim.x * UNROLL;
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; base < n; base += step) {
        if (base + (long long)(UNROLL - 1) * blockDim.x < n) {
            T v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) v[u] = in[base + (long long)u * blockDim.x];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) out[base + (long long)u * blockDim.x] = v[u];
        } else {
            for (long long j = base; j < n; j += blockDim.x) out[j] = in[j];
        }
    }
}

// read_sum<UNROLL>: read-only bandwidth: float4 loads summed per thread, one float stored per thread.
template <int UNROLL>
__global__ void read_sum(float* __restrict__ partial, const float4* __restrict__ in, long long n) {
    const long long step = (long long)gridDim.x * blockDim.x * UNROLL;
    float acc = 0.0f;
    for (long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; base < n; base += step) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            long long j = base + (long long)u * blockDim.x;
            v[u] = j < n ? in[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    partial[(long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

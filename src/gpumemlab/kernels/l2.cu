// L2 persisting-access kernels (seed 003, Best Practices 9.2.2).

// sliding_window: the Best Practices Guide's persisting-L2 benchmark (seed 003, 9.2.2.2): thread t doubles
// persistent[t % freq_size] (re-read data_size / freq_size times) and streaming[t % data_size] (read once).
// As in the seed, threads that share a persistent element race on it; unsigned so that doubling wraps.
extern "C" __global__ void sliding_window(unsigned* persistent, unsigned* streaming, unsigned data_size,
                                          unsigned freq_size) {
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < data_size) {
        persistent[tid % freq_size] = 2u * persistent[tid % freq_size];
        streaming[tid % data_size] = 2u * streaming[tid % data_size];
    }
}

// table_stream: a re-read table beside data read once (the case persist_l2 is for; seed 003, 9.2.2): thread t
// writes streaming[t] + table[t % table_size]; the table is re-read n / table_size times per launch.
extern "C" __global__ void table_stream(float* __restrict__ out, const float* __restrict__ streaming,
                                        const float* __restrict__ table, unsigned n, unsigned table_size) {
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) out[tid] = streaming[tid] + table[tid % table_size];
}

// llm.c's warp-per-row kernels through cooperative groups (a file of its own: NVRTC needs the CUDA toolkit's
// headers for it). Block 256, N = 1024, C = 768.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// warp = tiled_partition<32>: idx = blockIdx.x * 8 + warp rank; x[i], i = thread_rank() (step warp.size(), the
// same for every lane): 4 sectors (ideal 4), coalesced. out[idx] by lane 0: 1 sector (ideal 1).
__global__ void cg_rows(float* out, const float* inp, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float* x = inp + idx * C;
    float s = 0.f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) s += x[i];
    s = cg::reduce(warp, s, cg::plus<float>{});
    if (warp.thread_rank() == 0) out[idx] = s;
}


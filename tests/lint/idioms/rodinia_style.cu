// Kernels in the style of the Rodinia benchmarks: a halo-tiled 2-D stencil (hotspot), a diffusion stencil with
// clamped neighbour indices (srad), breadth-first search over CSR (bfs), a diagonal wavefront in shared memory
// (nw) and a row-by-row dynamic program (pathfinder).
#define BLOCK_SIZE 16
#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))
#define CLAMP_RANGE(x, min, max) x = (x < (min)) ? min : ((x > (max)) ? max : x)
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

// hotspot-like, block 16 x 16, iteration = 1, grid_cols = grid_rows = 1024, border = 1 (small block 14).
// Block (0, 0) starts at blkX = blkY = -1, so row 0 and column 0 of the block are out of range and no warp of it
// loads with 32 lanes; block (1, 0) (blkX = 13) warp 1: rows yidx = 1, 2, columns 13..28 -> two runs of 16 floats
// from byte 52 of their 128-byte lines (sectors 1..3 each) -> 6 sectors (ideal 4), scattered. Its shared stores
// temp_on_cuda[ty][tx]: words 32..63 -> 1 wavefront. The compute step keeps tx, ty in 1..14, so no warp has 32
// lanes: block 0's warp 1 (rows 2, 3, 28 lanes) -> every shared access 1 wavefront; temp_dst[index] there: two
// runs of 14 floats from the start of a line -> 4 sectors (ideal 4: 112 bytes), coalesced. With iteration = 1 the
// loop breaks before its copy-back (line with temp_t -> temp_on_cuda): not executed.
__global__ void calculate_temp(int iteration, float *power, float *temp_src, float *temp_dst, int grid_cols,
                               int grid_rows, int border_cols, int border_rows, float Cap, float Rx, float Ry,
                               float Rz, float step) {
    __shared__ float temp_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float power_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float temp_t[BLOCK_SIZE][BLOCK_SIZE];
    float amb_temp = 80.0;
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int small_block_rows = BLOCK_SIZE - iteration * 2;
    int small_block_cols = BLOCK_SIZE - iteration * 2;
    int blkY = small_block_rows * by - border_rows;
    int blkX = small_block_cols * bx - border_cols;
    int yidx = blkY + ty;
    int xidx = blkX + tx;
    int loadYidx = yidx, loadXidx = xidx;
    int index = grid_cols * loadYidx + loadXidx;
    if (IN_RANGE(loadYidx, 0, grid_rows - 1) && IN_RANGE(loadXidx, 0, grid_cols - 1)) {
        temp_on_cuda[ty][tx] = temp_src[index];
        power_on_cuda[ty][tx] = power[index];
    }
    __syncthreads();
    int validYmin = (blkY < 0) ? -blkY : 0;
    int validYmax = (blkY + BLOCK_SIZE - 1 > grid_rows - 1) ? BLOCK_SIZE - 1 - (blkY + BLOCK_SIZE - 1 - grid_rows + 1)
                                                            : BLOCK_SIZE - 1;
    int N = ty - 1;
    int S = ty + 1;
    N = (N < validYmin) ? validYmin : N;
    S = (S > validYmax) ? validYmax : S;
    bool computed = false;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && IN_RANGE(ty, i + 1, BLOCK_SIZE - i - 2)) {
            computed = true;
            temp_t[ty][tx] = temp_on_cuda[ty][tx] + step * (power_on_cuda[ty][tx] + (temp_on_cuda[S][tx] +
                             temp_on_cuda[N][tx] - 2.0 * temp_on_cuda[ty][tx]) * Ry - amb_temp * Rz);
        }
        __syncthreads();
        if (i == iteration - 1) break;
        if (computed) temp_on_cuda[ty][tx] = temp_t[ty][tx];
        __syncthreads();
    }
    if (computed) {
        temp_dst[index] = temp_t[ty][tx];
    }
}

// srad-like, block 16 x 16, cols = rows = 1024: a 1-D index over a 2-D image; warp 0 = rows 0, 1 of the block
// (16 floats each, 4 KiB apart). J_cuda[index]: two aligned 64-byte runs -> 4 sectors (ideal 4), coalesced.
// The north row: block row 0 reads J_cuda[16 bx + tx] (both half-warps the same 16 floats) -> 2 sectors (ideal 2);
// other block rows (block (0, 1)) J_cuda[index_n], the row above the block, the same for both half-warps -> 2 (2).
// Shared: north[ty][tx], temp[ty][tx] -> 1 wavefront; north[ty][tx] under ty == 0 (16 lanes) -> 1.
__global__ void srad_cuda_1(float *E_C, float *W_C, float *N_C, float *S_C, float *J_cuda, float *C_cuda,
                            int cols, int rows, float q0sqr) {
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int index = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + cols * ty + tx;
    int index_n = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + tx - cols;
    __shared__ float temp[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float north[BLOCK_SIZE][BLOCK_SIZE];
    if (by == 0) {
        north[ty][tx] = J_cuda[BLOCK_SIZE * bx + tx];
    } else {
        north[ty][tx] = J_cuda[index_n];
    }
    temp[ty][tx] = J_cuda[index];
    __syncthreads();
    float n;
    if (ty == 0) {
        n = north[ty][tx] - temp[ty][tx];
    } else {
        n = temp[ty - 1][tx] - temp[ty][tx];
    }
    N_C[index] = n;
}

// bfs (Rodinia): one thread per node, CSR edges, block 256. g_graph_mask[tid]: 1-byte bools, 32 consecutive
// bytes -> 1 sector (ideal 1), coalesced. The guard reads g_graph_mask[tid] (data): its lanes are assumed to pass
// (said in the finding). g_graph_nodes[tid].starting: an 8-byte struct {int starting; int no_of_edges;}: lane k at
// byte 8k -> 256 bytes, 8 sectors (ideal 4: 128 bytes asked for), strided. g_cost[tid]: 4 sectors. The edge loop
// reads g_graph_edges[i] with i from a loaded value: unknown, and so is everything indexed by id.
struct Node {
    int starting;
    int no_of_edges;
};

__global__ void bfs_kernel(Node *g_graph_nodes, int *g_graph_edges, bool *g_graph_mask, bool *g_updating_graph_mask,
                           bool *g_graph_visited, int *g_cost, int no_of_nodes) {
    int tid = blockIdx.x * 256 + threadIdx.x;
    if (tid < no_of_nodes && g_graph_mask[tid]) {
        g_graph_mask[tid] = false;
        for (int i = g_graph_nodes[tid].starting; i < (g_graph_nodes[tid].no_of_edges + g_graph_nodes[tid].starting);
             i++) {
            int id = g_graph_edges[i];
            if (!g_graph_visited[id]) {
                g_cost[id] = g_cost[tid] + 1;
                g_updating_graph_mask[id] = true;
            }
        }
    }
}

// nw (Needleman-Wunsch) style: block 16 threads, a 17 x 17 int tile filled along anti-diagonals; cols = 1025,
// i = 1 (block 0 at the corner). referrence[index + cols * ty], ty = 0: elements 1026..1041 = bytes 4104..4167 ->
// 3 sectors (ideal 2), offset (later ty shift the start: at ty = 6 and 14 it is aligned, 2 sectors).
// matrix_cuda[index_w + cols * tx]: 16 lanes 4100 bytes apart -> 16 sectors (ideal 2), column-major; its shared
// store temp[tx + 1][0]: words 17 (tx + 1) -> 16 different banks, 1 wavefront. matrix_cuda[index_n]: elements 1..16
// -> 3 sectors (ideal 2), offset. Diagonal m = 0: only tx = 0 executes -> 1 wavefront; at m = 2 lanes 0 and 2 hit
// words 17 m + 18 and 17 m - 14, the same bank -> 2 wavefronts (the iteration classes say so).
__global__ void needle_cuda_shared_1(int *referrence, int *matrix_cuda, int cols, int penalty, int i,
                                     int block_width) {
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int b_index_x = bx;
    int b_index_y = i - 1 - bx;
    int index = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + tx + (cols + 1);
    int index_n = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + tx + (1);
    int index_w = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + (cols);
    __shared__ int temp[BLOCK_SIZE + 1][BLOCK_SIZE + 1];
    __shared__ int ref[BLOCK_SIZE][BLOCK_SIZE];
    for (int ty = 0; ty < BLOCK_SIZE; ty++) ref[ty][tx] = referrence[index + cols * ty];
    __syncthreads();
    temp[tx + 1][0] = matrix_cuda[index_w + cols * tx];
    __syncthreads();
    temp[0][tx + 1] = matrix_cuda[index_n];
    __syncthreads();
    for (int m = 0; m < BLOCK_SIZE; m++) {
        if (tx <= m) {
            int t_index_x = tx + 1;
            int t_index_y = m - tx + 1;
            temp[t_index_y][t_index_x] = temp[t_index_y - 1][t_index_x - 1] + ref[t_index_y - 1][t_index_x - 1];
        }
        __syncthreads();
    }
    for (int ty = 0; ty < BLOCK_SIZE; ty++) matrix_cuda[index + ty * cols] = temp[ty + 1][tx + 1];
}

// pathfinder-like, block 256, cols = 100000, iteration = 1, border = 1, startStep = 0 (small block 254); block 0:
// blkX = -1, xidx = tx - 1: lane 0 is out of range, so warp 1 is the first full warp: gpuSrc[31..62] -> 5 sectors
// (ideal 4), offset; gpuWall[index] and gpuResults[xidx] alike. prev[tx], prev[W] (W = tx - 1: words 31..62),
// prev[E], result[tx]: 1 wavefront. The loop breaks at i = iteration - 1 before its copy-back: not executed.
__global__ void dynproc_kernel(int iteration, int *gpuWall, int *gpuSrc, int *gpuResults, int cols, int rows,
                               int startStep, int border) {
    __shared__ int prev[256];
    __shared__ int result[256];
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int small_block_cols = 256 - iteration * 2 * border;
    int blkX = small_block_cols * bx - border;
    int blkXmax = blkX + 256 - 1;
    int xidx = blkX + tx;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkXmax > cols - 1) ? 256 - 1 - (blkXmax - cols + 1) : 256 - 1;
    int W = tx - 1;
    int E = tx + 1;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;
    bool isValid = IN_RANGE(tx, validXmin, validXmax);
    if (IN_RANGE(xidx, 0, cols - 1)) {
        prev[tx] = gpuSrc[xidx];
    }
    __syncthreads();
    bool computed;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (IN_RANGE(tx, i + 1, 256 - i - 2) && isValid) {
            computed = true;
            int left = prev[W];
            int up = prev[tx];
            int right = prev[E];
            int shortest = MIN(left, up);
            shortest = MIN(shortest, right);
            int index = cols * (startStep + i) + xidx;
            result[tx] = shortest + gpuWall[index];
        }
        __syncthreads();
        if (i == iteration - 1) break;
        if (computed) prev[tx] = result[tx];
        __syncthreads();
    }
    if (computed) {
        gpuResults[xidx] = result[tx];
    }
}

"""lint on tests/lint/idioms/*.cu - kernels written in the idioms of widely used public CUDA code (CUDA samples,
Rodinia, llm.c / PyTorch) - against per-access values derived by hand (the arithmetic is in each kernel's comment)."""

from pathlib import Path

import pytest

from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options
from lint_tables import all_findings, matches, numbers

IDIOMS = Path(__file__).parent / "idioms"

# file, kernel (None: every kernel of the file), options: the launch each kernel's comment assumes
RUNS = [
    ("samples_matmul.cu", None, dict(block=(32, 32), templates={"BLOCK_SIZE": "32"}, lets={"wA": 1024, "wB": 1024})),
    ("samples_matmul.cu", None, dict(block=(16, 16), templates={"BLOCK_SIZE": "16"}, lets={"wA": 1024, "wB": 1024})),
    ("samples_transpose.cu", None, dict(block=(32, 8), lets={"width": 1024, "height": 1024})),
    (
        "samples_reduction.cu",
        None,
        dict(block=(256,), templates={"T": "float", "blockSize": "256", "nIsPow2": "true"}, lets={"n": 1 << 20}),
    ),
    ("samples_histogram_scan.cu", "histogram256Kernel", dict(block=(192,), lets={"dataCount": 1 << 20})),
    ("samples_histogram_scan.cu", "mergeHistogram256Kernel", dict(block=(256,), lets={"histogramCount": 240})),
    ("samples_histogram_scan.cu", "scan_naive", dict(block=(256,), lets={"n": 256})),
    ("samples_histogram_scan.cu", "prescan", dict(block=(128,), lets={"n": 256})),
    (
        "rodinia_style.cu",
        "calculate_temp",
        dict(
            block=(16, 16),
            lets={"iteration": 1, "grid_cols": 1024, "grid_rows": 1024, "border_cols": 1, "border_rows": 1},
        ),
    ),
    ("rodinia_style.cu", "srad_cuda_1", dict(block=(16, 16), lets={"cols": 1024, "rows": 1024})),
    # the frontier's data guard: the hand-derived numbers assume its known part's lanes (asked for explicitly)
    ("rodinia_style.cu", "bfs_kernel", dict(block=(256,), lets={"no_of_nodes": 1 << 20}, assume_data_guards=True)),
    (
        "rodinia_style.cu",
        "needle_cuda_shared_1",
        dict(block=(16,), lets={"cols": 1025, "penalty": 10, "i": 1, "block_width": 64}),
    ),
    (
        "rodinia_style.cu",
        "dynproc_kernel",
        dict(block=(256,), lets={"iteration": 1, "cols": 100000, "rows": 100, "startStep": 0, "border": 1}),
    ),
    ("llmc_style.cu", None, dict(block=(256,), lets={"N": 1 << 20, "C": 768, "B": 4, "T": 1024, "n4": 1 << 18})),
    ("llmc_style.cu", "layernorm_forward_kernel", dict(block=(128,), lets={"N": 1 << 20, "C": 768})),
    ("llmc_style.cu", "sum_dim0", dict(block=(32, 8), lets={"rows": 4096, "cols": 4096})),
    ("misc_idioms.cu", None, dict(block=(256,), lets={"n": 1000, "pitch": 1024, "rows": 4096, "cols": 64})),
    ("misc_idioms.cu", "stencil3d", dict(block=(8, 8, 4), lets={"nx": 256, "ny": 256, "nz": 256})),
    ("misc_idioms.cu", "double_column", dict(block=(32, 8))),
    (
        "modern_idioms.cu",
        None,
        dict(block=(256,), lets={"n": 1 << 20, "stride": 1}, templates={"T": "float", "VEC": "4"}),
    ),
    ("cg_rows.cu", None, dict(block=(256,), lets={"N": 1024, "C": 768})),
    ("modern_idioms.cu", "pitched", dict(block=(32, 8), lets={"pitch": 4096, "width": 1000, "height": 1000})),
    (
        "more_idioms.cu",
        None,
        dict(
            block=(16, 16), lets={"n": 1 << 20, "w": 1024, "h": 1024, "p.n": 4096, "p.ld": 1}, templates={"T": "float"}
        ),
    ),
]
SOLO = {"layernorm_forward_kernel", "sum_dim0", "stencil3d", "double_column", "pitched"}  # have a run of their own

# run (index in RUNS), kernel, line:column, access as written, load/store, call lines, expected:
#   global (sectors/request, ideal, verdict), shared (wavefronts/request, ideal, ways, verdict),
#   or ("unknown", words of the reason)
EXPECTED = [
    (0, "MatrixMulCUDA", "21:9", "AS(ty, tx)", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "MatrixMulCUDA", "21:22", "A[a + wA * ty + tx]", "load", (), (4.0, 4.0, "coalesced")),
    (0, "MatrixMulCUDA", "22:9", "BS(ty, tx)", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "MatrixMulCUDA", "22:22", "B[b + wB * ty + tx]", "load", (), (4.0, 4.0, "coalesced")),
    (0, "MatrixMulCUDA", "26:21", "AS(ty, k)", "load", (), (1.0, 1.0, 1, "broadcast")),
    (0, "MatrixMulCUDA", "26:33", "BS(k, tx)", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "MatrixMulCUDA", "31:5", "C[c + wB * ty + tx]", "store", (), (4.0, 4.0, "coalesced")),
    (1, "MatrixMulCUDA", "21:9", "AS(ty, tx)", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "MatrixMulCUDA", "21:22", "A[a + wA * ty + tx]", "load", (), (4.0, 4.0, "coalesced")),
    (1, "MatrixMulCUDA", "22:9", "BS(ty, tx)", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "MatrixMulCUDA", "22:22", "B[b + wB * ty + tx]", "load", (), (4.0, 4.0, "coalesced")),
    (1, "MatrixMulCUDA", "26:21", "AS(ty, k)", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "MatrixMulCUDA", "26:33", "BS(k, tx)", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "MatrixMulCUDA", "31:5", "C[c + wB * ty + tx]", "store", (), (4.0, 4.0, "coalesced")),
    (2, "copySharedMem", "15:13", "tile[threadIdx.y][threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (2, "copySharedMem", "15:46", "idata[index]", "load", (), (4.0, 4.0, "coalesced")),
    (2, "copySharedMem", "21:13", "odata[index]", "store", (), (4.0, 4.0, "coalesced")),
    (2, "copySharedMem", "21:28", "tile[threadIdx.y][threadIdx.x]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (2, "transposeDiagonal", "46:9", "tile[threadIdx.y + i][threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (2, "transposeDiagonal", "46:46", "idata[index_in + i * width]", "load", (), (4.0, 4.0, "coalesced")),
    (2, "transposeDiagonal", "50:9", "odata[index_out + i * height]", "store", (), (4.0, 4.0, "coalesced")),
    (2, "transposeDiagonal", "50:41", "tile[threadIdx.x][threadIdx.y + i]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (
        2,
        "transposeFineGrained",
        "62:9",
        "block[threadIdx.y + i][threadIdx.x]",
        "store",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (2, "transposeFineGrained", "62:47", "idata[index + i * width]", "load", (), (4.0, 4.0, "coalesced")),
    (2, "transposeFineGrained", "66:9", "odata[index + i * height]", "store", (), (4.0, 4.0, "coalesced")),
    (
        2,
        "transposeFineGrained",
        "66:37",
        "block[threadIdx.x][threadIdx.y + i]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (
        2,
        "transposeCoarseGrained",
        "81:9",
        "block[threadIdx.y + i][threadIdx.x]",
        "store",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (2, "transposeCoarseGrained", "81:47", "idata[index_in + i * width]", "load", (), (4.0, 4.0, "coalesced")),
    (2, "transposeCoarseGrained", "85:9", "odata[index_out + i * height]", "store", (), (4.0, 4.0, "coalesced")),
    (
        2,
        "transposeCoarseGrained",
        "85:41",
        "block[threadIdx.y + i][threadIdx.x]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (3, "reduce3", "24:25", "g_idata[i]", "load", (), (4.0, 4.0, "coalesced")),
    (3, "reduce3", "25:38", "g_idata[i + blockDim.x]", "load", (), (4.0, 4.0, "coalesced")),
    (3, "reduce3", "26:5", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce3", "30:13", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce3", "30:42", "sdata[tid + s]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce3", "34:19", "g_odata[blockIdx.x]", "store", (), (1.0, 1.0, "coalesced")),
    (3, "reduce6", "50:18", "g_idata[i]", "load", (), (4.0, 4.0, "coalesced")),
    (3, "reduce6", "51:52", "g_idata[i + blockSize]", "load", (), (4.0, 4.0, "coalesced")),
    (3, "reduce6", "54:5", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce6", "57:9", "sdata[tid]", "store", (), (None, None, None, "not executed")),
    (3, "reduce6", "57:38", "sdata[tid + 256]", "load", (), (None, None, None, "not executed")),
    (3, "reduce6", "61:9", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce6", "61:38", "sdata[tid + 128]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce6", "65:9", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce6", "65:38", "sdata[tid + 64]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce6", "69:39", "sdata[tid + 32]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce6", "74:19", "g_odata[blockIdx.x]", "store", (), (1.0, 1.0, "coalesced")),
    (3, "reduce0", "83:5", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce0", "83:28", "g_idata[i]", "load", (), (4.0, 4.0, "coalesced")),
    (3, "reduce0", "87:13", "sdata[tid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce0", "87:13", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce0", "87:27", "sdata[tid + s]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (3, "reduce0", "91:19", "g_odata[blockIdx.x]", "store", (), (1.0, 1.0, "coalesced")),
    (3, "reduce0", "91:41", "sdata[0]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (
        4,
        "histogram256Kernel",
        "14:63",
        "atomicAdd(s_WarpHist + data, 1)",
        "atomic",
        (30,),
        ("unknown", "atomicAdd address: value loaded from memory (d_Data[pos])"),
    ),
    (
        4,
        "histogram256Kernel",
        "25:9",
        "s_Hist[threadIdx.x + i * HISTOGRAM256_THREADBLOCK_SIZE]",
        "store",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (4, "histogram256Kernel", "29:21", "d_Data[pos]", "load", (), (4.0, 4.0, "coalesced")),
    (
        4,
        "histogram256Kernel",
        "36:20",
        "s_Hist[bin + i * HISTOGRAM256_BIN_COUNT]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (
        4,
        "histogram256Kernel",
        "38:9",
        "d_PartialHistograms[blockIdx.x * HISTOGRAM256_BIN_COUNT + bin]",
        "store",
        (),
        (4.0, 4.0, "coalesced"),
    ),
    (
        5,
        "mergeHistogram256Kernel",
        "48:16",
        "d_PartialHistograms[blockIdx.x + i * HISTOGRAM256_BIN_COUNT]",
        "load",
        (),
        (32.0, 4.0, "column-major"),
    ),
    (5, "mergeHistogram256Kernel", "51:5", "data[threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (5, "mergeHistogram256Kernel", "55:13", "data[threadIdx.x]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (5, "mergeHistogram256Kernel", "55:13", "data[threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (5, "mergeHistogram256Kernel", "55:34", "data[threadIdx.x + stride]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (5, "mergeHistogram256Kernel", "59:9", "d_Histogram[blockIdx.x]", "store", (), (1.0, 1.0, "coalesced")),
    (5, "mergeHistogram256Kernel", "59:35", "data[0]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "71:5", "temp[pout * n + thid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "71:42", "g_idata[thid - 1]", "load", (), (5.0, 4.0, "offset")),
    (6, "scan_naive", "77:13", "temp[pout * n + thid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "77:13", "temp[pout * n + thid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "77:38", "temp[pin * n + thid - offset]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "79:13", "temp[pout * n + thid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "79:37", "temp[pin * n + thid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (6, "scan_naive", "82:5", "g_odata[thid]", "store", (), (4.0, 4.0, "coalesced")),
    (6, "scan_naive", "82:21", "temp[pout * n + thid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "93:5", "temp[2 * thid]", "store", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (7, "prescan", "93:22", "g_idata[2 * thid]", "load", (), (8.0, 4.0, "strided")),
    (7, "prescan", "94:5", "temp[2 * thid + 1]", "store", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (7, "prescan", "94:26", "g_idata[2 * thid + 1]", "load", (), (8.0, 4.0, "strided")),
    (7, "prescan", "100:13", "temp[bi]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (7, "prescan", "100:13", "temp[bi]", "store", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (7, "prescan", "100:25", "temp[ai]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (7, "prescan", "104:22", "temp[n - 1]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "111:23", "temp[ai]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "112:13", "temp[ai]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "112:24", "temp[bi]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "113:13", "temp[bi]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "113:13", "temp[bi]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (7, "prescan", "117:5", "g_odata[2 * thid]", "store", (), (8.0, 4.0, "strided")),
    (7, "prescan", "117:25", "temp[2 * thid]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (7, "prescan", "118:5", "g_odata[2 * thid + 1]", "store", (), (8.0, 4.0, "strided")),
    (7, "prescan", "118:29", "temp[2 * thid + 1]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (8, "calculate_temp", "37:9", "temp_on_cuda[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "37:32", "temp_src[index]", "load", (), (6.0, 4.0, "scattered")),
    (8, "calculate_temp", "38:9", "power_on_cuda[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "38:33", "power[index]", "load", (), (6.0, 4.0, "scattered")),
    (8, "calculate_temp", "53:13", "temp_t[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "53:30", "temp_on_cuda[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "53:61", "power_on_cuda[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "53:86", "temp_on_cuda[S][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "54:30", "temp_on_cuda[N][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "54:58", "temp_on_cuda[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (8, "calculate_temp", "58:23", "temp_on_cuda[ty][tx]", "store", (), (None, None, None, "not executed")),
    (8, "calculate_temp", "58:46", "temp_t[ty][tx]", "load", (), (None, None, None, "not executed")),
    (8, "calculate_temp", "62:9", "temp_dst[index]", "store", (), (4.0, 4.0, "coalesced")),
    (8, "calculate_temp", "62:27", "temp_t[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "82:9", "north[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "82:25", "J_cuda[BLOCK_SIZE * bx + tx]", "load", (), (2.0, 2.0, "coalesced")),
    (9, "srad_cuda_1", "84:9", "north[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "84:25", "J_cuda[index_n]", "load", (), (2.0, 2.0, "coalesced")),
    (9, "srad_cuda_1", "86:5", "temp[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "86:20", "J_cuda[index]", "load", (), (4.0, 4.0, "coalesced")),
    (9, "srad_cuda_1", "90:13", "north[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "90:29", "temp[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "92:13", "temp[ty - 1][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "92:32", "temp[ty][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "srad_cuda_1", "94:5", "N_C[index]", "store", (), (4.0, 4.0, "coalesced")),
    (10, "bfs_kernel", "110:30", "g_graph_mask[tid]", "load", (), (1.0, 1.0, "coalesced")),
    (10, "bfs_kernel", "111:9", "g_graph_mask[tid]", "store", (), (1.0, 1.0, "coalesced")),
    (10, "bfs_kernel", "112:22", "g_graph_nodes[tid].starting", "load", (), (8.0, 4.0, "strided")),
    (10, "bfs_kernel", "112:56", "g_graph_nodes[tid].no_of_edges", "load", (), (8.0, 4.0, "strided")),
    (10, "bfs_kernel", "112:89", "g_graph_nodes[tid].starting", "load", (), (8.0, 4.0, "strided")),
    (
        10,
        "bfs_kernel",
        "114:22",
        "g_graph_edges[i]",
        "load",
        (),
        ("unknown", "index 'i': value loaded from memory (g_g"),
    ),
    (
        10,
        "bfs_kernel",
        "115:18",
        "g_graph_visited[id]",
        "load",
        (),
        ("unknown", "index 'id': index 'i': value loaded from"),
    ),
    (10, "bfs_kernel", "116:17", "g_cost[id]", "store", (), ("unknown", "index 'id': index 'i': value loaded from")),
    (10, "bfs_kernel", "116:30", "g_cost[tid]", "load", (), (4.0, 4.0, "coalesced")),
    (
        10,
        "bfs_kernel",
        "117:17",
        "g_updating_graph_mask[id]",
        "store",
        (),
        ("unknown", "index 'id': index 'i': value loaded from"),
    ),
    (11, "needle_cuda_shared_1", "141:45", "ref[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "needle_cuda_shared_1", "141:59", "referrence[index + cols * ty]", "load", (), (3.0, 2.0, "offset")),
    (11, "needle_cuda_shared_1", "143:5", "temp[tx + 1][0]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "needle_cuda_shared_1", "143:23", "matrix_cuda[index_w + cols * tx]", "load", (), (16.0, 2.0, "column-major")),
    (11, "needle_cuda_shared_1", "145:5", "temp[0][tx + 1]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "needle_cuda_shared_1", "145:23", "matrix_cuda[index_n]", "load", (), (3.0, 2.0, "offset")),
    (11, "needle_cuda_shared_1", "151:13", "temp[t_index_y][t_index_x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (
        11,
        "needle_cuda_shared_1",
        "151:42",
        "temp[t_index_y - 1][t_index_x - 1]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (
        11,
        "needle_cuda_shared_1",
        "151:79",
        "ref[t_index_y - 1][t_index_x - 1]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (11, "needle_cuda_shared_1", "155:45", "matrix_cuda[index + ty * cols]", "store", (), (3.0, 2.0, "offset")),
    (11, "needle_cuda_shared_1", "155:78", "temp[ty + 1][tx + 1]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "dynproc_kernel", "180:9", "prev[tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "dynproc_kernel", "180:20", "gpuSrc[xidx]", "load", (), (5.0, 4.0, "offset")),
    (12, "dynproc_kernel", "188:24", "prev[W]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "dynproc_kernel", "189:22", "prev[tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "dynproc_kernel", "190:25", "prev[E]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "dynproc_kernel", "194:13", "result[tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "dynproc_kernel", "194:37", "gpuWall[index]", "load", (), (5.0, 4.0, "offset")),
    (12, "dynproc_kernel", "198:23", "prev[tx]", "store", (), (None, None, None, "not executed")),
    (12, "dynproc_kernel", "198:34", "result[tx]", "load", (), (None, None, None, "not executed")),
    (12, "dynproc_kernel", "202:9", "gpuResults[xidx]", "store", (), (5.0, 4.0, "offset")),
    (12, "dynproc_kernel", "202:28", "result[tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (
        13,
        "residual_forward_kernel",
        "21:35",
        "*reinterpret_cast<const Packed128<ElementType> *>(address)",
        "load",
        (39,),
        (16.0, 16.0, "coalesced"),
    ),
    (
        13,
        "residual_forward_kernel",
        "21:35",
        "*reinterpret_cast<const Packed128<ElementType> *>(address)",
        "load",
        (40,),
        (16.0, 16.0, "coalesced"),
    ),
    (
        13,
        "residual_forward_kernel",
        "26:5",
        "*reinterpret_cast<Packed128<ElementType> *>(target)",
        "store",
        (44,),
        (16.0, 16.0, "coalesced"),
    ),
    (13, "softmax_forward_kernel", "101:32", "x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (13, "softmax_forward_kernel", "103:22", "maxvals[warpId]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (13, "softmax_forward_kernel", "106:21", "maxvals[tid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (13, "softmax_forward_kernel", "107:66", "maxvals[i]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (13, "softmax_forward_kernel", "108:9", "maxvals[0]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (13, "softmax_forward_kernel", "111:30", "sumvals[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (13, "softmax_forward_kernel", "111:45", "maxvals[tid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (13, "softmax_forward_kernel", "113:9", "out[idx * C + i]", "store", (), (4.0, 4.0, "coalesced")),
    (13, "softmax_forward_kernel", "113:28", "x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (13, "gelu_float4", "121:20", "reinterpret_cast<const float4 *>(inp)[i]", "load", (), (16.0, 16.0, "coalesced")),
    (13, "gelu_float4", "123:9", "reinterpret_cast<float4 *>(out)[i]", "store", (), (16.0, 16.0, "coalesced")),
    (13, "encoder_forward_kernel", "141:18", "inp[b * T + t]", "load", (), (1.0, 1.0, "broadcast")),
    (
        13,
        "encoder_forward_kernel",
        "142:20",
        "wte[ix * C4 + c4]",
        "load",
        (),
        ("unknown", "index 'ix * C4 + c4': value loaded from "),
    ),
    (13, "encoder_forward_kernel", "143:20", "wpe[t * C4 + c4]", "load", (), (16.0, 16.0, "coalesced")),
    (13, "encoder_forward_kernel", "144:9", "out[b * T * C4 + t * C4 + c4]", "store", (), (16.0, 16.0, "coalesced")),
    (14, "layernorm_forward_kernel", "66:16", "x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (14, "layernorm_forward_kernel", "72:9", "mean[idx]", "store", (), (1.0, 1.0, "coalesced")),
    (14, "layernorm_forward_kernel", "76:9", "rstd[idx]", "store", (), (1.0, 1.0, "coalesced")),
    (14, "layernorm_forward_kernel", "80:24", "__ldcs(x + c)", "load", (), (4.0, 4.0, "coalesced")),
    (
        14,
        "layernorm_forward_kernel",
        "81:9",
        "__stcs(o + c, n * __ldg(&weight[c]) + __ldg(&bias[c]))",
        "store",
        (),
        (4.0, 4.0, "coalesced"),
    ),
    (14, "layernorm_forward_kernel", "81:27", "__ldg(&weight[c])", "load", (), (4.0, 4.0, "coalesced")),
    (14, "layernorm_forward_kernel", "81:47", "__ldg(&bias[c])", "load", (), (4.0, 4.0, "coalesced")),
    (15, "sum_dim0", "157:75", "in[(size_t)row * cols + col]", "load", (), (4.0, 4.0, "coalesced")),
    (15, "sum_dim0", "159:5", "smem[threadIdx.y][threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (15, "sum_dim0", "164:42", "smem[k][threadIdx.x]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (15, "sum_dim0", "165:9", "out[col]", "store", (), (4.0, 4.0, "coalesced")),
    (16, "integrate", "19:15", "p[i].pos.x", "load", (), (32.0, 4.0, "strided")),
    (16, "integrate", "20:15", "p[i].mass", "load", (), (32.0, 4.0, "strided")),
    (16, "integrate", "21:5", "p[i].pos.x", "store", (), (32.0, 4.0, "strided")),
    (16, "integrate", "22:5", "pos_out[i]", "store", (), (12.0, 4.0, "strided")),
    (16, "integrate", "22:18", "p[i].pos", "load", (), (32.0, 4.0, "strided")),
    (16, "dyn_shared_split", "45:5", "sv[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (16, "dyn_shared_split", "45:15", "a[blockIdx.x * blockDim.x + tid]", "load", (), (4.0, 4.0, "coalesced")),
    (16, "dyn_shared_split", "46:5", "si[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (16, "dyn_shared_split", "46:15", "b[blockIdx.x * blockDim.x + tid]", "load", (), (4.0, 4.0, "coalesced")),
    (16, "dyn_shared_split", "48:5", "out[blockIdx.x * blockDim.x + tid]", "store", (), (4.0, 4.0, "coalesced")),
    (16, "dyn_shared_split", "48:42", "sv[(tid * 2) % blockDim.x]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (16, "dyn_shared_split", "48:71", "si[tid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "54:5", "sdata[tid]", "load", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "54:5", "sdata[tid]", "store", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "54:19", "sdata[tid + 32]", "load", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "55:5", "sdata[tid]", "load", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "55:5", "sdata[tid]", "store", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "55:19", "sdata[tid + 16]", "load", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "56:5", "sdata[tid]", "load", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "56:5", "sdata[tid]", "store", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "56:19", "sdata[tid + 1]", "load", (64,), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "62:5", "sdata[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (16, "reduce_volatile", "62:18", "in[blockIdx.x * 64 + tid]", "load", (), (4.0, 4.0, "coalesced")),
    (16, "reduce_volatile", "65:19", "out[blockIdx.x]", "store", (), (1.0, 1.0, "coalesced")),
    (16, "reduce_volatile", "65:37", "sdata[0]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (16, "clamp_blur", "75:15", "in[min(max(i - 1, 0), n - 1)]", "load", (), (4.0, 4.0, "coalesced")),
    (16, "clamp_blur", "76:15", "in[i < n - 1 ? i + 1 : i]", "load", (), (5.0, 4.0, "offset")),
    (16, "clamp_blur", "77:5", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (16, "halfwarp_rows", "87:5", "out[row * pitch + col]", "store", (), (8.0, 8.0, "coalesced")),
    (16, "halfwarp_rows", "87:30", "in[row * pitch + col]", "load", (), (8.0, 8.0, "coalesced")),
    (16, "halfwarp_rows", "87:54", "c[blockIdx.x * blockDim.x + threadIdx.x]", "load", (), (1.0, 1.0, "coalesced")),
    (16, "row_sum", "97:45", "in[row * cols + j]", "load", (), (32.0, 4.0, "column-major")),
    (16, "row_sum", "98:9", "out[row]", "store", (), (4.0, 4.0, "coalesced")),
    (17, "stencil3d", "34:5", "out[idx]", "store", (), (4.0, 4.0, "coalesced")),
    (17, "stencil3d", "34:16", "v[idx]", "load", (), (4.0, 4.0, "coalesced")),
    (17, "stencil3d", "34:25", "v[idx + (size_t)nx * ny]", "load", (), (4.0, 4.0, "coalesced")),
    (
        18,
        "double_column",
        "107:5",
        "tile[threadIdx.x][threadIdx.y]",
        "store",
        (),
        (32.0, 2.0, 16, "16-way bank conflict"),
    ),
    (18, "double_column", "109:5", "out[threadIdx.y * 32 + threadIdx.x]", "store", (), (8.0, 8.0, "coalesced")),
    (
        18,
        "double_column",
        "109:43",
        "tile[threadIdx.x][threadIdx.y]",
        "load",
        (),
        (32.0, 2.0, 16, "16-way bank conflict"),
    ),
    (19, "halfs", "23:20", "in[i]", "load", (), (2.0, 2.0, "coalesced")),
    (19, "halfs", "24:36", "b[i]", "load", (), (2.0, 2.0, "coalesced")),
    (19, "halfs", "25:9", "out[i]", "store", (), (2.0, 2.0, "coalesced")),
    (19, "half2k", "32:16", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (19, "half2k", "32:33", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (19, "half2k", "32:40", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (19, "ptr_walk", "39:42", "*p", "load", (), (4.0, 4.0, "coalesced")),
    (19, "ptr_walk", "40:5", "out[blockIdx.x * blockDim.x + threadIdx.x]", "store", (), (4.0, 4.0, "coalesced")),
    (19, "vec_copy", "50:9", "*reinterpret_cast<int4*>(out + i)", "store", (), (16.0, 16.0, "coalesced")),
    (19, "vec_copy", "50:45", "*reinterpret_cast<const int4*>(in + i)", "load", (), (16.0, 16.0, "coalesced")),
    (19, "uint4_half", "57:15", "__ldg(in + blockIdx.x * 128 + tid)", "load", (), (16.0, 16.0, "coalesced")),
    (19, "uint4_half", "58:5", "out[blockIdx.x * 128 + tid]", "store", (), (16.0, 16.0, "coalesced")),
    (19, "shfl_k", "65:15", "in[threadIdx.x]", "load", (), (4.0, 4.0, "coalesced")),
    (19, "shfl_k", "68:24", "out[threadIdx.x / 2]", "store", (), (2.0, 2.0, "coalesced")),
    (
        19,
        "atomics_global",
        "74:16",
        "atomicAdd(sum, in[i])",
        "atomic",
        (),
        (1.0, 1.0, "same address"),
    ),
    (19, "atomics_global", "74:31", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (20, "cg_rows", "16:68", "x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (20, "cg_rows", "18:34", "out[idx]", "store", (), (1.0, 1.0, "coalesced")),
    (21, "pitched", "15:9", "row[c]", "store", (), (4.0, 4.0, "coalesced")),
    (21, "pitched", "15:18", "row[c]", "load", (), (4.0, 4.0, "coalesced")),
    (22, "axpy_t", "16:3", "out[idx]", "store", (), (2.0, 2.0, "coalesced")),
    (22, "axpy_t", "16:18", "in[idx]", "load", (), (2.0, 2.0, "coalesced")),
    (22, "axpy_t", "16:28", "out[idx]", "load", (), (2.0, 2.0, "coalesced")),
    (22, "params_k", "23:16", "p.x[i * p.ld]", "store", (), (2.0, 2.0, "coalesced")),
    (22, "params_k", "23:32", "p.y[i]", "load", (), (2.0, 2.0, "coalesced")),
    (22, "tile2d", "33:23", "s[threadIdx.y][threadIdx.x]", "store", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (22, "tile2d", "33:53", "in[static_cast<size_t>(y) * w + x]", "load", (), (4.0, 4.0, "coalesced")),
    (22, "tile2d", "36:23", "out[(size_t)y * h + x]", "store", (), (4.0, 4.0, "coalesced")),
    (22, "tile2d", "36:48", "s[threadIdx.x][threadIdx.y]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (22, "gs2d", "43:7", "img[y * w + x]", "load", (), (4.0, 4.0, "coalesced")),
    (22, "gs2d", "43:7", "img[y * w + x]", "store", (), (4.0, 4.0, "coalesced")),
    (22, "ldg_int4", "49:14", "out[i]", "store", (), (8.0, 8.0, "coalesced")),
    (22, "ldg_int4", "49:23", "__ldg(in + i)", "load", (), (8.0, 8.0, "coalesced")),
    (22, "f2", "55:14", "reinterpret_cast<const float2*>(in)[t]", "load", (), (4.0, 4.0, "coalesced")),
    (22, "f2", "56:3", "out[t]", "store", (), (4.0, 4.0, "coalesced")),
    (22, "asm_ld", "62:61", "in + threadIdx.x", "load", (), (2.0, 2.0, "coalesced")),
    (22, "asm_ld", "63:3", "out[threadIdx.x]", "store", (), (2.0, 2.0, "coalesced")),
    (22, "lam", "70:3", "out[f(i)]", "store", (), (4.0, 2.0, "scattered")),
    (22, "warp_lane", "79:13", "in[blockIdx.x * blockDim.x + threadIdx.x]", "load", (), (2.0, 2.0, "coalesced")),
    (22, "warp_lane", "80:18", "partial[wid]", "store", (), (1.0, 1.0, 1, "broadcast")),
    (22, "warp_lane", "82:17", "out[blockIdx.x * kWarpSize + lane]", "store", (), (2.0, 2.0, "coalesced")),
    (22, "warp_lane", "82:54", "partial[lane]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (22, "static_constexpr_k", "91:3", "t[threadIdx.x % Tile<8>::kSize]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (22, "static_constexpr_k", "92:3", "out[threadIdx.x]", "store", (), (2.0, 2.0, "coalesced")),
    (
        22,
        "static_constexpr_k",
        "92:22",
        "t[(threadIdx.x * 8) % Tile<8>::kSize]",
        "load",
        (),
        (2.0, 1.0, 2, "2-way bank conflict"),
    ),
]


@pytest.fixture(scope="module")
def findings():
    return all_findings(IDIOMS, RUNS, SOLO)


def test_every_access_is_expected(findings):
    assert sorted(findings) == sorted(e[:6] for e in EXPECTED)


def test_at_least_25_kernels():
    assert len({(RUNS[e[0]][0], e[1]) for e in EXPECTED}) >= 25


@pytest.mark.parametrize("case", EXPECTED, ids=lambda e: f"{e[0]}:{e[1]}:{e[2]}:{e[4]}")
def test_access(findings, case):
    *key, expected = case
    assert matches(expected, numbers(findings[tuple(key)]))


def test_guard_on_loaded_data_assumes_its_lanes_and_says_so(findings):
    f = findings[(10, "bfs_kernel", "112:22", "g_graph_nodes[tid].starting", "load", ())]
    assert f.assumption.startswith("guard `tid < no_of_nodes && g_graph_mask[tid]` (line 110) not known: value loaded")
    assert f.active_lanes == 32
    assert findings[(10, "bfs_kernel", "110:30", "g_graph_mask[tid]", "load", ())].assumption is None


def test_guard_on_loaded_data_is_unknown_unless_assumed():
    (r,) = lint_file(str(IDIOMS / "rodinia_style.cu"), Options(kernel="bfs_kernel", block=(256,),
                                                                lets={"no_of_nodes": 1 << 20}), resources=False)
    f = {(x.line, x.column): x for x in r.findings}[(112, 22)]
    assert f.verdict == "unknown" and f.assumption is None and f.requests is None
    assert f.unknown_reason == ("guard `tid < no_of_nodes && g_graph_mask[tid]` (line 110) not known: value loaded "
                                "from memory (g_graph_mask[tid]) (--assume-data-guards: numbers if every lane its "
                                "known part selects executes)")


def test_later_iterations_of_the_scan_up_sweep_have_their_own_classes(findings):
    f = findings[(7, "prescan", "100:13", "temp[bi]", "load", ())]
    classes = [
        (c["first"], c["last"], c["wavefronts_per_request"], c["conflict_ways"], c["active_lanes"])
        for c in f.iterations
    ]
    # offset 1, 2, 4: 32 lanes, words (2^k)(2t + 2) - 1 -> 2-, 4-, 8-way; then d = 16, 8, 4 lanes: 8, 8, 4 ...
    assert classes[:6] == [
        (0, 0, 2.0, 2, 32),
        (1, 1, 4.0, 4, 32),
        (2, 2, 8.0, 8, 32),
        (3, 3, 8.0, 8, 16),
        (4, 4, 8.0, 8, 8),
        (5, 5, 4.0, 4, 4),
    ]
    (lp,) = f.loops
    assert (lp["iterations_evaluated"], lp["all_iterations"], lp["uniform_step"], lp["pattern_kept"]) == (
        8,
        True,
        True,
        False,
    )


def test_values_after_a_finished_loop_stay_known(findings):
    # the down-sweep starts from offset = 256 left by the up-sweep: lane 0 alone, ai = 127
    f = findings[(7, "prescan", "111:23", "temp[ai]", "load", ())]
    assert (f.active_lanes, f.iterations[1]["active_lanes"]) == (1, 2)


def test_a_grid_stride_loop_longer_than_the_cap_says_where_it_stopped(findings):
    # n4 = 2^18 float4s, stride 256 x 4 blocks = 1024: 256 iterations, known after the first: not run further
    f = findings[(13, "gelu_float4", "121:20", "reinterpret_cast<const float4 *>(inp)[i]", "load", ())]
    (lp,) = f.loops
    assert (lp["iterations_evaluated"], lp["all_iterations"], lp["stopped"]) == (
        1,
        False,
        "about 256 iterations, more than 17",
    )
    assert (lp["uniform_step"], lp["pattern_kept"]) == (True, True) and f.iterations == []


def test_comma_separated_steps_keep_the_pattern(findings):
    f = findings[(0, "MatrixMulCUDA", "21:22", "A[a + wA * ty + tx]", "load", ())]
    assert f.loops[0]["var"] == "a" and f.loops[0]["pattern_kept"] is True


def test_std_type_traits_in_a_kernel(tmp_path):
    src = tmp_path / "traits.cu"
    src.write_text(
        "#include <type_traits>\n__global__ void k(float* out, const float* in) {\n"
        "  using V = std::conditional<std::is_same<float, float>::value, float4, float2>::type;\n"
        "  reinterpret_cast<V*>(out)[threadIdx.x] = reinterpret_cast<const V*>(in)[threadIdx.x];\n}\n"
        "template <class T> __global__ void d(T* out) {\n"
        "  using V = typename std::conditional<sizeof(T) == 4, float4, double2>::type;\n"
        "  reinterpret_cast<V*>(out)[threadIdx.x] = V();\n}\n"
    )
    (r,) = lint_file(str(src), Options(kernel="k", block=(32,)), resources=False)
    assert [(f.access, f.sectors_per_request) for f in r.findings] == [("store", 16.0), ("load", 16.0)]
    (r,) = lint_file(str(src), Options(kernel="d", block=(32,), templates={"T": "float"}), resources=False)
    (f,) = r.findings  # a type that depends on the template parameters: unknown, named
    assert f.verdict == "unknown" and f.unknown_reason == "element type type 'V' not understood"


def test_all_iterations_averaged_per_request_as_a_profiler_does(findings):
    # nw: referrence[index + cols * ty] over ty = 0..15, rows 1025 floats apart: the start shifts by 4 bytes a row,
    # so 14 rows take 3 sectors and 2 (ty = 6, 14) are aligned and take 2: (14 x 3 + 2 x 2) / 16 = 2.875
    f = findings[(11, "needle_cuda_shared_1", "141:59", "referrence[index + cols * ty]", "load", ())]
    assert f.sectors_per_request == 3.0
    assert f.over_iterations == dict(
        requests=16, iterations=16, sectors_per_request=2.875, ideal_sectors_per_request=2.0
    )
    # the anti-diagonal store: m + 1 lanes at step m, 17-word rows -> (m + 2) // 2 wavefronts: 72 / 16 = 4.5
    f = findings[(11, "needle_cuda_shared_1", "151:13", "temp[t_index_y][t_index_x]", "store", ())]
    assert f.over_iterations["wavefronts_per_request"] == 4.5


def test_shared_array_indexed_past_its_end_at_this_block_is_said_and_not_launched():
    from gpumemlab.ncu import source

    # reduce_volatile is written for 64 threads (__shared__ int sdata[64]): at 256, threads 64..255 store past it
    (r,) = lint_file(str(IDIOMS / "misc_idioms.cu"), Options(kernel="reduce_volatile", block=(256,)), resources=False)
    assert r.out_of_bounds == [
        "62:5: shared store `sdata[tid]` is out of the bounds of sdata (256 bytes) in threads "
        "64..255 of the block: the launch would touch other memory or fault"
    ]
    assert r.out_of_bounds[0] in r.notes
    assert source.plan("text", [r], Options())["skipped"] == {"reduce_volatile": "not launched: " + r.out_of_bounds[0]}
    (r,) = lint_file(str(IDIOMS / "misc_idioms.cu"), Options(kernel="reduce_volatile", block=(64,)), resources=False)
    assert r.out_of_bounds == []


def test_switch_on_a_known_value_enters_each_lane_at_its_case_and_falls_through(tmp_path):
    src = tmp_path / "sw.cu"
    src.write_text(
        "__global__ void k(float* a) {\n  switch (threadIdx.x % 4) {\n"
        "    case 0: a[threadIdx.x] = 0;\n"
        "    case 1: a[threadIdx.x + 32] = 1; break;\n"
        "    default: a[threadIdx.x + 64] = 2;\n  }\n}\n"
    )
    (r,) = lint_file(str(src), Options(block=(32,)), resources=False)
    got = {f.line: (f.active_lanes, f.sectors_per_request, f.ideal_sectors_per_request, f.verdict) for f in r.findings}
    # case 0: lanes 0, 4, ..., 28, 16 bytes apart: 4 sectors for 32 bytes (ideal 1); case 1 is reached by lanes 4k
    # falling through and lanes 4k + 1: 16 lanes, two of every four floats: 4 sectors (ideal 2); default: 4k + 2, 4k + 3
    assert got == {3: (8, 4.0, 1.0, "strided"), 4: (16, 4.0, 2.0, "scattered"), 5: (16, 4.0, 2.0, "scattered")}


def test_a_while_loops_variable_is_the_one_its_condition_compares(findings):
    # reduce6's grid-stride while: i += gridSize in the body, 512 x 4 blocks: the same shift for every lane; with
    # n = 2^20 the loop runs 512 times, so it is not run past the first iteration
    f = findings[(3, "reduce6", "50:18", "g_idata[i]", "load", ())]
    (lp,) = f.loops
    assert (lp["var"], lp["step"], lp["uniform_step"], lp["pattern_kept"], lp["stopped"]) == (
        "i",
        "i changed in the body by 2048",
        True,
        True,
        "about 512 iterations, more than 17",
    )


DEPENDENT = """
template <typename T> struct Vec16;
template <> struct Vec16<float> { typedef float4 type; };
template <> struct Vec16<double> { typedef double2 type; };
template <typename T, bool VEC> struct Load { typedef T type; };
template <typename T> struct Load<T, true> { typedef typename Vec16<T>::type type; };

template <typename T, bool VEC>
__global__ void k(T* out, const T* in) {
    typedef typename Load<T, VEC>::type V;
    const V* v = reinterpret_cast<const V*>(in);
    V x = v[threadIdx.x];
    reinterpret_cast<V*>(out)[threadIdx.x] = x;
}
"""


@pytest.mark.parametrize("t,vec,nbytes", [("float", "true", 16), ("double", "true", 16), ("float", "false", 4),
                                          ("double", "false", 8)])
def test_a_type_that_depends_on_template_parameters_is_instantiated(tmp_path, t, vec, nbytes):
    # typename Load<T, VEC>::type: float4 / double2 when VEC, else T; a warp's 32 consecutive words of nbytes
    src = tmp_path / "dep.cu"
    src.write_text(DEPENDENT)
    (r,) = lint_file(str(src), Options(block=(32,), templates={"T": t, "VEC": vec}), resources=False)
    assert [(f.access, f.element_bytes, f.sectors_per_request, f.verdict) for f in r.findings] == [
        ("load", nbytes, nbytes, "coalesced"), ("store", nbytes, nbytes, "coalesced")]


def test_a_template_struct_of_the_parameters_is_instantiated(tmp_path):
    # KeyPack<unsigned char, 8>: 8 bytes aligned to 8; the warp reads 32 consecutive packs: 256 bytes, 8 sectors
    src = tmp_path / "pack.cu"
    src.write_text("template <typename K, int N> struct alignas(sizeof(K) * N) KeyPack { K v[N]; };\n"
                   "template <typename K, int VEC> __global__ void k(const K* keys, unsigned* out) {\n"
                   "    const KeyPack<K, VEC>* packed = reinterpret_cast<const KeyPack<K, VEC>*>(keys);\n"
                   "    const KeyPack<K, VEC> v = packed[threadIdx.x];\n"
                   "    out[threadIdx.x] = v.v[0];\n}\n")
    (r,) = lint_file(str(src), Options(block=(32,), templates={"K": "unsigned char", "VEC": "8"}), resources=False)
    f = {x.line: x for x in r.findings}[4]
    assert (f.element_bytes, f.sectors_per_request, f.ideal_sectors_per_request, f.verdict) == (8, 8.0, 8.0,
                                                                                              "coalesced")

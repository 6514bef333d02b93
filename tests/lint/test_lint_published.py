"""lint on tests/lint/corpus/published/*.cu - kernels in the styles published in textbooks and public repositories
that the other corpora do not cover (halo stencils, im2col, CSR SpMV, n-body, block scans with conflict-free padding,
row softmax/layernorm, structs by value, templates with value parameters, helpers templated on a value, lambdas with
captures, double buffers, while loops with tails, cooperative groups, tile iterators advanced in a loop, batched
GEMVs with a batch stride, int4 copies of halves) - against
per-access values derived by hand (the arithmetic is in each kernel's comment)."""

from pathlib import Path

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.lint import lint_file
from gpumemlab.lint.analysis import Options
from lint_tables import all_findings, matches, numbers

PUBLISHED = Path(__file__).parent / "corpus" / "published"

# file, kernel, options: the launch each kernel's comment assumes
RUNS = [
    ("stencils.cu", "stencil_1d", dict(block=(256,))),
    ("stencils.cu", "jacobi_2d_halo", dict(block=(32, 8), lets={"nx": 1024, "ny": 1024})),
    ("stencils.cu", "conv2d_direct", dict(block=(16, 16), lets={"width": 1024, "height": 1024})),
    (
        "stencils.cu",
        "im2col",
        dict(
            block=(256,),
            lets={
                "n": 3 * 64 * 64,
                "height": 64,
                "width": 64,
                "ksize": 3,
                "pad": 1,
                "stride": 1,
                "height_col": 64,
                "width_col": 64,
            },
        ),
    ),
    ("sparse_nbody.cu", "spmv_csr_scalar", dict(block=(256,), lets={"num_rows": 4096})),
    ("sparse_nbody.cu", "spmv_csr_vector", dict(block=(256,), lets={"num_rows": 4096})),
    ("sparse_nbody.cu", "nbody_forces", dict(block=(256,), lets={"n": 16384})),
    ("sparse_nbody.cu", "integrate_soa", dict(block=(256,))),
    ("rows_scan_hist.cu", "softmax_warp", dict(block=(256,), lets={"N": 4096, "C": 768})),
    ("rows_scan_hist.cu", "layernorm_block", dict(block=(256,), lets={"C": 768})),
    ("rows_scan_hist.cu", "histogram_shared", dict(block=(256,), lets={"n": 1 << 20})),
    ("rows_scan_hist.cu", "scan_blelloch_cf", dict(block=(128,), lets={"n": 256})),
    ("params_templates.cu", "saxpy_args", dict(block=(256,), lets={"args.n": 1 << 20})),
    ("params_templates.cu", "scale_rows", dict(block=(32, 8), lets={"v.ld": 1024, "v.rows": 1024, "v.cols": 1000})),
    (
        "params_templates.cu",
        "scale_col",
        dict(block=(256,), lets={"v.ld": 1024, "v.rows": 1024, "v.cols": 1000, "col": 5}),
    ),
    (
        "params_templates.cu",
        "col_sum_tiled",
        dict(block=(32, 8), lets={"rows": 1024, "cols": 1024}, templates={"T": "float", "ROWS": "8", "CPT": "2"}),
    ),
    ("params_templates.cu", "copy_pairs", dict(block=(256,), lets={"npairs": 1 << 20}, templates={"T": "float"})),
    ("params_templates.cu", "gather_every", dict(block=(256,), lets={"n": 1 << 20})),
    ("params_templates.cu", "scale_y_component", dict(block=(256,))),
    ("params_templates.cu", "copy_tiles", dict(block=(32, 8), lets={"ld": 1000})),
    ("transposes.cu", "transpose_flat", dict(block=(32, 8), lets={"width": 1000, "height": 1000})),
    ("transposes.cu", "transpose_flat_padded", dict(block=(32, 8), lets={"width": 1000, "height": 1000})),
    ("transposes.cu", "transpose_tile", dict(block=(32, 8), lets={"n": 1024}, templates={"T": "double", "PAD": "0"})),
    ("transposes.cu", "transpose_tile", dict(block=(32, 8), lets={"n": 1024}, templates={"T": "double", "PAD": "1"})),
    ("gemm_pool_sort.cu", "sgemm_blocktile_1d", dict(block=(512,), lets={"M": 1024, "N": 1024, "K": 1024})),
    ("gemm_pool_sort.cu", "bitonic_sort_shared", dict(block=(512,))),
    (
        "gemm_pool_sort.cu",
        "max_pool_forward",
        dict(
            block=(256,),
            lets={
                "nthreads": 16 * 32 * 32,
                "channels": 16,
                "height": 64,
                "width": 64,
                "pooled_height": 32,
                "pooled_width": 32,
                "kernel_h": 2,
                "kernel_w": 2,
                "stride_h": 2,
                "stride_w": 2,
            },
        ),
    ),
    (
        "gemm_pool_sort.cu",
        "upsample_bilinear",
        dict(block=(32, 8), lets={"in_w": 1024, "in_h": 1024, "out_w": 2048, "out_h": 2048}),
    ),
    ("gemm_pool_sort.cu", "double_buffered_sum", dict(block=(256,), lets={"tiles": 8})),
    ("gemm_pool_sort.cu", "gemv_warp_row_vec4", dict(block=(256,), lets={"rows": 4096, "cols": 1024})),
    ("gemm_pool_sort.cu", "copy_ptx_v4", dict(block=(256,))),
    ("framework_style.cu", "transform", dict(block=(256,), lets={"n": 1 << 20}, templates={"F": "Scale"})),
    ("framework_style.cu", "raw_smem", dict(block=(256,))),
    ("framework_style.cu", "grid_copy", dict(block=(256,), lets={"n": 1 << 20})),
    (
        "framework_style.cu",
        "strided_copy",
        dict(
            block=(256,),
            lets={
                "n": 4096,
                "src.dims": 2,
                "src.sizes[0]": 64,
                "src.sizes[1]": 64,
                "src.strides[0]": 1,
                "src.strides[1]": 64,
            },
        ),
    ),
    ("framework_style.cu", "nchw_bias", dict(block=(256,), grid=(4, 64, 1), lets={"C": 64, "HW": 4096})),
    ("accessors.cu", "view_ops", dict(block=(32, 8), lets={"v.ld": 1024})),
    ("accessors.cu", "advance_bodies", dict(block=(256,), lets={"n": 1 << 20})),
    ("accessors.cu", "scatter_even", dict(block=(256,), lets={"n": 1 << 20})),
    ("polybench_style.cu", "gemm_kernel", dict(block=(32, 8))),
    ("polybench_style.cu", "atax_kernel1", dict(block=(256,))),
    ("polybench_style.cu", "atax_kernel2", dict(block=(256,))),
    ("polybench_style.cu", "fdtd_step1_kernel", dict(block=(32, 8), lets={"t": 3})),
    ("polybench_style.cu", "convolution2d_kernel", dict(block=(32, 8))),
    ("polybench_style.cu", "mean_kernel", dict(block=(256,))),
    ("textbook.cu", "spmv_ell", dict(block=(256,), lets={"num_rows": 4096, "num_elem": 8})),
    ("textbook.cu", "convolution_1d_const", dict(block=(256,), lets={"Mask_Width": 5, "Width": 1 << 20})),
    ("textbook.cu", "convolution_2d_tiled", dict(block=(16, 16), lets={"height": 1024, "width": 1024, "pitch": 1024})),
    ("textbook.cu", "brent_kung_scan", dict(block=(128,), lets={"InputSize": 1 << 20})),
    ("constants_atomics.cu", "convolution_rows", dict(block=(256,), lets={"width": 4096})),
    ("constants_atomics.cu", "normalize_hwc", dict(block=(256,), lets={"n": 3 << 20})),
    ("constants_atomics.cu", "normalize_nchw", dict(block=(256,), lets={"n": 3 * 4096, "HW": 4096})),
    ("constants_atomics.cu", "col_sum_atomic", dict(block=(32, 8), lets={"rows": 1024, "cols": 1024})),
    ("constants_atomics.cu", "block_sum_shared_atomic", dict(block=(256,), lets={"n": 1 << 20})),
    ("constants_atomics.cu", "histogram_bins", dict(block=(256,), lets={"n": 1 << 20})),
    ("constants_atomics.cu", "max_cas", dict(block=(256,), lets={"n": 1 << 20})),
    ("modern_idioms.cu", "vec_scale", dict(block=(256,), lets={"n": (1 << 20) + 3})),
    ("modern_idioms.cu", "block_reduce_sum", dict(block=(256,), lets={"n": 1 << 20}, templates={"BLOCK": "256"})),
    ("modern_idioms.cu", "rmsnorm_forward", dict(block=(256,), lets={"C": 768})),
    ("modern_idioms.cu", "softmax_online", dict(block=(256,), lets={"N": 4096, "C": 1000})),
    ("modern_idioms.cu", "stencil7_3d", dict(block=(32, 8), lets={"nx": 256, "ny": 256, "nz": 64})),
    ("modern_idioms.cu", "sgemm_double_buffer", dict(block=(16, 16), lets={"M": 1024, "N": 1024, "K": 1024})),
    ("modern_idioms.cu", "box_filter_ldg", dict(block=(256,), lets={"n": 1 << 20}, templates={"R": "2"})),
    ("modern_idioms.cu", "resample_tex", dict(block=(32, 8), lets={"width": 1024, "height": 1024})),
    ("modern_idioms.cu", "bias_gelu_lambda", dict(block=(256,), grid=(1, 4, 1), lets={"cols": 1024})),
    ("modern_idioms.cu", "copy_vec4_while", dict(block=(256,), lets={"n": (1 << 20) + 2})),
    ("modern_idioms.cu", "cg_block_reduce", dict(block=(256,), lets={"n": 1 << 20})),
    ("modern_idioms.cu", "half2_add", dict(block=(256,), lets={"n": 1 << 20})),
    ("modern_idioms.cu", "ballot_compact", dict(block=(256,), lets={"n": 1 << 20})),
    ("iterators_batched.cu", "tile_iterator_sum", dict(block=(128,), lets={"it.stride": 1024, "rows": 8})),
    ("iterators_batched.cu", "softmax_backward_rows", dict(block=(32, 4), lets={"cols": 1024})),
    ("iterators_batched.cu", "block_permute", dict(block=(256,), lets={"nblocks": 64})),
    (
        "iterators_batched.cu",
        "batched_gemv",
        dict(block=(256,), grid=(16, 8, 1), lets={"M": 4096, "K": 512, "batch_stride": 4096 * 512}),
    ),
    ("iterators_batched.cu", "box_blur_padded", dict(block=(32, 8), lets={"width": 1024})),
    ("iterators_batched.cu", "copy_half_int4", dict(block=(256,), lets={"n": 1 << 20})),
    (
        "iterators_batched.cu",
        "predicated_iterator_sum",
        dict(block=(128,), lets={"it.stride": 1000, "it.extent": 1000, "rows": 8}),
    ),
    ("iterators_batched.cu", "halo_row", dict(block=(32,), lets={"width": 1024})),
]

# run, kernel, line:column, access as written, load/store, call lines, expected (see lint_tables)
EXPECTED = [
    (0, "stencil_1d", "21:5", "temp[l]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "stencil_1d", "21:15", "in[g + RAD]", "load", (), (5.0, 4.0, "offset")),
    (0, "stencil_1d", "23:9", "temp[l - RAD]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "stencil_1d", "23:25", "in[g]", "load", (), (1.0, 1.0, "coalesced")),
    (0, "stencil_1d", "24:9", "temp[l + blockDim.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "stencil_1d", "24:32", "in[g + RAD + blockDim.x]", "load", (), (1.0, 1.0, "coalesced")),
    (0, "stencil_1d", "29:19", "temp[l + offset]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (0, "stencil_1d", "30:5", "out[g]", "store", (), (4.0, 4.0, "coalesced")),
    (1, "jacobi_2d_halo", "49:17", "tile[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "49:32", "u[IDX2(gy, gx, nx)]", "load", (), (4.0, 4.0, "coalesced")),
    (1, "jacobi_2d_halo", "50:43", "tile[ty][tx - HALO]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "50:65", "u[IDX2(gy, gx - HALO, nx)]", "load", (), (1.0, 1.0, "coalesced")),
    (1, "jacobi_2d_halo", "51:57", "tile[ty][tx + HALO]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "51:79", "u[IDX2(gy, gx + HALO, nx)]", "load", (), (1.0, 1.0, "coalesced")),
    (1, "jacobi_2d_halo", "52:43", "tile[ty - HALO][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "52:65", "u[IDX2(gy - HALO, gx, nx)]", "load", (), (4.0, 4.0, "coalesced")),
    (1, "jacobi_2d_halo", "53:57", "tile[ty + HALO][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "53:79", "u[IDX2(gy + HALO, gx, nx)]", "load", (), (4.0, 4.0, "coalesced")),
    (1, "jacobi_2d_halo", "56:9", "unew[IDX2(gy, gx, nx)]", "store", (), (4.0, 4.0, "coalesced")),
    (1, "jacobi_2d_halo", "56:43", "tile[ty][tx - 1]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "56:62", "tile[ty][tx + 1]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "56:81", "tile[ty - 1][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (1, "jacobi_2d_halo", "56:100", "tile[ty + 1][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (2, "conv2d_direct", "73:20", "img[(y + i) * width + (x + j)]", "load", (), (4.0, 4.0, "coalesced")),
    (2, "conv2d_direct", "73:53", "filt[i * KSIZE + j]", "load", (), (1.0, 1.0, "broadcast")),
    (2, "conv2d_direct", "75:5", "out[y * (width - KSIZE + 1) + x]", "store", (), (5.0, 4.0, "scattered")),
    (3, "im2col", "99:17", "*col_ptr", "store", (), (4.0, 4.0, "coalesced")),
    (3, "im2col", "99:76", "im_ptr[i * width + j]", "load", (), (5.0, 4.0, "offset")),
    (4, "spmv_csr_scalar", "13:25", "row_ptr[row]", "load", (), (4.0, 4.0, "coalesced")),
    (4, "spmv_csr_scalar", "14:23", "row_ptr[row + 1]", "load", (), (5.0, 4.0, "offset")),
    (4, "spmv_csr_scalar", "16:20", "val[jj]", "load", (), ("unknown", "index 'jj': value loaded from memory")),
    (4, "spmv_csr_scalar", "16:30", "x[col_idx[jj]]", "load", (), ("unknown", "index 'col_idx[jj]': ")),
    (4, "spmv_csr_scalar", "16:32", "col_idx[jj]", "load", (), ("unknown", "index 'jj': value loaded from memory")),
    (4, "spmv_csr_scalar", "17:9", "y[row]", "store", (), (4.0, 4.0, "coalesced")),
    (5, "spmv_csr_vector", "31:25", "row_ptr[row]", "load", (), (1.0, 1.0, "broadcast")),
    (5, "spmv_csr_vector", "32:23", "row_ptr[row + 1]", "load", (), (1.0, 1.0, "broadcast")),
    (5, "spmv_csr_vector", "35:20", "val[jj]", "load", (), ("unknown", "index 'jj': value loaded from memory")),
    (5, "spmv_csr_vector", "35:30", "x[col_idx[jj]]", "load", (), ("unknown", "index 'col_idx[jj]': ")),
    (5, "spmv_csr_vector", "35:32", "col_idx[jj]", "load", (), ("unknown", "index 'jj': value loaded from memory")),
    (5, "spmv_csr_vector", "39:13", "y[row]", "load", (), (1.0, 1.0, "coalesced")),
    (5, "spmv_csr_vector", "39:13", "y[row]", "store", (), (1.0, 1.0, "coalesced")),
    (6, "nbody_forces", "65:17", "pos[i]", "load", (), (16.0, 16.0, "coalesced")),
    (6, "nbody_forces", "68:9", "sh_pos[threadIdx.x]", "store", (), (4.0, 4.0, 1, "conflict-free")),
    (6, "nbody_forces", "68:31", "pos[tile * NB_BLOCK + threadIdx.x]", "load", (), (16.0, 16.0, "coalesced")),
    (6, "nbody_forces", "72:33", "sh_pos[j]", "load", (), (2.0, 2.0, 1, "broadcast")),
    (6, "nbody_forces", "75:5", "acc_out[i]", "store", (), (16.0, 16.0, "coalesced")),
    (7, "integrate_soa", "88:9", "p.x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "88:9", "p.x[i]", "store", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "88:19", "p.vx[i]", "load", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "89:9", "p.y[i]", "load", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "89:9", "p.y[i]", "store", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "89:19", "p.vy[i]", "load", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "90:9", "p.z[i]", "load", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "90:9", "p.z[i]", "store", (), (4.0, 4.0, "coalesced")),
    (7, "integrate_soa", "90:19", "p.vz[i]", "load", (), (4.0, 4.0, "coalesced")),
    (8, "softmax_warp", "31:63", "x[c]", "load", (), (4.0, 4.0, "coalesced")),
    (8, "softmax_warp", "35:24", "x[c]", "load", (), (4.0, 4.0, "coalesced")),
    (8, "softmax_warp", "36:9", "y[c]", "store", (), (4.0, 4.0, "coalesced")),
    (8, "softmax_warp", "41:40", "y[c]", "load", (), (4.0, 4.0, "coalesced")),
    (8, "softmax_warp", "41:40", "y[c]", "store", (), (4.0, 4.0, "coalesced")),
    (9, "layernorm_block", "59:19", "x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (9, "layernorm_block", "66:9", "s_part[wid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "layernorm_block", "67:9", "s_part_sq[wid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "layernorm_block", "71:42", "s_part[lane]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "layernorm_block", "72:41", "s_part_sq[lane]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "layernorm_block", "76:13", "s_mean", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "layernorm_block", "77:13", "s_rstd", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (9, "layernorm_block", "81:18", "s_mean", "load", (), (1.0, 1.0, 1, "broadcast")),
    (9, "layernorm_block", "81:33", "s_rstd", "load", (), (1.0, 1.0, 1, "broadcast")),
    (9, "layernorm_block", "83:9", "out[(size_t)blockIdx.x * C + i]", "store", (), (4.0, 4.0, "coalesced")),
    (9, "layernorm_block", "83:44", "x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (9, "layernorm_block", "83:66", "gamma[i]", "load", (), (4.0, 4.0, "coalesced")),
    (9, "layernorm_block", "83:77", "beta[i]", "load", (), (4.0, 4.0, "coalesced")),
    (10, "histogram_shared", "91:62", "s_hist[b]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (
        10,
        "histogram_shared",
        "95:9",
        "atomicAdd(&s_hist[data[i]], 1u)",
        "atomic",
        (),
        ("unknown", "atomicAdd address: index 'data[i]': value loaded from memory"),
    ),
    (10, "histogram_shared", "95:27", "data[i]", "load", (), (1.0, 1.0, "coalesced")),
    (
        10,
        "histogram_shared",
        "98:9",
        "atomicAdd(&hist[b], s_hist[b])",
        "atomic",
        (),
        (4.0, 4.0, "coalesced"),
    ),
    (10, "histogram_shared", "98:29", "s_hist[b]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "115:5", "temp[ai + bankOffsetA]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "115:30", "g_idata[ai]", "load", (), (4.0, 4.0, "coalesced")),
    (11, "scan_blelloch_cf", "116:5", "temp[bi + bankOffsetB]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "116:30", "g_idata[bi]", "load", (), (4.0, 4.0, "coalesced")),
    (11, "scan_blelloch_cf", "124:13", "temp[b]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "124:13", "temp[b]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "124:24", "temp[a]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (
        11,
        "scan_blelloch_cf",
        "128:20",
        "temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)]",
        "store",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (11, "scan_blelloch_cf", "137:23", "temp[a]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "138:13", "temp[a]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "138:23", "temp[b]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "139:13", "temp[b]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "139:13", "temp[b]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "143:5", "g_odata[ai]", "store", (), (4.0, 4.0, "coalesced")),
    (11, "scan_blelloch_cf", "143:19", "temp[ai + bankOffsetA]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (11, "scan_blelloch_cf", "144:5", "g_odata[bi]", "store", (), (4.0, 4.0, "coalesced")),
    (11, "scan_blelloch_cf", "144:19", "temp[bi + bankOffsetB]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (12, "saxpy_args", "20:9", "args.y[i]", "store", (), (4.0, 4.0, "coalesced")),
    (12, "saxpy_args", "20:30", "args.x[i]", "load", (), (4.0, 4.0, "coalesced")),
    (12, "saxpy_args", "20:42", "args.y[i]", "load", (), (4.0, 4.0, "coalesced")),
    (13, "scale_rows", "37:35", "*at(v, r, c)", "load", (), (4.0, 4.0, "coalesced")),
    (13, "scale_rows", "37:35", "*at(v, r, c)", "store", (), (4.0, 4.0, "coalesced")),
    (14, "scale_col", "43:21", "*at(v, r, col)", "load", (), (32.0, 4.0, "column-major")),
    (14, "scale_col", "43:21", "*at(v, r, col)", "store", (), (32.0, 4.0, "column-major")),
    (15, "col_sum_tiled", "60:42", "in[(size_t)r * cols + c0 + k]", "load", (), (8.0, 4.0, "strided")),
    (
        15,
        "col_sum_tiled",
        "63:35",
        "part[threadIdx.y][threadIdx.x * CPT + k]",
        "store",
        (),
        (2.0, 1.0, 2, "2-way bank conflict"),
    ),
    (15, "col_sum_tiled", "67:19", "part[0][threadIdx.x * CPT + k]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (15, "col_sum_tiled", "68:49", "part[y][threadIdx.x * CPT + k]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (15, "col_sum_tiled", "69:32", "out[c0 + k]", "store", (), (8.0, 4.0, "strided")),
    (16, "copy_pairs", "85:15", "__ldg(reinterpret_cast<const V *>(in) + i)", "load", (), (8.0, 8.0, "coalesced")),
    (16, "copy_pairs", "86:9", "reinterpret_cast<V *>(out)[i]", "store", (), (8.0, 8.0, "coalesced")),
    (17, "gather_every", "91:90", "p[i * STRIDE]", "load", (98,), (8.0, 4.0, "strided")),
    (17, "gather_every", "91:90", "p[i * STRIDE]", "load", (99,), (12.0, 4.0, "strided")),
    (17, "gather_every", "100:9", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (18, "scale_y_component", "108:22", "xyz[idx * 3 + 1]", "load", (), (12.0, 4.0, "strided")),
    (18, "scale_y_component", "108:22", "xyz[idx * 3 + 1]", "store", (), (12.0, 4.0, "strided")),
    (19, "copy_tiles", "122:9", "dst[r * ld + threadIdx.x]", "store", (), (4.0, 4.0, "coalesced")),
    (19, "copy_tiles", "122:37", "src[r * ld + threadIdx.x]", "load", (), (4.0, 4.0, "coalesced")),
    (
        20,
        "transpose_flat",
        "16:13",
        "buf[(threadIdx.y + j) * TILE_DIM + threadIdx.x]",
        "store",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (20, "transpose_flat", "16:63", "idata[(y + j) * width + x]", "load", (), (4.0, 4.0, "coalesced")),
    (20, "transpose_flat", "22:13", "odata[(y + j) * height + x]", "store", (), (4.0, 4.0, "coalesced")),
    (
        20,
        "transpose_flat",
        "22:43",
        "buf[threadIdx.x * TILE_DIM + threadIdx.y + j]",
        "load",
        (),
        (32.0, 1.0, 32, "32-way bank conflict"),
    ),
    (
        21,
        "transpose_flat_padded",
        "32:13",
        "buf[(threadIdx.y + j) * PADDED_DIM + threadIdx.x]",
        "store",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (21, "transpose_flat_padded", "32:65", "idata[(y + j) * width + x]", "load", (), (4.0, 4.0, "coalesced")),
    (21, "transpose_flat_padded", "38:13", "odata[(y + j) * height + x]", "store", (), (4.0, 4.0, "coalesced")),
    (
        21,
        "transpose_flat_padded",
        "38:43",
        "buf[threadIdx.x * PADDED_DIM + threadIdx.y + j]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (22, "transpose_tile", "53:9", "tile[threadIdx.y + j][threadIdx.x]", "store", (), (2.0, 2.0, 1, "conflict-free")),
    (22, "transpose_tile", "53:46", "in[(size_t)(y + j) * n + x]", "load", (), (8.0, 8.0, "coalesced")),
    (22, "transpose_tile", "59:9", "out[(size_t)(y + j) * n + x]", "store", (), (8.0, 8.0, "coalesced")),
    (
        22,
        "transpose_tile",
        "59:40",
        "tile[threadIdx.x][threadIdx.y + j]",
        "load",
        (),
        (32.0, 2.0, 16, "16-way bank conflict"),
    ),
    (23, "transpose_tile", "53:9", "tile[threadIdx.y + j][threadIdx.x]", "store", (), (2.0, 2.0, 1, "conflict-free")),
    (23, "transpose_tile", "53:46", "in[(size_t)(y + j) * n + x]", "load", (), (8.0, 8.0, "coalesced")),
    (23, "transpose_tile", "59:9", "out[(size_t)(y + j) * n + x]", "store", (), (8.0, 8.0, "coalesced")),
    (23, "transpose_tile", "59:40", "tile[threadIdx.x][threadIdx.y + j]", "load", (), (2.0, 2.0, 1, "conflict-free")),
    (24, "sgemm_blocktile_1d", "35:9", "As[innerRowA * BK + innerColA]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (24, "sgemm_blocktile_1d", "35:42", "A[innerRowA * K + innerColA]", "load", (), (4.0, 4.0, "coalesced")),
    (24, "sgemm_blocktile_1d", "36:9", "Bs[innerRowB * BN + innerColB]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (24, "sgemm_blocktile_1d", "36:42", "B[innerRowB * N + innerColB]", "load", (), (4.0, 4.0, "coalesced")),
    (24, "sgemm_blocktile_1d", "41:26", "Bs[dotIdx * BN + threadCol]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (
        24,
        "sgemm_blocktile_1d",
        "43:42",
        "As[(threadRow * TM + resIdx) * BK + dotIdx]",
        "load",
        (),
        (1.0, 1.0, 1, "broadcast"),
    ),
    (
        24,
        "sgemm_blocktile_1d",
        "48:9",
        "C[(threadRow * TM + resIdx) * N + threadCol]",
        "store",
        (),
        (4.0, 4.0, "coalesced"),
    ),
    (25, "bitonic_sort_shared", "57:5", "shared[tid]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (25, "bitonic_sort_shared", "57:19", "values[tid]", "load", (), (4.0, 4.0, "coalesced")),
    (25, "bitonic_sort_shared", "63:27", "shared[tid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (25, "bitonic_sort_shared", "64:27", "shared[ixj]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (
        25,
        "bitonic_sort_shared",
        "67:21",
        "shared[tid]",
        "store",
        (),
        ("unknown", "guard `(a > b) == up` (line 66) not known: value loaded from memory"),
    ),
    (
        25,
        "bitonic_sort_shared",
        "68:21",
        "shared[ixj]",
        "store",
        (),
        ("unknown", "guard `(a > b) == up` (line 66) not known: value loaded from memory"),
    ),
    (25, "bitonic_sort_shared", "74:5", "values[tid]", "store", (), (4.0, 4.0, "coalesced")),
    (25, "bitonic_sort_shared", "74:19", "shared[tid]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (26, "max_pool_forward", "96:21", "slice[h * width + w]", "load", (), (8.0, 4.0, "strided")),
    (
        26,
        "max_pool_forward",
        "97:30",
        "slice[h * width + w]",
        "load",
        (),
        ("unknown", "guard `slice[h * width + w] > maxval` (line 96) not known: value loaded from memory"),
    ),
    (26, "max_pool_forward", "101:9", "top_data[index]", "store", (), (4.0, 4.0, "coalesced")),
    (
        27,
        "upsample_bilinear",
        "119:30",
        "in[y0 * in_w + x0]",
        "load",
        (),
        ("unknown", "index 'y0 * in_w + x0': result of call to floorf"),
    ),
    (
        27,
        "upsample_bilinear",
        "119:56",
        "in[y0 * in_w + x1]",
        "load",
        (),
        ("unknown", "index 'y0 * in_w + x1': result of call to floorf"),
    ),
    (
        27,
        "upsample_bilinear",
        "120:30",
        "in[y1 * in_w + x0]",
        "load",
        (),
        ("unknown", "index 'y1 * in_w + x0': result of call to floorf"),
    ),
    (
        27,
        "upsample_bilinear",
        "120:56",
        "in[y1 * in_w + x1]",
        "load",
        (),
        ("unknown", "index 'y1 * in_w + x1': result of call to floorf"),
    ),
    (27, "upsample_bilinear", "121:5", "out[y * out_w + x]", "store", (), (4.0, 4.0, "coalesced")),
    (28, "double_buffered_sum", "131:5", "stage[buf][threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (28, "double_buffered_sum", "131:31", "row[threadIdx.x]", "load", (), (4.0, 4.0, "coalesced")),
    (28, "double_buffered_sum", "135:9", "stage[buf ^ 1][threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (28, "double_buffered_sum", "135:39", "row[t * blockDim.x + threadIdx.x]", "load", (), (4.0, 4.0, "coalesced")),
    (
        28,
        "double_buffered_sum",
        "136:16",
        "stage[buf][(threadIdx.x + 1) % blockDim.x]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (
        28,
        "double_buffered_sum",
        "140:12",
        "stage[buf][(threadIdx.x + 1) % blockDim.x]",
        "load",
        (),
        (1.0, 1.0, 1, "conflict-free"),
    ),
    (
        28,
        "double_buffered_sum",
        "141:5",
        "out[(size_t)blockIdx.x * blockDim.x + threadIdx.x]",
        "store",
        (),
        (4.0, 4.0, "coalesced"),
    ),
    (29, "gemv_warp_row_vec4", "160:20", "a4[c]", "load", (), (16.0, 16.0, "coalesced")),
    (29, "gemv_warp_row_vec4", "161:20", "__ldg(&x4[c])", "load", (), (16.0, 16.0, "coalesced")),
    (29, "gemv_warp_row_vec4", "165:20", "y[warp]", "store", (), (1.0, 1.0, "coalesced")),
    (30, "copy_ptx_v4", "171:67", "p", "store", (177,), (16.0, 16.0, "coalesced")),
    (30, "copy_ptx_v4", "177:31", "in4[i]", "load", (), (16.0, 16.0, "coalesced")),
    (31, "transform", "16:16", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (31, "transform", "16:27", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (32, "raw_smem", "25:5", "s[t.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (32, "raw_smem", "25:14", "in[blockIdx.x * blockDim.x + t.x]", "load", (), (4.0, 4.0, "coalesced")),
    (32, "raw_smem", "27:5", "out[blockIdx.x * blockDim.x + t.x]", "store", (), (4.0, 4.0, "coalesced")),
    (32, "raw_smem", "27:42", "s[(t.x + 1) % blockDim.x]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (33, "grid_copy", "33:63", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (33, "grid_copy", "33:72", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (34, "strided_copy", "54:5", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (34, "strided_copy", "54:14", "src.data[offset]", "load", (), (32.0, 4.0, "column-major")),
    (35, "nchw_bias", "62:15", "bias[c]", "load", (), (1.0, 1.0, "broadcast")),
    (35, "nchw_bias", "64:94", "p[i]", "load", (), (4.0, 4.0, "coalesced")),
    (35, "nchw_bias", "64:94", "p[i]", "store", (), (4.0, 4.0, "coalesced")),
    (36, "view_ops", "25:5", "v(r, c)", "load", (), (4.0, 4.0, "coalesced")),
    (36, "view_ops", "25:5", "v(r, c)", "store", (), (4.0, 4.0, "coalesced")),
    (36, "view_ops", "26:17", "v.first(c)", "store", (), (32.0, 4.0, "column-major")),
    (37, "advance_bodies", "13:9", "x", "load", (33,), (16.0, 4.0, "strided")),
    (37, "advance_bodies", "13:9", "x", "store", (33,), (16.0, 4.0, "strided")),
    (37, "advance_bodies", "13:14", "vx", "load", (33,), (16.0, 4.0, "strided")),
    (37, "advance_bodies", "14:9", "y", "load", (33,), (16.0, 4.0, "strided")),
    (37, "advance_bodies", "14:9", "y", "store", (33,), (16.0, 4.0, "strided")),
    (37, "advance_bodies", "14:14", "vy", "load", (33,), (16.0, 4.0, "strided")),
    (38, "scatter_even", "40:16", "at(out, 2 * i)", "store", (), (8.0, 4.0, "strided")),
    (38, "scatter_even", "40:33", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (39, "gemm_kernel", "20:9", "c[i * NJ + j]", "load", (), (4.0, 4.0, "coalesced")),
    (39, "gemm_kernel", "20:9", "c[i * NJ + j]", "store", (), (4.0, 4.0, "coalesced")),
    (39, "gemm_kernel", "23:13", "c[i * NJ + j]", "load", (), (4.0, 4.0, "coalesced")),
    (39, "gemm_kernel", "23:13", "c[i * NJ + j]", "store", (), (4.0, 4.0, "coalesced")),
    (39, "gemm_kernel", "23:38", "a[i * NK + k]", "load", (), (1.0, 1.0, "broadcast")),
    (39, "gemm_kernel", "23:54", "b[k * NJ + j]", "load", (), (4.0, 4.0, "coalesced")),
    (40, "atax_kernel1", "35:13", "tmp[i]", "load", (), (4.0, 4.0, "coalesced")),
    (40, "atax_kernel1", "35:13", "tmp[i]", "store", (), (4.0, 4.0, "coalesced")),
    (40, "atax_kernel1", "35:23", "A[i * NY + j]", "load", (), (32.0, 4.0, "column-major")),
    (40, "atax_kernel1", "35:39", "x[j]", "load", (), (1.0, 1.0, "broadcast")),
    (41, "atax_kernel2", "46:13", "y[j]", "load", (), (4.0, 4.0, "coalesced")),
    (41, "atax_kernel2", "46:13", "y[j]", "store", (), (4.0, 4.0, "coalesced")),
    (41, "atax_kernel2", "46:21", "A[i * NY + j]", "load", (), (4.0, 4.0, "coalesced")),
    (41, "atax_kernel2", "46:37", "tmp[i]", "load", (), (1.0, 1.0, "broadcast")),
    (42, "fdtd_step1_kernel", "59:13", "ey[i * NY + j]", "store", (), (4.0, 4.0, "coalesced")),
    (42, "fdtd_step1_kernel", "59:30", "_fict_[t]", "load", (), (1.0, 1.0, "broadcast")),
    (42, "fdtd_step1_kernel", "61:13", "ey[i * NY + j]", "store", (), (4.0, 4.0, "coalesced")),
    (42, "fdtd_step1_kernel", "61:30", "ey[i * NY + j]", "load", (), (4.0, 4.0, "coalesced")),
    (42, "fdtd_step1_kernel", "61:55", "hz[i * NY + j]", "load", (), (4.0, 4.0, "coalesced")),
    (42, "fdtd_step1_kernel", "61:72", "hz[(i - 1) * NY + j]", "load", (), (4.0, 4.0, "coalesced")),
    (43, "convolution2d_kernel", "77:9", "B[i * NJ + j]", "store", (), (4.0, 4.0, "coalesced")),
    (43, "convolution2d_kernel", "77:31", "A[(i - 1) * NJ + (j - 1)]", "load", (), (5.0, 4.0, "offset")),
    (43, "convolution2d_kernel", "77:65", "A[(i - 1) * NJ + (j + 0)]", "load", (), (4.0, 4.0, "coalesced")),
    (43, "convolution2d_kernel", "78:31", "A[(i - 1) * NJ + (j + 1)]", "load", (), (5.0, 4.0, "offset")),
    (43, "convolution2d_kernel", "78:65", "A[(i + 0) * NJ + (j - 1)]", "load", (), (5.0, 4.0, "offset")),
    (43, "convolution2d_kernel", "79:31", "A[(i + 0) * NJ + (j + 0)]", "load", (), (4.0, 4.0, "coalesced")),
    (43, "convolution2d_kernel", "79:65", "A[(i + 0) * NJ + (j + 1)]", "load", (), (5.0, 4.0, "offset")),
    (43, "convolution2d_kernel", "80:31", "A[(i + 1) * NJ + (j - 1)]", "load", (), (5.0, 4.0, "offset")),
    (43, "convolution2d_kernel", "80:65", "A[(i + 1) * NJ + (j + 0)]", "load", (), (4.0, 4.0, "coalesced")),
    (43, "convolution2d_kernel", "81:31", "A[(i + 1) * NJ + (j + 1)]", "load", (), (5.0, 4.0, "offset")),
    (44, "mean_kernel", "92:9", "mean[j]", "store", (), (4.0, 4.0, "coalesced")),
    (44, "mean_kernel", "95:13", "mean[j]", "load", (), (4.0, 4.0, "coalesced")),
    (44, "mean_kernel", "95:13", "mean[j]", "store", (), (4.0, 4.0, "coalesced")),
    (44, "mean_kernel", "95:24", "data[i * (M + 1) + j]", "load", (), (5.0, 4.0, "offset")),
    (44, "mean_kernel", "97:9", "mean[j]", "load", (), (4.0, 4.0, "coalesced")),
    (44, "mean_kernel", "97:9", "mean[j]", "store", (), (4.0, 4.0, "coalesced")),
    (45, "spmv_ell", "19:20", "data[row + i * num_rows]", "load", (), (4.0, 4.0, "coalesced")),
    (
        45,
        "spmv_ell",
        "19:47",
        "x[col_index[row + i * num_rows]]",
        "load",
        (),
        ("unknown", "index 'col_index[row + i * num_rows]': value loaded from memory"),
    ),
    (45, "spmv_ell", "19:49", "col_index[row + i * num_rows]", "load", (), (4.0, 4.0, "coalesced")),
    (45, "spmv_ell", "20:9", "y[row]", "store", (), (4.0, 4.0, "coalesced")),
    (46, "convolution_1d_const", "34:23", "N[N_start_point + j]", "load", (), (5.0, 4.0, "offset")),
    (46, "convolution_1d_const", "34:46", "M[j]", "load", (), (1.0, 1.0, "broadcast")),
    (46, "convolution_1d_const", "37:5", "P[i]", "store", (), (4.0, 4.0, "coalesced")),
    (47, "convolution_2d_tiled", "56:9", "N_ds[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (47, "convolution_2d_tiled", "56:24", "N[row_i * pitch + col_i]", "load", (), (6.0, 4.0, "scattered")),
    (47, "convolution_2d_tiled", "58:9", "N_ds[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (47, "convolution_2d_tiled", "65:27", "M[i * MAX_MASK_WIDTH + j]", "load", (), (1.0, 1.0, "broadcast")),
    (47, "convolution_2d_tiled", "65:55", "N_ds[i + ty][j + tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (47, "convolution_2d_tiled", "68:46", "P[row_o * width + col_o]", "store", (), (4.0, 3.0, "scattered")),
    (48, "brent_kung_scan", "79:24", "XY[threadIdx.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (48, "brent_kung_scan", "79:42", "X[i]", "load", (), (4.0, 4.0, "coalesced")),
    (48, "brent_kung_scan", "80:37", "XY[threadIdx.x + blockDim.x]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (48, "brent_kung_scan", "80:68", "X[i + blockDim.x]", "load", (), (4.0, 4.0, "coalesced")),
    (48, "brent_kung_scan", "84:30", "XY[index]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (48, "brent_kung_scan", "84:30", "XY[index]", "store", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (48, "brent_kung_scan", "84:43", "XY[index - stride]", "load", (), (2.0, 1.0, 2, "2-way bank conflict")),
    (48, "brent_kung_scan", "87:24", "Y[i]", "store", (), (4.0, 4.0, "coalesced")),
    (48, "brent_kung_scan", "87:31", "XY[threadIdx.x]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (49, "convolution_rows", "24:49", "c_Kernel[KERNEL_RADIUS - j]", "load", (), (1.0, 1.0, "broadcast")),
    (49, "convolution_rows", "24:79", "src[row + x + j]", "load", (), (4.0, 4.0, "coalesced")),
    (49, "convolution_rows", "25:20", "dst[row + x]", "store", (), (4.0, 4.0, "coalesced")),
    (50, "normalize_hwc", "35:9", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (50, "normalize_hwc", "35:19", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (50, "normalize_hwc", "35:27", "c_mean[c]", "load", (), (3.0, 1.0, "serialized")),
    (50, "normalize_hwc", "35:40", "c_inv_std[c]", "load", (), (3.0, 1.0, "serialized")),
    (51, "normalize_nchw", "45:9", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (51, "normalize_nchw", "45:19", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (51, "normalize_nchw", "45:27", "c_mean[c]", "load", (), (1.0, 1.0, "broadcast")),
    (51, "normalize_nchw", "45:40", "c_inv_std[c]", "load", (), (1.0, 1.0, "broadcast")),
    (
        52,
        "col_sum_atomic",
        "55:35",
        "atomicAdd(&colsum[col], a[row * cols + col])",
        "atomic",
        (),
        (4.0, 4.0, "coalesced"),
    ),
    (52, "col_sum_atomic", "55:59", "a[row * cols + col]", "load", (), (4.0, 4.0, "coalesced")),
    (53, "block_sum_shared_atomic", "64:27", "s_sum", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (53, "block_sum_shared_atomic", "67:16", "atomicAdd(&s_sum, in[i])", "atomic", (), (1.0, 1.0, 1, "same address")),
    (53, "block_sum_shared_atomic", "67:34", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (53, "block_sum_shared_atomic", "69:27", "atomicAdd(total, s_sum)", "atomic", (), (1.0, 1.0, "coalesced")),
    (53, "block_sum_shared_atomic", "69:44", "s_sum", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (54, "histogram_bins", "78:23", "s_hist[t]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (
        54,
        "histogram_bins",
        "81:16",
        "atomicAdd(&s_hist[data[i] % NUM_BINS], 1u)",
        "atomic",
        (),
        ("unknown", "atomicAdd address: index 'data[i] % NUM_BINS': value loaded from memory"),
    ),
    (54, "histogram_bins", "81:34", "data[i]", "load", (), (4.0, 4.0, "coalesced")),
    (54, "histogram_bins", "83:23", "atomicAdd(&hist[t], s_hist[t])", "atomic", (), (4.0, 4.0, "coalesced")),
    (54, "histogram_bins", "83:43", "s_hist[t]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (55, "max_cas", "92:15", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (55, "max_cas", "94:15", "*addr", "load", (), (1.0, 1.0, "broadcast")),
    (
        55,
        "max_cas",
        "96:11",
        "atomicCAS(addr, assumed, __float_as_int(fmaxf(v, __int_as_float(assumed))))",
        "atomic",
        (),
        (1.0, 1.0, "same address"),
    ),
    (56, "vec_scale", "26:15", "reinterpret_cast<const V *>(in)[i]", "load", (), (16.0, 16.0, "coalesced")),
    (56, "vec_scale", "30:9", "reinterpret_cast<V *>(out)[i]", "store", (), (16.0, 16.0, "coalesced")),
    (56, "vec_scale", "33:9", "out[i]", "store", (), (1.0, 1.0, "coalesced")),
    (56, "vec_scale", "33:26", "in[i]", "load", (), (1.0, 1.0, "coalesced")),
    (57, "block_reduce_sum", "53:14", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (57, "block_reduce_sum", "56:9", "warp_sums[warp]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (57, "block_reduce_sum", "59:33", "warp_sums[lane]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (57, "block_reduce_sum", "62:13", "out[blockIdx.x]", "store", (), (1.0, 1.0, "coalesced")),
    (58, "rmsnorm_forward", "77:25", "x[c]", "load", (), (4.0, 4.0, "coalesced")),
    (58, "rmsnorm_forward", "82:9", "s_warp[threadIdx.x >> 5]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (58, "rmsnorm_forward", "87:18", "s_warp[w]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (58, "rmsnorm_forward", "88:9", "s_rstd", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (58, "rmsnorm_forward", "91:21", "s_rstd", "load", (), (1.0, 1.0, 1, "broadcast")),
    (58, "rmsnorm_forward", "93:9", "y[c]", "store", (), (4.0, 4.0, "coalesced")),
    (58, "rmsnorm_forward", "93:16", "x[c]", "load", (), (4.0, 4.0, "coalesced")),
    (58, "rmsnorm_forward", "93:27", "weight[c]", "load", (), (4.0, 4.0, "coalesced")),
    (59, "softmax_online", "106:25", "x[c]", "load", (), (4.0, 4.0, "coalesced")),
    (59, "softmax_online", "120:9", "y[c]", "store", (), (4.0, 4.0, "coalesced")),
    (59, "softmax_online", "120:21", "x[c]", "load", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "142:19", "in[p - plane]", "load", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "142:40", "in[p]", "load", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "144:29", "in[p + plane]", "load", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "145:9", "tile[ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "147:13", "tile[ty][0]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "147:27", "in[p - 1]", "load", (), (1.0, 1.0, "coalesced")),
    (60, "stencil7_3d", "149:13", "tile[ty][SX + 1]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "149:32", "in[p + 1]", "load", (), (1.0, 1.0, "coalesced")),
    (60, "stencil7_3d", "151:13", "tile[0][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "151:27", "in[p - nx]", "load", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "153:13", "tile[SY + 1][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "153:32", "in[p + nx]", "load", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "156:13", "out[p]", "store", (), (4.0, 4.0, "coalesced")),
    (60, "stencil7_3d", "156:39", "tile[ty][tx - 1]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "156:58", "tile[ty][tx + 1]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "156:77", "tile[ty - 1][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (60, "stencil7_3d", "156:96", "tile[ty + 1][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "178:5", "As[0][ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "178:21", "A[row * K + tx]", "load", (), (4.0, 4.0, "coalesced")),
    (61, "sgemm_double_buffer", "179:5", "Bs[0][ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "179:21", "B[ty * N + col]", "load", (), (4.0, 4.0, "coalesced")),
    (61, "sgemm_double_buffer", "183:9", "As[buf ^ 1][ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "183:31", "A[row * K + t + tx]", "load", (), (4.0, 4.0, "coalesced")),
    (61, "sgemm_double_buffer", "184:9", "Bs[buf ^ 1][ty][tx]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "184:31", "B[(t + ty) * N + col]", "load", (), (4.0, 4.0, "coalesced")),
    (61, "sgemm_double_buffer", "187:20", "As[buf][ty][k]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "187:37", "Bs[buf][k][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "193:16", "As[buf][ty][k]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "193:33", "Bs[buf][k][tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (61, "sgemm_double_buffer", "194:5", "C[row * N + col]", "store", (), (4.0, 4.0, "coalesced")),
    (62, "box_filter_ldg", "207:14", "__ldg(&in[i + k])", "load", (), (5.0, 4.0, "offset")),
    (62, "box_filter_ldg", "208:5", "out[i]", "store", (), (4.0, 4.0, "coalesced")),
    (63, "resample_tex", "219:5", "out[y * width + x]", "store", (), (4.0, 4.0, "coalesced")),
    (
        63,
        "resample_tex",
        "219:26",
        "tex2D<float>(tex, u + 0.5f, v + 0.5f)",
        "texture",
        (),
        ("unknown", "tex2D: texture fetches go through the texture path"),
    ),
    (64, "bias_gelu_lambda", "229:37", "row_in[c]", "load", (232,), (4.0, 4.0, "coalesced")),
    (64, "bias_gelu_lambda", "229:49", "bias[c]", "load", (232,), (4.0, 4.0, "coalesced")),
    (64, "bias_gelu_lambda", "230:40", "row_out[c]", "store", (233,), (4.0, 4.0, "coalesced")),
    (65, "copy_vec4_while", "245:9", "reinterpret_cast<float4 *>(out)[i / 4]", "store", (), (16.0, 16.0, "coalesced")),
    (
        65,
        "copy_vec4_while",
        "245:50",
        "reinterpret_cast<const float4 *>(in)[i / 4]",
        "load",
        (),
        (16.0, 16.0, "coalesced"),
    ),
    (65, "copy_vec4_while", "249:9", "out[i]", "store", (), (1.0, 1.0, "coalesced")),
    (65, "copy_vec4_while", "249:18", "in[i]", "load", (), (1.0, 1.0, "coalesced")),
    (66, "cg_block_reduce", "263:14", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (66, "cg_block_reduce", "267:9", "smem[warp.meta_group_rank()]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (66, "cg_block_reduce", "270:59", "smem[warp.thread_rank()]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (66, "cg_block_reduce", "273:13", "out[block.group_index().x]", "store", (), (1.0, 1.0, "coalesced")),
    (67, "half2_add", "282:27", "reinterpret_cast<const __half2 *>(a)[i]", "load", (), (4.0, 4.0, "coalesced")),
    (67, "half2_add", "283:27", "reinterpret_cast<const __half2 *>(b)[i]", "load", (), (4.0, 4.0, "coalesced")),
    (67, "half2_add", "284:9", "reinterpret_cast<__half2 *>(c)[i]", "store", (), (4.0, 4.0, "coalesced")),
    (68, "ballot_compact", "293:32", "in[i]", "load", (), (4.0, 4.0, "coalesced")),
    (68, "ballot_compact", "297:16", "atomicAdd(count, __popc(mask))", "atomic", (), (1.0, 1.0, "coalesced")),
    (
        68,
        "ballot_compact",
        "300:9",
        "out[base + __popc(mask & ((1u << lane) - 1))]",
        "store",
        (),
        ("unknown", "index 'base + __popc(mask & ((1u << lane) - 1))': result of atomicAdd"),
    ),
    (68, "ballot_compact", "300:57", "in[i]", "load", (), ("unknown", "guard `keep` (line 299) not known: value loaded")),
    (69, "tile_iterator_sum", "9:51", "ptr[col]", "load", (19,), (4.0, 4.0, "coalesced")),
    (69, "tile_iterator_sum", "22:5", "out[c]", "store", (), (4.0, 4.0, "coalesced")),
    (70, "softmax_backward_rows", "33:50", "dy_row[c]", "load", (), (4.0, 4.0, "coalesced")),
    (70, "softmax_backward_rows", "33:62", "y_row[c]", "load", (), (4.0, 4.0, "coalesced")),
    (70, "softmax_backward_rows", "35:43", "dx[(size_t)row * cols + c]", "store", (), (4.0, 4.0, "coalesced")),
    (70, "softmax_backward_rows", "35:72", "y_row[c]", "load", (), (4.0, 4.0, "coalesced")),
    (70, "softmax_backward_rows", "35:84", "dy_row[c]", "load", (), (4.0, 4.0, "coalesced")),
    (71, "block_permute", "42:5", "dst[blockIdx.x * blockDim.x + threadIdx.x]", "store", (), (4.0, 4.0, "coalesced")),
    (71, "block_permute", "42:50", "src[from * blockDim.x + threadIdx.x]", "load", (), (4.0, 4.0, "coalesced")),
    (72, "batched_gemv", "53:40", "Ab[(size_t)row * K + k]", "load", (), (32.0, 4.0, "column-major")),
    (72, "batched_gemv", "53:66", "x[(size_t)b * K + k]", "load", (), (1.0, 1.0, "broadcast")),
    (72, "batched_gemv", "54:5", "y[(size_t)b * M + row]", "store", (), (4.0, 4.0, "coalesced")),
    (73, "box_blur_padded", "67:5", "tile[ty + 1][tx + 1]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (73, "box_blur_padded", "67:28", "in[gy * width + gx]", "load", (), (4.0, 4.0, "coalesced")),
    (73, "box_blur_padded", "71:47", "tile[ty + 1 + dy][tx + 1 + dx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (73, "box_blur_padded", "72:5", "out[gy * width + gx]", "store", (), (4.0, 4.0, "coalesced")),
    (74, "copy_half_int4", "78:20", "reinterpret_cast<int4 *>(out)[i]", "store", (), (16.0, 16.0, "coalesced")),
    (74, "copy_half_int4", "78:55", "reinterpret_cast<const int4 *>(in)[i]", "load", (), (16.0, 16.0, "coalesced")),
    (75, "predicated_iterator_sum", "88:54", "ptr[col]", "load", (100,), (4.0, 4.0, "coalesced")),
    (75, "predicated_iterator_sum", "101:21", "out[it.col]", "store", (), (4.0, 4.0, "coalesced")),
    (76, "halo_row", "110:5", "t[tx + 1]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (76, "halo_row", "110:17", "in[gx]", "load", (), (4.0, 4.0, "coalesced")),
    (76, "halo_row", "111:18", "t[0]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (76, "halo_row", "111:25", "in[max(gx - 1, 0)]", "load", (), (1.0, 1.0, "coalesced")),
    (76, "halo_row", "112:19", "t[33]", "store", (), (1.0, 1.0, 1, "conflict-free")),
    (76, "halo_row", "112:27", "in[min(gx + 1, width - 1)]", "load", (), (1.0, 1.0, "coalesced")),
    (76, "halo_row", "114:5", "out[gx]", "store", (), (4.0, 4.0, "coalesced")),
    (76, "halo_row", "114:15", "t[tx]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (76, "halo_row", "114:23", "t[tx + 1]", "load", (), (1.0, 1.0, 1, "conflict-free")),
    (76, "halo_row", "114:35", "t[tx + 2]", "load", (), (1.0, 1.0, 1, "conflict-free")),
]


@pytest.fixture(scope="module")
def findings():
    return all_findings(PUBLISHED, RUNS)


def test_every_access_is_expected(findings):
    assert sorted(findings) == sorted(e[:6] for e in EXPECTED)


def test_at_least_15_kernels():
    assert len({(RUNS[e[0]][0], e[1]) for e in EXPECTED}) >= 15


@pytest.mark.parametrize("case", EXPECTED, ids=lambda e: f"{e[0]}:{e[1]}:{e[2]}:{e[4]}")
def test_access(findings, case):
    *key, expected = case
    assert matches(expected, numbers(findings[tuple(key)]))


def _lint_all(tmp_path, source, **opts):
    """((line, access), finding) of every finding (``_lint`` keeps one per line and access)."""
    src = tmp_path / "k.cu"
    src.write_text(source)
    return [((f.line, f.access), f) for r in lint_file(str(src), Options(**opts), resources=False) for f in r.findings]


def _lint(tmp_path, source, **opts):
    return dict(_lint_all(tmp_path, source, **opts))


ALIGNED = """
__global__ void k(float* out, int off) {
    float* p = out + off;
    if (((unsigned long long)p & 15) == 0) reinterpret_cast<float4*>(p)[threadIdx.x] = make_float4(0, 0, 0, 0);
    else p[threadIdx.x] = 0;
    if ((size_t)p % 8 == 4) out[2 * threadIdx.x] = 1;
    if (((unsigned long long)p & 4095) == 0) out[threadIdx.x] = 2;
}
"""


@pytest.mark.parametrize(
    "off,vec4,scalar,odd",
    [(0, (16.0, "coalesced"), "not executed", "not executed"), (1, "not executed", (5.0, "offset"), (8.0, "strided"))],
)
def test_low_bits_of_a_pointer_come_from_the_allocations_alignment(tmp_path, off, vec4, scalar, odd):
    # lint's buffers are 256-byte aligned: (p & 15) and p % 8 are known; p & 4095 needs the address itself
    got = _lint(tmp_path, ALIGNED, block=(32,), lets={"off": off})

    def summary(f):
        return f.verdict if f.verdict == "not executed" else (f.sectors_per_request, f.verdict)

    assert (summary(got[(4, "store")]), summary(got[(5, "store")]), summary(got[(6, "store")])) == (vec4, scalar, odd)
    f = got[(7, "store")]
    assert f.verdict == "unknown" and "pointer cast to an integer" in f.unknown_reason


HEAD = """
__global__ void k(float* out, const float* in, long long n) {
    long long head = (long long)(((16u - ((unsigned)(unsigned long long)(in + 1) & 15u)) & 15u) / sizeof(float));
    if (head > n) head = n;
    if (threadIdx.x < head) out[threadIdx.x] = in[threadIdx.x];
}
"""


def test_low_bits_through_a_narrowing_cast(tmp_path):
    # (unsigned)(unsigned long long)p & 15: the narrower integer keeps the low bits; in + 1 is 4 bytes past a
    # 256-byte boundary, so the head before the first 16-byte boundary is 3 floats (lanes 0..2: 12 bytes, 1 sector)
    got = _lint(tmp_path, HEAD, block=(32,), lets={"n": 1024})
    f = got[(5, "load")]
    assert (f.active_lanes, f.sectors_per_request, f.unknown_reason) == (3, 1.0, None)


PTX = """
__global__ void k(const float* in, float* out) {
    float a, b;
    asm volatile("ld.global.nc.v2.f32 {%0, %1}, [%2+8];" : "=f"(a), "=f"(b) : "l"(in + 4 * threadIdx.x));
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(a) : "l"(in + threadIdx.x));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(threadIdx.x * 16), "l"(in + 4 * threadIdx.x));
    asm volatile("{\\n\\t.reg .f32 t;\\n\\tld.global.f32 t, [%1];\\n\\t@%2 st.global.f32 [%0+4], t;\\n\\t}"
                 :: "l"(out + threadIdx.x), "l"(in + 2 * threadIdx.x), "r"(1));
    asm volatile("{ .reg .u64 p; add.u64 p, %0, 4; st.global.f32 [p], %1; }" :: "l"(out), "f"(a));
    out[threadIdx.x] = a + b;
}
"""


def test_ptx_loads_are_modeled_where_the_instruction_says_what_it_reads(tmp_path):
    got = _lint(tmp_path, PTX, block=(32,))
    # 8 bytes at in + 16 t + 8: 32 lanes 16 bytes apart -> 512 bytes spanned, 16 sectors for 256 bytes (ideal 8)
    f = got[(4, "load")]
    assert (f.element_bytes, f.sectors_per_request, f.ideal_sectors_per_request, f.verdict) == (8, 16.0, 8.0, "strided")
    # ld.shared through a global pointer, cp.async: not what lint models; the instruction is named
    assert got[(5, "load")].unknown_reason == (
        "inline PTX `ld.shared.f32`: its state space is not the pointer's (global); lint does not model memory "
        "accesses written in PTX"
    )
    assert got[(6, "load")].unknown_reason.startswith("inline PTX `cp.async.ca.shared.global`: lint does not model")
    # two instructions in one statement (a register block, a predicate): each is its access; out + t + 1 float ->
    # bytes 4..131, 5 sectors (offset); in + 2 t -> 8 sectors (strided)
    assert (got[(8, "store")].sectors_per_request, got[(8, "store")].verdict) == (5.0, "offset")
    assert (got[(8, "load")].sectors_per_request, got[(8, "load")].verdict) == (8.0, "strided")
    # an address the PTX computes from a pointer operand: unknown, and the reason says so
    assert got[(9, "store")].unknown_reason == (
        "inline PTX `st.global.f32`: its address is computed in the PTX (not modeled)"
    )


def test_a_locals_address_is_not_a_memory_access(tmp_path):
    got = _lint(
        tmp_path,
        "__global__ void k(const float4* in4, float* out) {\n"
        "    float4 v = in4[threadIdx.x];\n"
        "    const float* f = reinterpret_cast<const float*>(&v);\n"
        "    out[threadIdx.x] = f[0] + f[3];\n}\n",
        block=(32,),
    )
    assert sorted(got) == [(2, "load"), (4, "store")]


TAIL = """
__global__ void k(const float* in, float* out, int n) {
    const float* p = in + threadIdx.x;
    float acc = 0.f;
    int j = 0;
    for (; j + 4 <= n; j += 4, p += 3) acc += p[0];
    for (; j < n; ++j, p += blockDim.x) acc += p[0];
    out[threadIdx.x] = acc;
}
"""


def test_variables_only_a_long_loops_step_changes_are_known_after_it(tmp_path):
    # n = 1002: 250 iterations of the first loop (too long to run its body), p ends at in + t + 750 -> byte 3000,
    # 24 past a sector: the tail's p[0] takes 5 sectors (ideal 4)
    got = _lint(tmp_path, TAIL, block=(32,), lets={"n": 1002})
    assert (got[(6, "load")].sectors_per_request, got[(6, "load")].verdict) == (4.0, "coalesced")
    assert (got[(7, "load")].sectors_per_request, got[(7, "load")].verdict) == (5.0, "offset")
    # the body changes p too: p is not known after the loop
    got = _lint(tmp_path, TAIL.replace("acc += p[0];\n    for", "acc += *p++;\n    for"), block=(32,), lets={"n": 1002})
    assert got[(7, "load")].unknown_reason == "p after the loop at line 6"


BODY_STEPS = """
__global__ void k(const float* in, float* out, int n) {
    __shared__ float buf2[2][64];
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    const int step = gridDim.x * blockDim.x * 4;
    int b = 0;
    while (i + 3 < n) {
        buf2[b][threadIdx.x] = in[i];
        b ^= 1;
        i += step;
    }
    for (; i < n; ++i) out[i] = in[i];
    out[threadIdx.x] = buf2[b][(threadIdx.x * 2) % 64];
}
"""


def test_a_long_loops_own_step_statements_are_run_to_its_end(tmp_path):
    # n = 255 * 4096 + 2, 4 x 256 threads, step 4096: every thread runs 255 iterations; thread 0 leaves the while
    # loop at i = 255 * 4096 (i + 3 >= n), the others past n: the tail is lane 0 alone, 1 sector. b toggled 255 times
    # -> 1: buf2[1][2t % 64], words 64 + 0, 2, .., 62 -> two words per even bank, 2-way
    got = _lint(tmp_path, BODY_STEPS, block=(256,), lets={"n": 255 * 4096 + 2})
    f = got[(12, "store")]
    assert (f.sectors_per_request, f.active_lanes, f.verdict) == (1.0, 1, "coalesced")
    f = got[(13, "load")]
    assert (f.wavefronts_per_request, f.conflict_ways) == (2.0, 2)
    # a body statement that reads what the body computes is no step: i unknown after the loop
    got = _lint(tmp_path, BODY_STEPS.replace("i += step;", "i += step + (int)in[i];"), block=(256,),
                lets={"n": 255 * 4096 + 2})
    assert got[(12, "store")].unknown_reason == "index 'i': i after the loop at line 7"
    # an iteration that may `continue` past the toggle: b is not a step, unknown after the loop
    got = _lint(tmp_path, BODY_STEPS.replace("b ^= 1;", "if (i == 8) continue; b ^= 1;"), block=(256,),
                lets={"n": 255 * 4096 + 2})
    assert got[(13, "load")].unknown_reason.startswith("index 'b': b after the loop at line 7")


def test_do_while_loops_and_comma_steps_are_run_to_their_end(tmp_path):
    src = (
        "__global__ void k(float* a, int n) {\n"
        "    int i = threadIdx.x, j = 0, m = threadIdx.x;\n"
        "    do { a[i] = 0; i += 32; } while (i < n);\n"
        "    a[i] = 1;\n"
        "    while (m < n) { a[m] = 2; m += 64, j++; }\n"
        "    a[j + threadIdx.x] = 3;\n}\n"
    )
    got = _lint(tmp_path, src, block=(32,), lets={"n": 4000})
    # lane t leaves the do-while at the first t + 32 k >= 4000: floats 4000..4031, 128-byte aligned -> 4 sectors
    assert (got[(4, "store")].sectors_per_request, got[(4, "store")].verdict) == (4.0, "coalesced")
    # m += 64, j++: ceil((4000 - t) / 64) = 63 iterations for every lane: a[63 + t], bytes 252..379 -> 5 sectors
    assert (got[(6, "store")].sectors_per_request, got[(6, "store")].verdict) == (5.0, "offset")


def test_what_a_lambda_assigns_in_a_long_loop_is_not_run_on_as_its_step(tmp_path):
    src = (
        "__global__ void k(float* a, int n) {\n"
        "    int i = threadIdx.x;\n"
        "    auto skip = [&]() { i += 32; };\n"
        "    for (; i < n; i += 32) { a[i] = 0; skip(); }\n"
        "    a[i] = 1;\n}\n"
    )
    # the lambda steps i too: running on the loop's own step alone would put i at the wrong end
    got = _lint(tmp_path, src, block=(32,), lets={"n": 4000})
    assert got[(5, "store")].unknown_reason == "index 'i': i after the loop at line 4"


def test_a_methods_lambda_reaches_its_object(tmp_path):
    got = _lint_all(
        tmp_path,
        "struct S { float* p; int s;\n"
        "  __device__ void run() { auto f = [this](int i) { p[s * i] = 0; }; f(threadIdx.x); }\n"
        "  __device__ void run2() { auto f = [=](int i) { p[i] = 0; }; f(threadIdx.x); } };\n"
        "__global__ void k(S o) { o.run(); o.run2(); }\n",
        block=(32,),
        lets={"o.s": 2},
    )
    # [this]: p[2 t] -> 8 sectors, strided; [=] captures this too: p[t] -> 4
    assert [(line, f.sectors_per_request, f.verdict) for (line, _), f in got] == [(2, 8.0, "strided"), (3, 4.0, "coalesced")]


def test_an_argument_left_out_takes_the_parameters_default(tmp_path):
    got = _lint(
        tmp_path,
        "__device__ int idx(int i, int m = 2) { return i * m; }\n"
        "__global__ void k(float* a) {\n"
        "    a[idx(threadIdx.x)] = 0;\n"
        "    auto f = [](int i, int m = 3) { return i * m; };\n"
        "    a[f(threadIdx.x)] = 1;\n}\n",
        block=(32,),
    )
    # a[2 t]: 8 sectors (ideal 4); a[3 t]: 12
    assert (got[(3, "store")].sectors_per_request, got[(5, "store")].sectors_per_request) == (8.0, 12.0)


CONSTRUCTORS = """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
struct P { unsigned x, y; __device__ P(unsigned a, unsigned b = 1) : x(a), y(b * 2) { x += 1; } };
__global__ void k(float* o) {
    P p(threadIdx.x);
    o[p.x] = 0;
    P q = P(threadIdx.x, 3);
    o[q.y * threadIdx.x] = 1;
    dim3 d(threadIdx.x, 2);
    o[d.x * d.y] = 2;
    cg::thread_block b = cg::this_thread_block();
    o[b.group_index().x * 32 + b.thread_rank()] = 3;
}
"""


def test_a_constructor_of_the_file_builds_the_struct(tmp_path):
    got = _lint(tmp_path, CONSTRUCTORS, block=(32,), grid=(1, 1, 1))
    # p.x = t + 1 (initializer, then the body): bytes 4..131 -> 5 sectors, offset; q.y = 6: o[6 t] -> 24 sectors
    assert (got[(7, "store")].sectors_per_request, got[(7, "store")].verdict) == (5.0, "offset")
    assert (got[(9, "store")].sectors_per_request, got[(9, "store")].verdict) == (24.0, "strided")
    # dim3(t, 2): o[2 t] -> 8; a member of a struct a call returns (group_index().x = blockIdx.x = 0): o[t] -> 4
    assert (got[(11, "store")].sectors_per_request, got[(13, "store")].sectors_per_request) == (8.0, 4.0)


def test_special_registers_read_by_inline_ptx_have_their_values(tmp_path):
    got = _lint(
        tmp_path,
        "__device__ unsigned lane_id() { unsigned r; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r)); return r; }\n"
        "__global__ void k(float* out, const float* in) {\n"
        "    unsigned lt, tx;\n"
        "    asm(\"mov.u32 %0, %%lanemask_lt;\" : \"=r\"(lt));\n"
        "    asm(\"mov.u32 %0, %%tid.x;\" : \"=r\"(tx));\n"
        "    out[(threadIdx.x / 32) * 64 + 2 * lane_id()] = in[__popc(lt) + tx];\n}\n",
        block=(64,),
    )
    # lane id: out[2 lane] of warp 0 -> 8 sectors (ideal 4); __popc(lanemask_lt) = lane, + tid.x: in[2 t] -> 8
    assert (got[(6, "store")].sectors_per_request, got[(6, "store")].verdict) == (8.0, "strided")
    assert (got[(6, "load")].sectors_per_request, got[(6, "load")].verdict) == (8.0, "strided")


def test_warp_votes_of_known_predicates_are_bit_masks(tmp_path):
    got = _lint(
        tmp_path,
        "__global__ void k(float* out, int n) {\n"
        "    const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;\n"
        "    const unsigned m = __ballot_sync(0xffffffffu, (lane & 1) == 0);\n"
        "    if (lane % 2 == 0) out[__popc(m & ((1u << lane) - 1))] = 1.0f;\n"
        "    if (i < n) out[64 + __popc(__activemask() & ((1u << lane) - 1))] = 2.0f;\n"
        "    out[128 + __all_sync(0xffffffffu, i < n) + lane] = 3.0f;\n"
        "    out[256 + __any_sync(0xffffffffu, i < n) + lane] = 4.0f;\n}\n",
        block=(32,),
        lets={"n": 20},
    )
    # the even lanes' ranks among them: out[0..15], 64 bytes -> 2 sectors; lanes 0..19 active: out[64..83] -> 3;
    # not all lanes below n: out[128 + lane] -> 4 sectors; some are: out[257 + lane] -> 5
    assert [got[(line, "store")].sectors_per_request for line in (4, 5, 6, 7)] == [2.0, 3.0, 4.0, 5.0]


def test_member_initializers_and_brace_lists_give_a_structs_members(tmp_path):
    got = _lint(
        tmp_path,
        "struct Cfg { int stride = 2; int off = 1; float scale = 0.5f; };\n"
        "__global__ void k(float* o) {\n"
        "    Cfg c;\n"
        "    o[c.stride * threadIdx.x + c.off] = c.scale;\n"
        "    Cfg d{4};\n"
        "    o[d.stride * threadIdx.x + d.off] = 2;\n}\n",
        block=(32,),
    )
    # o[2 t + 1]: bytes 4..255 -> 8 sectors; d{4}: stride 4, off from its initializer: o[4 t + 1] -> 16
    assert (got[(4, "store")].sectors_per_request, got[(6, "store")].sectors_per_request) == (8.0, 16.0)


def test_a_row_of_a_multidimensional_array_is_not_an_access(tmp_path):
    got = _lint_all(
        tmp_path,
        "__global__ void k(float* out, const int* sel) {\n"
        "    __shared__ float t[2][4][32];\n"
        "    out[threadIdx.x] = t[sel[0]][1][threadIdx.x];\n}\n",
        block=(32,),
    )
    # one unknown load (the element), not one per subscript
    assert [(f.text, f.access, f.verdict) for (line, _), f in got if line == 3] == [
        ("out[threadIdx.x]", "store", "coalesced"),
        ("t[sel[0]][1][threadIdx.x]", "load", "unknown"),
        ("sel[0]", "load", "broadcast"),
    ]


def test_scalar_device_and_shared_variables_are_memory(tmp_path):
    got = _lint(
        tmp_path,
        "__device__ int g_count;\n"
        "__global__ void k(int* out) {\n"
        "    __shared__ int s_total;\n"
        "    if (threadIdx.x == 0) s_total = g_count;\n"
        "    out[threadIdx.x] = s_total;\n}\n",
        block=(64,),
    )
    assert (got[(4, "load")].space, got[(4, "load")].requests, got[(4, "load")].sectors_per_request) == (
        "global",
        1,
        1.0,
    )
    assert (got[(4, "store")].space, got[(4, "store")].active_lanes) == ("shared", 1)
    f = got[(5, "load")]
    assert (f.space, f.wavefronts_per_request, f.verdict) == ("shared", 1.0, "broadcast")


REFERENCES = """
__device__ void next_row(const float*& p, int ld) { p += ld; }
__device__ void bump(float& x) { x += 1.0f; }
__device__ void idx2(int& r, int& c) { r = threadIdx.x / 8; c = threadIdx.x % 8; }
__global__ void k(const float* in, float* out) {
    __shared__ float s[64];
    const float* p = in + threadIdx.x;
    next_row(p, 1);
    out[threadIdx.x] = *p;
    bump(s[2 * threadIdx.x]);
    int r, c;
    idx2(r, c);
    out[r * 1024 + c] = 1;
}
"""


def test_what_a_helper_does_to_a_reference_parameter_the_caller_sees(tmp_path):
    got = _lint(tmp_path, REFERENCES, block=(32,))
    # p advanced by one float in the helper: bytes 4..131 -> 5 sectors, offset
    assert (got[(9, "load")].sectors_per_request, got[(9, "load")].verdict) == (5.0, "offset")
    # a reference to shared memory: x += 1 in the helper loads and stores s[2t] (2-way), reported at the helper's line
    assert [(f.access, f.space, f.conflict_ways, f.call_lines) for key, f in sorted(got.items()) if key[0] == 3] == [
        ("load", "shared", 2, [10]),
        ("store", "shared", 2, [10]),
    ]
    # r = t / 8, c = t % 8 through references: 4 rows of 8 floats -> 4 sectors
    assert (got[(13, "store")].sectors_per_request, got[(13, "store")].verdict) == (4.0, "coalesced")


LAMBDAS = """
template <class F> __device__ void each(F f, int i) { f(i); }
__global__ void k(float* out, int s) {
    int t = threadIdx.x;
    auto twice = [](int i) { return 2 * i; };
    out[twice(t)] = 0.0f;
    int stride = 2;
    auto by_ref = [&](int i) { return i * stride; };
    auto by_copy = [=](int i) { return i * stride; };
    stride = 3;
    out[by_ref(t)] = 1.0f;
    out[by_copy(t)] = 2.0f;
    int count = 0;
    auto bump = [&count]() { count += 32; };
    bump();
    out[count + t] = 3.0f;
    [&](int i) { out[s * i] = 4.0f; }(t);
    each([=](int i) { out[i + 1] = 5.0f; }, t);
    auto init = [m = 2 * s](int i) { return m * i; };
    out[init(t)] = 6.0f;
}
"""


def test_a_lambda_runs_at_its_call_with_its_captures(tmp_path):
    got = _lint(tmp_path, LAMBDAS, block=(32,), lets={"s": 2})
    # no captures: out[2 t], 8 sectors (ideal 4)
    assert (got[(6, "store")].sectors_per_request, got[(6, "store")].verdict) == (8.0, "strided")
    # [&] reads stride at the call (3): 12 sectors; [=] copied it when made (2): 8
    assert (got[(11, "store")].sectors_per_request, got[(12, "store")].sectors_per_request) == (12.0, 8.0)
    # [&count]: the lambda's += 32 is the caller's: floats 32..63, 128-byte aligned -> 4 sectors
    assert (got[(16, "store")].sectors_per_request, got[(16, "store")].verdict) == (4.0, "coalesced")
    # called where it is made, s = 2: 8 sectors; passed to a helper and called there: floats 1..32 -> 5, offset
    assert (got[(17, "store")].sectors_per_request, got[(17, "store")].call_lines) == (8.0, [17])
    assert (got[(18, "store")].sectors_per_request, got[(18, "store")].verdict) == (5.0, "offset")
    assert got[(20, "store")].unknown_reason == "index 'init(t)': m: a lambda's init-capture (not followed)"


SHUFFLES = """
__global__ void k(const int* starts, float* out) {
    int lane = threadIdx.x & 31;
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int base = 0;
    if (lane == 0) base = row * 64;
    base = __shfl_sync(0xffffffff, base, 0);
    out[base + lane + 32] = 1.0f;
    out[__shfl_down_sync(0xffffffff, lane, 16)] = 3.0f;
    out[__shfl_sync(0xffffffff, starts[row], 0) + lane] = 4.0f;
}
"""


def test_integer_shuffles_move_values_between_lanes(tmp_path):
    got = _lint(tmp_path, SHUFFLES, block=(64,))
    # lane 0's base (row 0: 0) to every lane: floats 32..63 -> 4 sectors, coalesced
    assert (got[(8, "store")].sectors_per_request, got[(8, "store")].verdict) == (4.0, "coalesced")
    # lanes 0-15 read lanes 16-31, lanes 16-31 keep their own: 16 distinct floats at bytes 64..127 -> 2 sectors
    assert (got[(9, "store")].sectors_per_request, got[(9, "store")].active_lanes) == (2.0, 32)
    # a loaded value shuffled stays unknown
    assert got[(10, "store")].unknown_reason.startswith("index '__shfl_sync(0xffffffff, starts[row], 0) + lane'")


def test_a_counted_loops_step_variables_jump_to_their_end_values(tmp_path):
    # k = 0, 3, .., 99999: 33334 iterations (more than are stepped through), k ends at 100002 and p at
    # in + t + 66668 (byte 266672 + 4t, 16 past a sector): both accesses after the loop take 5 sectors (ideal 4)
    got = _lint(
        tmp_path,
        "__global__ void k(const float* in, float* out, int n) {\n"
        "    const float* p = in + threadIdx.x;\n"
        "    int k;\n"
        "    for (k = 0; k < n; k += 3, p += 2) out[threadIdx.x] += p[0];\n"
        "    out[k + threadIdx.x] = p[0];\n}\n",
        block=(32,),
        lets={"n": 1000},
    )
    assert [(got[(5, a)].sectors_per_request, got[(5, a)].verdict) for a in ("load", "store")] == [(5.0, "offset")] * 2


def test_const_globals_are_values_and_the_others_memory(tmp_path):
    got = _lint(
        tmp_path,
        "__device__ const int TILE_W = 32;\n"
        "__constant__ const int STRIDE = 2;\n"
        "__constant__ int runtime_n;\n"
        "__global__ void k(float* out) { out[threadIdx.x * STRIDE + TILE_W] = runtime_n; }\n",
        block=(32,),
    )
    assert (got[(4, "store")].sectors_per_request, got[(4, "store")].verdict) == (8.0, "strided")
    # the __constant__ scalar: one word for every lane -> 1 read, broadcast
    load = got[(4, "load")]
    assert (load.space, load.reads_per_request, load.ideal_reads_per_request, load.verdict) == (
        "constant",
        1.0,
        1.0,
        "broadcast",
    )


CONSTANT_TABLES = """
__constant__ float taps[64];
__constant__ unsigned char lut[256];
__global__ void k(float* out, const unsigned char* in) {
    int t = threadIdx.x;
    out[t] = taps[t % 64];
    out[t + 32] = taps[t / 8];
    out[t + 64] = lut[t];
    out[t + 96] = lut[5];
    out[t + 128] = taps[in[t]];
}
"""


def test_constant_loads_are_served_per_distinct_word(tmp_path):
    got = {line: f for (line, _), f in _lint_all(tmp_path, CONSTANT_TABLES, block=(32,)) if f.space == "constant"}
    per_lane = got[6]
    # 32 lanes, 32 words: 32 reads in turn where a broadcast takes 1; in global memory floats 0..31: 4 sectors
    assert (per_lane.reads_per_request, per_lane.verdict, per_lane.rule) == (32.0, "serialized", "constant-serialized")
    assert per_lane.fix_predicted == dict(reads_per_request=1.0, sectors_per_request=4.0, ideal_sectors_per_request=4.0)
    assert per_lane.fix.startswith("index __constant__ memory with a value the whole warp shares")
    # t / 8: 4 words -> 4 reads
    assert (got[7].reads_per_request, got[7].verdict) == (4.0, "serialized")
    # bytes 0..31 are 8 words if the symbol is 4-byte aligned, 9 if not: lint does not know which
    assert got[8].unknown_reason.startswith("__constant__ unsigned char array: its distinct 4-byte words (8 or 9)")
    # one byte for the whole warp: one word at any alignment
    assert (got[9].reads_per_request, got[9].verdict) == (1.0, "broadcast")
    # an index loaded from memory stays unknown
    assert got[10].unknown_reason.startswith("index 'in[t]': value loaded from memory")


ATOMICS = """
__global__ void k(unsigned int* hist, float* sum) {
    __shared__ unsigned int s[256];
    int t = threadIdx.x;
    atomicAdd(&s[t / 4], 1u);
    atomicAdd(&s[2 * t], 1u);
    atomicAdd(sum, 1.0f);
    atomicAdd(&hist[t * 8], 1u);
    atomicAdd(&s[hist[t]], 1u);
    atomicAdd_block(&hist[t], 1u) + atomicCAS_system(&hist[2 * t], 0u, 1u);
}
"""


def test_atomics_with_known_addresses_have_the_numbers_of_a_store(tmp_path):
    got = {line: f for (line, access), f in _lint(tmp_path, ATOMICS, block=(32,)).items() if access == "atomic"}
    # 8 words, 4 lanes on each: 1 wavefront as a store; the 4 updates of one word are serialized, not modelled
    quarter = got[5]
    assert (quarter.wavefronts_per_request, quarter.conflict_ways, quarter.verdict) == (1.0, 1, "conflict-free")
    assert quarter.not_modelled.startswith("up to 4 lanes of the warp update the same address: the shared-memory")
    # words 0, 2, .., 62: two words in each even bank -> 2 wavefronts, 2-way; no address shared
    assert (got[6].wavefronts_per_request, got[6].conflict_ways, got[6].rule, got[6].not_modelled) == (
        2.0,
        2,
        "bank-conflict",
        None,
    )
    # every lane on sum[0]: 1 sector, same address, and L2's serialization named
    assert (got[7].sectors_per_request, got[7].verdict, got[7].rule) == (1.0, "same address", "ok")
    assert got[7].not_modelled.startswith("up to 32 lanes of the warp update the same address: L2 applies them")
    # uints 32 bytes apart: 32 sectors (ideal 4), strided
    assert (got[8].sectors_per_request, got[8].ideal_sectors_per_request, got[8].verdict) == (32.0, 4.0, "strided")
    assert got[9].unknown_reason == "atomicAdd address: index 'hist[t]': value loaded from memory (hist[t])"
    # the _block and _system scopes are atomics too: uints 0..31 -> 4 sectors; 0, 2, .., 62 -> 8 sectors (ideal 4)
    scoped = sorted(
        (f.column, f.sectors_per_request, f.ideal_sectors_per_request)
        for (line, access), f in _lint_all(tmp_path, ATOMICS, block=(32,))
        if line == 10
    )
    assert scoped == [(5, 4.0, 4.0), (37, 8.0, 4.0)]


CONSTANT_VALUES = """
struct Inner { int a; short b; };
struct Params { float scale; int width; Inner in; };
__constant__ Params c_params;
__constant__ int c_n;
__constant__ int c_offsets[4];
__global__ void k(float* out, const float* in) {
    int t = threadIdx.x;
    if (t < c_n) out[t * c_params.width] = c_params.scale;
    out[t + c_params.in.b] = in[t + c_offsets[1]];
}
"""


def test_constant_integers_the_host_writes_are_given_with_let(tmp_path):
    lets = {"c_n": 1000, "c_params.width": 2, "c_params.in.b": 3, "c_offsets[1]": 8}
    got = _lint(tmp_path, CONSTANT_VALUES, block=(32,), lets=lets)
    # t * 2: 32 floats 8 bytes apart -> 8 sectors, strided; t + 3 -> bytes 12..139: 5 sectors, offset; t + 8: 4
    assert (got[(9, "store")].sectors_per_request, got[(9, "store")].verdict) == (8.0, "strided")
    assert (got[(10, "store")].sectors_per_request, got[(10, "store")].verdict) == (5.0, "offset")
    assert [
        (f.space, f.sectors_per_request, f.reads_per_request)
        for (line, access), f in _lint_all(tmp_path, CONSTANT_VALUES, block=(32,), lets=lets)
        if line == 10 and access == "load"
    ] == [("constant", None, 1.0), ("global", 4.0, None), ("constant", None, 1.0)]
    # not given: the reason names the --let
    got = _lint(tmp_path, CONSTANT_VALUES, block=(32,), lets={"c_n": 1000})
    assert got[(10, "store")].unknown_reason == (
        "index 't + c_params.in.b': value loaded from memory (__constant__ c_params.in.b: give --let c_params.in.b=VALUE)"
    )
    with pytest.raises(
        UsageError,
        match="--let c_m: no kernel of the file has a parameter of that name, nor is it a __constant__ variable",
    ):
        _lint(tmp_path, CONSTANT_VALUES, block=(32,), lets={"c_m": 1})


def test_variables_in_a_namespace_are_memory_too(tmp_path):
    got = _lint_all(
        tmp_path,
        "namespace cfg { __constant__ float taps[8]; __device__ float table[64]; }\n"
        "__global__ void k(float* out) { out[threadIdx.x] = cfg::taps[1] + cfg::table[2 * threadIdx.x]; }\n",
        block=(32,),
    )
    # taps[1]: one word, broadcast; table[2t]: floats 0, 2, .., 62 -> 8 sectors (ideal 4), strided
    assert [(f.text, f.space, f.reads_per_request, f.sectors_per_request, f.verdict) for _, f in got] == [
        ("out[threadIdx.x]", "global", None, 4.0, "coalesced"),
        ("cfg::taps[1]", "constant", 1.0, None, "broadcast"),
        ("cfg::table[2 * threadIdx.x]", "global", None, 8.0, "strided"),
    ]

"""CUDA C++ -> a clang AST through libclang (the ``lint`` extra), with a small prelude instead of the CUDA headers.

The file is parsed as CUDA (``-x cuda --cuda-host-only -nocudainc -nostdinc``), so the preprocessor, templates
and ``constexpr`` are clang's own. The prelude declares what the CUDA headers would: the execution-space
attributes, ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, the vector types with their alignment and the
device functions kernels call. Headers the file includes that are not found are read as empty (and reported),
so that a kernel file with a host harness still parses.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass, field

from ..errors import UsageError

PRELUDE_PATH = "/gpumemlab-lint/prelude.cuh"
STUB_DIR = "/gpumemlab-lint/include"
MAX_REPARSE = 24  # missing headers stubbed one after another

_VECTORS = {"char": ("char", 1), "uchar": ("unsigned char", 1), "short": ("short", 2), "ushort": ("unsigned short", 2),
            "int": ("int", 4), "uint": ("unsigned int", 4), "long": ("long", 8), "ulong": ("unsigned long", 8),
            "longlong": ("long long", 8), "ulonglong": ("unsigned long long", 8), "float": ("float", 4),
            "double": ("double", 8)}
_MATH1 = ("sqrt", "rsqrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
          "asin", "acos", "atan", "sinh", "cosh", "tanh", "fabs", "floor", "ceil", "round", "trunc", "rint", "cbrt",
          "erf", "erfc", "lgamma", "tgamma", "rcbrt", "sinpi", "cospi")
_MATH2 = ("pow", "fmin", "fmax", "fmod", "atan2", "hypot", "copysign", "fdim", "remainder")


def _vector_decls() -> str:
    out = []
    for prefix, (scalar, size) in _VECTORS.items():
        for n in (1, 2, 3, 4):
            align = size * n if n in (1, 2, 4) and size * n <= 16 else size
            members = ", ".join("xyzw"[:n])
            params = ", ".join(f"{scalar} {m}" for m in "xyzw"[:n])
            out.append(f"struct __attribute__((aligned({align}))) {prefix}{n} {{ {scalar} {members}; }};")
            out.append(f"__host__ __device__ {prefix}{n} make_{prefix}{n}({params});")
    return "\n".join(out)


def _math_decls() -> str:
    out = []
    for f in _MATH1:
        out += [f"__host__ __device__ float {f}f(float);", f"__host__ __device__ double {f}(double);"]
    for f in _MATH2:
        out += [f"__host__ __device__ float {f}f(float, float);", f"__host__ __device__ double {f}(double, double);"]
    return "\n".join(out)


def _atomic_decls() -> str:
    """The atomics in every scope (atomicAdd, atomicAdd_block, atomicAdd_system, ...)."""
    out = []
    for scope in ("", "_block", "_system"):
        out += [f"template <class T, class U> __device__ T atomic{op}{scope}(T*, U);"
                for op in ("Add", "Sub", "Max", "Min", "Exch", "And", "Or", "Xor", "Inc", "Dec")]
        out.append(f"template <class T, class U, class V> __device__ T atomicCAS{scope}(T*, U, V);")
    return "\n".join(out)


PRELUDE = r"""
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define __CUDACC__ 1
#define NULL 0
#define INFINITY __builtin_huge_valf()
#define NAN __builtin_nanf("")
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VAL __builtin_huge_val()
#define FLT_MAX 3.40282347e+38F
#define FLT_MIN 1.17549435e-38F
#define FLT_EPSILON 1.19209290e-7F
#define DBL_MAX 1.7976931348623157e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#define CHAR_BIT 8
#define INT_MAX 2147483647
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 4294967295U
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-LLONG_MAX - 1LL)
#define ULLONG_MAX 18446744073709551615ULL
#define M_PI 3.14159265358979323846
#define CUDART_INF_F __builtin_huge_valf()
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef signed char int8_t; typedef unsigned char uint8_t; typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t; typedef long int64_t; typedef unsigned long uint64_t;
typedef unsigned int uint; typedef unsigned short ushort; typedef unsigned char uchar; typedef unsigned long ulong;
""" + _vector_decls() + r"""
struct dim3 { unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
  __host__ __device__ dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {} };
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;
""" + _math_decls() + r"""
__device__ unsigned long long __cvta_generic_to_shared(const void*);
struct __attribute__((aligned(2))) __half { unsigned short __x; };
struct __attribute__((aligned(4))) __half2 { __half x, y; };
struct __attribute__((aligned(2))) __nv_bfloat16 { unsigned short __x; };
typedef __half half; typedef __half2 half2;
__host__ __device__ __half __float2half(float); __host__ __device__ float __half2float(__half);
__device__ __half __hadd(__half, __half); __device__ __half __hmul(__half, __half);
__device__ __half2 __hadd2(__half2, __half2); __device__ __half2 __hmul2(__half2, __half2);
__device__ __half2 __floats2half2_rn(float, float); __device__ float2 __half22float2(__half2);
__device__ __half2 __float2half2_rn(float); __device__ __half2 __halves2half2(__half, __half);
__device__ float __low2float(__half2); __device__ float __high2float(__half2); __device__ __half __hmax(__half, __half);
__device__ __half __float2half_rn(float); __device__ __half2 __hfma2(__half2, __half2, __half2);
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __nv_bfloat16 nv_bfloat16; typedef __nv_bfloat162 nv_bfloat162;
__host__ __device__ float __bfloat162float(__nv_bfloat16); __host__ __device__ __nv_bfloat16 __float2bfloat16(float);
__host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float); __device__ float2 __bfloat1622float2(__nv_bfloat162);
__device__ __nv_bfloat162 __floats2bfloat162_rn(float, float); __device__ __nv_bfloat16 __hadd(__nv_bfloat16, __nv_bfloat16);
__device__ __nv_bfloat16 __hmul(__nv_bfloat16, __nv_bfloat16); __device__ float __low2float(__nv_bfloat162);
__device__ float __high2float(__nv_bfloat162);
typedef unsigned long long cudaTextureObject_t; typedef unsigned long long cudaSurfaceObject_t;
enum cudaTextureReadMode { cudaReadModeElementType, cudaReadModeNormalizedFloat };
template <class T, int D = 1, int M = 0> struct texture { int normalized; int filterMode; int addressMode[3]; };
template <class T> __device__ T tex1Dfetch(cudaTextureObject_t, int);
template <class T> __device__ T tex1D(cudaTextureObject_t, float);
template <class T> __device__ T tex2D(cudaTextureObject_t, float, float);
template <class T> __device__ T tex3D(cudaTextureObject_t, float, float, float);
template <class T> __device__ T tex2Dgather(cudaTextureObject_t, float, float, int = 0);
template <class T> __device__ T tex2DLod(cudaTextureObject_t, float, float, float);
template <class T, int D, int M> __device__ T tex1Dfetch(texture<T, D, M>, int);
template <class T, int D, int M> __device__ T tex1D(texture<T, D, M>, float);
template <class T, int D, int M> __device__ T tex2D(texture<T, D, M>, float, float);
template <class T> __device__ T tex1DLod(cudaTextureObject_t, float, float);
template <class T> __device__ T tex3DLod(cudaTextureObject_t, float, float, float, float);
template <class T> __device__ T tex1DLayered(cudaTextureObject_t, float, int);
template <class T> __device__ T tex2DLayered(cudaTextureObject_t, float, float, int);
template <class T> __device__ T tex2DGrad(cudaTextureObject_t, float, float, float2, float2);
enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero, cudaBoundaryModeClamp, cudaBoundaryModeTrap };
template <class T> __device__ void surf1Dwrite(T, cudaSurfaceObject_t, int, cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ void surf2Dwrite(T, cudaSurfaceObject_t, int, int,
                                               cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ void surf3Dwrite(T, cudaSurfaceObject_t, int, int, int,
                                               cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ T surf1Dread(cudaSurfaceObject_t, int, cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ void surf1Dread(T*, cudaSurfaceObject_t, int, cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ T surf2Dread(cudaSurfaceObject_t, int, int, cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ void surf2Dread(T*, cudaSurfaceObject_t, int, int,
                                              cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
template <class T> __device__ T surf3Dread(cudaSurfaceObject_t, int, int, int,
                                           cudaSurfaceBoundaryMode = cudaBoundaryModeTrap);
__device__ void __syncthreads(); __device__ int __syncthreads_or(int); __device__ int __syncthreads_and(int);
__device__ int __syncthreads_count(int); __device__ void __syncwarp(unsigned int = 0xffffffff);
__device__ void __threadfence(); __device__ void __threadfence_block(); __device__ void __threadfence_system();
template <class T> __device__ T __ldg(const T*); template <class T> __device__ T __ldcg(const T*);
template <class T> __device__ T __ldca(const T*); template <class T> __device__ T __ldcs(const T*);
template <class T> __device__ T __ldlu(const T*); template <class T> __device__ T __ldcv(const T*);
template <class T> __device__ void __stcg(T*, T); template <class T> __device__ void __stcs(T*, T);
template <class T> __device__ void __stwb(T*, T); template <class T> __device__ void __stwt(T*, T);
""" + _atomic_decls() + r"""
template <class T> __device__ T __shfl_sync(unsigned, T, int, int = 32);
template <class T> __device__ T __shfl_up_sync(unsigned, T, unsigned, int = 32);
template <class T> __device__ T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned, T, int, int = 32);
template <class T> __device__ T __shfl(T, int, int = 32); template <class T> __device__ T __shfl_down(T, unsigned, int = 32);
template <class T> __device__ T __shfl_up(T, unsigned, int = 32); template <class T> __device__ T __shfl_xor(T, int, int = 32);
__device__ unsigned __ballot_sync(unsigned, int); __device__ int __all_sync(unsigned, int);
__device__ int __any_sync(unsigned, int); __device__ unsigned __activemask();
__device__ int __popc(unsigned); __device__ int __popcll(unsigned long long); __device__ int __clz(int);
__device__ int __ffs(int); __device__ unsigned __brev(unsigned); __device__ int __mul24(int, int);
__device__ unsigned __umul24(unsigned, unsigned); __device__ int __mulhi(int, int); __device__ unsigned __umulhi(unsigned, unsigned);
__device__ float __fdividef(float, float); __device__ float __expf(float); __device__ float __logf(float);
__device__ float __sinf(float); __device__ float __cosf(float); __device__ float __powf(float, float);
__device__ float __saturatef(float); __device__ float fmaf(float, float, float); __host__ __device__ double fma(double, double, double);
__device__ float __fmaf_rn(float, float, float); __device__ float __fadd_rn(float, float); __device__ float __fmul_rn(float, float);
__device__ int __float2int_rn(float); __device__ int __float2int_rz(float); __device__ float __int2float_rn(int);
__device__ long long clock64(); __device__ int clock();
__device__ float __int_as_float(int); __device__ int __float_as_int(float); __device__ float __uint_as_float(unsigned);
__device__ unsigned __float_as_uint(float); __device__ double __longlong_as_double(long long);
__device__ long long __double_as_longlong(double); __device__ float __frcp_rn(float); __device__ float __fsqrt_rn(float);
__host__ __device__ bool isnan(float); __host__ __device__ bool isnan(double); __host__ __device__ bool isinf(float);
__host__ __device__ bool isinf(double); __host__ __device__ bool isfinite(float); __host__ __device__ bool isfinite(double);
__host__ __device__ int signbit(float); __host__ __device__ int signbit(double);
__host__ __device__ int min(int, int); __host__ __device__ unsigned min(unsigned, unsigned);
__host__ __device__ unsigned min(int, unsigned); __host__ __device__ unsigned min(unsigned, int);
__host__ __device__ long min(long, long); __host__ __device__ unsigned long min(unsigned long, unsigned long);
__host__ __device__ long long min(long long, long long); __host__ __device__ unsigned long long min(unsigned long long, unsigned long long);
__host__ __device__ float min(float, float); __host__ __device__ double min(double, double);
__host__ __device__ int max(int, int); __host__ __device__ unsigned max(unsigned, unsigned);
__host__ __device__ unsigned max(int, unsigned); __host__ __device__ unsigned max(unsigned, int);
__host__ __device__ long max(long, long); __host__ __device__ unsigned long max(unsigned long, unsigned long);
__host__ __device__ long long max(long long, long long); __host__ __device__ unsigned long long max(unsigned long long, unsigned long long);
__host__ __device__ float max(float, float); __host__ __device__ double max(double, double);
__host__ __device__ int abs(int); __host__ __device__ long labs(long); __host__ __device__ long long llabs(long long);
namespace cooperative_groups {
struct thread_block {
  __device__ void sync() const {}
  __device__ unsigned thread_rank() const { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
  __device__ unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ unsigned num_threads() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  __device__ dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  __device__ dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
  __device__ dim3 dim_threads() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
};
template <unsigned N> struct thread_block_tile {
  __device__ void sync() const {}
  __device__ unsigned thread_rank() const { return ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) % N; }
  __device__ unsigned size() const { return N; }
  __device__ unsigned num_threads() const { return N; }
  __device__ unsigned meta_group_rank() const { return ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) / N; }
  __device__ unsigned meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }
  template <class T> __device__ T shfl(T, int) const; template <class T> __device__ T shfl_down(T, unsigned) const;
  template <class T> __device__ T shfl_up(T, unsigned) const; template <class T> __device__ T shfl_xor(T, unsigned) const;
  __device__ unsigned ballot(int) const; __device__ int any(int) const; __device__ int all(int) const;
};
struct grid_group { __device__ void sync() const {}
  __device__ unsigned long long block_rank() const { return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }
  __device__ unsigned long long thread_rank() const { return block_rank() * (blockDim.x * blockDim.y * blockDim.z)
    + (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
  __device__ unsigned long long size() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z; }
  __device__ unsigned long long num_threads() const { return size(); }
  __device__ unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
  __device__ dim3 dim_blocks() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
  __device__ dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); } };
__device__ inline thread_block this_thread_block() { return thread_block(); }
__device__ inline grid_group this_grid() { return grid_group(); }
template <unsigned N, class P> __device__ thread_block_tile<N> tiled_partition(const P&) { return thread_block_tile<N>(); }
__device__ inline unsigned thread_rank(const thread_block& g) { return g.thread_rank(); }
__device__ inline void sync(const thread_block&) {}
template <class G, class T, class Op> __device__ T reduce(const G&, T, Op);
template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class T> struct greater { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };
}
namespace std {  // the few templates kernels use from <type_traits>, <limits> and <algorithm>
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
template <bool B, class T = void> struct enable_if {}; template <class T> struct enable_if<true, T> { typedef T type; };
template <class T, T v> struct integral_constant { static constexpr T value = v; };
template <class A, class B> struct is_same : integral_constant<bool, false> {};
template <class A> struct is_same<A, A> : integral_constant<bool, true> {};
template <class T> struct numeric_limits { static constexpr __host__ __device__ T max(); static constexpr __host__ __device__ T min();
  static constexpr __host__ __device__ T lowest(); static constexpr __host__ __device__ T infinity(); };
template <class T> __host__ __device__ const T& min(const T&, const T&); template <class T> __host__ __device__ const T& max(const T&, const T&);
}
extern "C" __host__ __device__ int printf(const char*, ...);
extern "C" __host__ __device__ void* malloc(size_t); extern "C" __host__ __device__ void free(void*);
extern "C" __host__ __device__ void* memset(void*, int, size_t);
extern "C" __host__ __device__ void* memcpy(void*, const void*, size_t);
typedef int cudaError_t; typedef struct CUstream_st* cudaStream_t; typedef struct CUevent_st* cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum { cudaSuccess = 0 };
template <class T> cudaError_t cudaMalloc(T**, size_t); cudaError_t cudaFree(void*);
cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaMemset(void*, int, size_t); cudaError_t cudaDeviceSynchronize(); cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t);
extern "C" int __cudaPushCallConfiguration(dim3, dim3, size_t = 0, cudaStream_t = 0);
extern "C" int cudaConfigureCall(dim3, dim3, size_t = 0, cudaStream_t = 0);
"""

# Headers of the CUDA toolkit and the C/C++ libraries a kernel file may include: the prelude covers what kernels use.
KNOWN_HEADERS = ("cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h", "device_functions.h",
                 "cuda_fp16.h", "math.h", "cmath", "stdio.h", "cstdio", "stdlib.h", "cstdlib", "stdint.h", "cstdint",
                 "assert.h", "cassert", "string.h", "cstring", "iostream", "vector", "algorithm", "time.h", "ctime",
                 "float.h", "cfloat", "limits.h", "climits", "helper_cuda.h", "helper_functions.h", "sm_20_atomic_functions.h",
                 "vector_types.h", "math_functions.h", "cooperative_groups.h", "cooperative_groups/reduce.h",
                 "cuda/std/cstdint", "device_atomic_functions.h", "sm_60_atomic_functions.h", "cuda_bf16.h",
                 "type_traits", "limits", "utility", "cstddef", "stddef.h", "cooperative_groups/memcpy_async.h")


class _Lib:
    """libclang, loaded once; LintSetupError-like UsageError if the extra is not installed."""

    _ci = None

    @classmethod
    def get(cls):
        if cls._ci is None:
            try:
                import clang.cindex as ci
            except ImportError:
                raise UsageError("needs libclang, the lint extra: pip install 'gpumemlab[lint]'") from None
            lib = ci.conf.lib
            for fn, args, res in (("clang_getCursorBinaryOperatorKind", [ci.Cursor], ctypes.c_int),
                                  ("clang_getCursorUnaryOperatorKind", [ci.Cursor], ctypes.c_int),
                                  ("clang_Cursor_Evaluate", [ci.Cursor], ctypes.c_void_p),
                                  ("clang_EvalResult_getKind", [ctypes.c_void_p], ctypes.c_int),
                                  ("clang_EvalResult_getAsLongLong", [ctypes.c_void_p], ctypes.c_longlong),
                                  ("clang_EvalResult_getAsUnsigned", [ctypes.c_void_p], ctypes.c_ulonglong),
                                  ("clang_EvalResult_isUnsignedInt", [ctypes.c_void_p], ctypes.c_uint),
                                  ("clang_EvalResult_dispose", [ctypes.c_void_p], None)):
                f = getattr(lib, fn)
                f.argtypes, f.restype = args, res
            cls._ci = ci
        return cls._ci


def cindex():
    return _Lib.get()


# clang's BinaryOperatorKind / UnaryOperatorKind numbering (clang-c/Index.h, LLVM 17+)
BINARY = {1: ".*", 2: "->*", 3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 10: "<=>", 11: "<", 12: ">",
          13: "<=", 14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&", 21: "||", 22: "=", 23: "*=",
          24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=", 29: ">>=", 30: "&=", 31: "^=", 32: "|=", 33: ","}
UNARY = {1: "post++", 2: "post--", 3: "pre++", 4: "pre--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~", 10: "!",
         11: "__real", 12: "__imag", 13: "__extension__", 14: "co_await"}


def binary_op(cursor) -> str | None:
    return BINARY.get(cindex().conf.lib.clang_getCursorBinaryOperatorKind(cursor))


def unary_op(cursor) -> str | None:
    return UNARY.get(cindex().conf.lib.clang_getCursorUnaryOperatorKind(cursor))


def evaluate_int(cursor) -> int | None:
    """clang's own constant evaluation of an expression (literals, constexpr); None if not an integer constant."""
    lib = cindex().conf.lib
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        if lib.clang_EvalResult_getKind(res) != 1:  # CXEval_Int
            return None
        if lib.clang_EvalResult_isUnsignedInt(res):
            return int(lib.clang_EvalResult_getAsUnsigned(res))
        return int(lib.clang_EvalResult_getAsLongLong(res))
    finally:
        lib.clang_EvalResult_dispose(res)


@dataclass
class Diagnostic:
    line: int
    column: int
    severity: str  # "error" or "warning" or "note"
    message: str
    file: str


@dataclass
class Parsed:
    tu: object
    path: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stubbed: list[str] = field(default_factory=list)  # headers read as empty
    children: dict = field(default_factory=dict)  # cursor -> its children, shared by every run over this file
    sources: dict = field(default_factory=dict)  # file name -> its bytes, for the text of accesses
    nodes: dict = field(default_factory=dict)  # cursor -> (kind, type)
    run_caches: dict = field(default_factory=dict)  # (kernel, templates) -> the type caches its runs share
    args: list = field(default_factory=list)  # the parser's arguments (to parse the file again with a probe)
    resolved: dict = field(default_factory=dict)  # a dependent type's spelling, its arguments bound -> clang type


def read_source(path: str) -> str:
    """The file's text; UsageError (one line) for a missing path, a directory, an empty or a binary file."""
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory: give a .cu file")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
    if not data.strip():
        raise UsageError(f"{path} is empty: nothing to lint")
    if b"\0" in data:
        raise UsageError(f"{path} is a binary file, not CUDA C++ source")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_NOT_FOUND = re.compile(r"'([^']+)' file not found")


def parse(path: str, defines: list[str] = (), arch: int = 90, text: str | None = None) -> Parsed:
    """Parse ``path`` (or ``text`` under its name) as CUDA C++ with ``-D`` ``defines``; stub missing headers."""
    ci = cindex()
    text = read_source(path) if text is None else text
    name = os.path.abspath(path)
    args = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-nostdinc", "-nostdinc++", "-std=c++17",
            "-fsyntax-only", "-Wno-unknown-cuda-version", "--cuda-path=/nonexistent", "-ferror-limit=50",
            "-include", PRELUDE_PATH, "-I", STUB_DIR, "-I", os.path.dirname(name) or ".",
            f"-D__CUDA_ARCH__={arch * 10}"]
    for d in defines:
        args.append(f"-D{d}")
    stubs = dict.fromkeys(KNOWN_HEADERS, "")
    index = ci.Index.create()
    stubbed: list[str] = []
    for _ in range(MAX_REPARSE):
        unsaved = [(name, text), (PRELUDE_PATH, PRELUDE)] + [(f"{STUB_DIR}/{h}", "") for h in stubs]
        try:
            tu = index.parse(name, args=args, unsaved_files=unsaved)
        except ci.TranslationUnitLoadError:
            raise UsageError(f"{path}: libclang could not parse the file") from None
        missing = [m.group(1) for d in tu.diagnostics if (m := _NOT_FOUND.search(d.spelling))]
        missing = [m for m in missing if m not in stubs]
        if not missing:
            break
        for m in missing:
            stubs[m] = ""
            stubbed.append(m)
    diags = []
    for d in tu.diagnostics:
        if d.severity < ci.Diagnostic.Error:
            continue
        loc = d.location
        diags.append(Diagnostic(loc.line, loc.column, "error", d.spelling, loc.file.name if loc.file else ""))
    parsed = Parsed(tu, name, text, diags, stubbed)
    parsed.args = [args, [(f"{STUB_DIR}/{h}", "") for h in stubs]]
    return parsed


PROBE = "__gpumemlab_lint_probe"


def resolve_type(parsed: Parsed, spelling: str):
    """The clang type ``spelling`` names in the file's scope (``Vec16<float>::type``, a dependent type with the
    template's arguments bound), by parsing the file again with a typedef of it appended; None if clang cannot."""
    if spelling in parsed.resolved:
        return parsed.resolved[spelling][1]
    ci = cindex()
    args, stubs = parsed.args
    text = f"{parsed.text}\ntypedef {spelling} {PROBE};\nstatic_assert(sizeof({PROBE}) > 0, \"\");\n"  # instantiated
    t = tu = None
    try:
        tu = ci.Index.create().parse(parsed.path, args=args, unsaved_files=[(parsed.path, text),
                                                                            (PRELUDE_PATH, PRELUDE)] + stubs)
        for c in tu.cursor.get_children():
            if c.kind == ci.CursorKind.TYPEDEF_DECL and c.spelling == PROBE:
                t = c.underlying_typedef_type.get_canonical()
    except ci.TranslationUnitLoadError:
        t = None
    if t is not None and (t.kind == ci.TypeKind.INVALID or t.get_size() <= 0):
        t = None
    parsed.resolved[spelling] = (tu, t)  # the type lives as long as its translation unit
    return t

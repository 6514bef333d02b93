"""Malformed or unsupported input: one clear line (exit 2) or an access reported as unknown with its reason; never a
traceback."""

import pytest

from gpumemlab.cli import main

K = "__global__ void k(float* a, int n) {{ {body} }}"  # a kernel around a body

# name, file text, extra CLI arguments, expected exit code, text expected in the output (stdout + stderr)
CASES = [
    # the file itself
    ("empty", "", [], 2, "is empty: nothing to lint"),
    ("blank", "  \n\t\n", [], 2, "is empty: nothing to lint"),
    ("binary", b"\x7fELF\x02\x01\x00\x00binary", [], 2, "is a binary file"),
    ("latin1", "// caf\xe9\n" + K.format(body="a[threadIdx.x] = 0;"), [], 0, "coalesced"),
    ("host-only", "int main() { return 0; }", [], 2, "no __global__ kernel found"),
    ("declaration-only", "__global__ void k(float* a);", [], 2, "no __global__ kernel found"),
    ("text", "this is not C++ at all", [], 2, "text.cu:1:1: error: expected unqualified-id"),
    # syntax errors
    ("missing-semicolon", K.format(body="int i = threadIdx.x a[i] = 0;"), [], 2, "error: kernel k not analyzed"),
    ("unbalanced-brace", "__global__ void k(float* a) { a[0] = 1;", [], 2, "error:"),
    ("truncated", "__global__ void k(float* a", [], 2, "error:"),
    ("extra-brace", K.format(body="a[0] = 1; }"), [], 2, "error:"),
    ("undeclared", K.format(body="a[threadIdx.x] = undeclared_thing;"), [], 2, "use of undeclared identifier"),
    ("bad-type", "__global__ void k(nosuchtype* a) { a[threadIdx.x] = 0; }", [], 2, "unknown type name"),
    ("error-directive", "#error stop here\n" + K.format(body="a[0] = 0;"), [], 2, "stop here"),
    ("bad-macro-use", "#define F(x) x\n" + K.format(body="a[F(] = 0;"), [], 2, "error:"),
    ("host-error-ignored", K.format(body="a[threadIdx.x] = 1.0f;") + "\nint main() { undeclared(); }", [], 0,
     "coalesced"),
    # includes
    ("missing-include", '#include "not_there.h"\n' + K.format(body="a[threadIdx.x] = 0;"), [], 0, "coalesced"),
    ("missing-include-macro", '#include "not_there.h"\n' + K.format(body="a[FROM_HEADER] = 0;"), [], 2,
     "undeclared identifier 'FROM_HEADER'"),
    ("system-includes", "#include <cuda_runtime.h>\n#include <stdio.h>\n#include <cmath>\n" +
     K.format(body="a[threadIdx.x] = sqrtf(2.0f);"), [], 0, "coalesced"),
    ("fp16", "#include <cuda_fp16.h>\n__global__ void k(__half* h) { h[threadIdx.x] = __float2half(1.0f); }", [], 0,
     "coalesced"),
    # preprocessor branches
    ("if-0", "#if 0\nthis is never compiled\n#else\n" + K.format(body="a[2 * threadIdx.x] = 0;") + "\n#endif", [], 0,
     "strided"),
    ("ifdef-define", "#ifdef WIDE\n" + K.format(body="a[2 * threadIdx.x] = 0;") + "\n#else\n" +
     K.format(body="a[threadIdx.x] = 0;") + "\n#endif", ["-D", "WIDE"], 0, "strided"),
    ("undefined-macro-in-if", "#if UNDEFINED_MACRO > 3\n#define S 2\n#else\n#define S 1\n#endif\n" +
     K.format(body="a[S * threadIdx.x] = 0;"), [], 0, "coalesced"),
    # unsupported constructs: an unknown with its reason
    ("lambda-init-capture", K.format(body="auto f = [m = n](int x) { return m * x; }; a[f(threadIdx.x)] = 0;"), [], 0,
     "m: a lambda's init-capture (not followed)"),
    ("lambda-returned", K.format(body="auto f = [&]() { return [&](int x) { return x + n; }; }; a[f()(threadIdx.x)] = 0;"),
     [], 0, "unknown"),
    ("ptx-two-instructions", K.format(body='asm("ld.global.f32 %0, [%1]; st.global.f32 [%2], %0;" : "=f"(a[0]) : '
                                           '"l"(a), "l"(a + threadIdx.x));'), [], 0, "coalesced"),
    ("ptx-register-address", K.format(body='asm("{ .reg .u64 p; mov.u64 p, %0; st.global.f32 [p], 1.0; }" :: '
                                           '"l"(a));'), [], 0, "its address is computed in the PTX"),
    ("surface", "__global__ void k(cudaSurfaceObject_t s) { surf2Dwrite(1.0f, s, threadIdx.x * 4, 0); }", [], 0,
     "surface stores go through the texture path"),
    ("inline-ptx", K.format(body='int v; asm("mov.u32 %0, %%smid;" : "=r"(v)); a[v] = 0;'), [], 0,
     "written by inline PTX"),
    ("recursion", "__device__ int f(int n) { return n ? f(n - 1) : 0; }\n" + K.format(body="a[f(threadIdx.x)] = 0;"),
     [], 0, "recursive call to f"),
    ("texture-object", "__global__ void k(cudaTextureObject_t t, float* o) { o[threadIdx.x] = tex1Dfetch<float>(t, "
     "threadIdx.x); }", [], 0, "texture fetches"),
    ("texture-reference", "texture<float, 1, cudaReadModeElementType> tex;\n__global__ void k(float* o) "
     "{ o[threadIdx.x] = tex1Dfetch(tex, threadIdx.x); }", [], 0, "texture fetches"),
    ("atomic", K.format(body="atomicAdd(&a[threadIdx.x % 4], 1.0f);"), [], 0, "8 lanes of the warp update the same address: L2"),
    ("atomic-cas", "__global__ void k(int* a) { atomicCAS(&a[0], 0, 1); }", [], 0, "atomic"),
    ("indirect", "__global__ void k(float* a, const int* idx) { a[idx[threadIdx.x]] = 0; }", [], 0,
     "value loaded from memory"),
    ("float-index", K.format(body="float x = threadIdx.x * 0.5f; a[(int)x] = 0;"), [], 0, "floating-point value"),
    ("opaque-call", "__device__ int hidden(int);\n" + K.format(body="a[hidden(threadIdx.x)] = 0;"), [], 0,
     "result of call to hidden"),
    ("pointer-to-pointer", "__global__ void k(float** a) { a[threadIdx.x][0] = 0; }", [], 0, "unknown"),
    ("division-by-zero", K.format(body="int z = 0; a[threadIdx.x / z] = 0;"), [], 0, "division by zero"),
    ("signed-overflow", K.format(body="int big = 2147483647; a[big + (int)threadIdx.x] = 0;"), [], 0,
     "signed overflow"),
    ("misaligned-float4", K.format(body="reinterpret_cast<float4*>(a + 1)[threadIdx.x] = make_float4(0, 0, 0, 0);"),
     [], 0, "misaligned"),
    ("unknown-guard", "__global__ void k(float* a, const float* b) { if (b[0] > 0) a[threadIdx.x] = 0; }", [], 0,
     "unknown: guard `b[0] > 0` (line 1) not known: value loaded from memory (b[0]) (--assume-data-guards: "),
    ("assumed-guard", "__global__ void k(float* a, const float* b) { if (b[0] > 0) a[threadIdx.x] = 0; }",
     ["--assume-data-guards"], 0, "assumed: guard `b[0] > 0`"),
    ("switch", K.format(body="switch (threadIdx.x % 2) { case 0: a[threadIdx.x] = 0; break; default: break; }"), [], 0,
     "4 sectors/request (ideal 2), strided"),  # the even lanes store: the switch is followed per lane
    ("goto", K.format(body="int i = threadIdx.x; goto end; end: a[i] = 0;"), [], 0, "coalesced"),
    ("while-true", K.format(body="int i = threadIdx.x; while (true) { a[i] = 0; break; }"), [], 0, "coalesced"),
    ("do-while", K.format(body="int i = threadIdx.x; do { a[i] = 0; } while (i < 0);"), [], 0, "coalesced"),
    ("constant-memory", "__constant__ float c[64];\n"
     "__global__ void k(float* o) { o[threadIdx.x] = c[threadIdx.x % 64]; }",
     [], 0, "__constant__ memory"),
    ("union", "union U { float f; int i; };\n__global__ void k(U* u) { u[threadIdx.x].i = 0; }", [], 0, "coalesced"),
    ("class-method", "struct A { __device__ int idx() const { return 3; } };\n__global__ void k(float* a) "
     "{ A x; a[x.idx()] = 0; }", [], 0, "broadcast"),
    ("deep-parens", K.format(body="a[" + "(" * 200 + "threadIdx.x" + ")" * 200 + "] = 0;"), [], 0, "coalesced"),
    ("too-deep-parens", K.format(body="a[" + "(" * 300 + "threadIdx.x" + ")" * 300 + "] = 0;"), [], 2,
     "bracket nesting level exceeded"),
    ("long-chain", K.format(body="a[threadIdx.x" + " + 0" * 500 + "] = 0;"), [], 0, "coalesced"),
    ("too-long-chain", K.format(body="a[threadIdx.x" + " + 0" * 2000 + "] = 0;"), [], 2, "nested more than 600"),
    ("no-accesses", K.format(body="int i = threadIdx.x; (void)i;"), [], 0, ""),
    ("local-array", K.format(body="float t[4]; t[threadIdx.x % 4] = 1; a[threadIdx.x] = t[0];"), [], 0, "coalesced"),
    ("printf", K.format(body='printf("%d", threadIdx.x); a[threadIdx.x] = 0;'), [], 0, "coalesced"),
    ("shuffle", K.format(body="float v = __shfl_down_sync(0xffffffff, 1.0f, 1); a[threadIdx.x] = v;"), [], 0,
     "coalesced"),
    ("unbound-template", "template <typename T> __global__ void k(T* a) { a[threadIdx.x] = 0; }", [], 0,
     "--template T=TYPE"),
    ("launch-bounds-exceeded", "__global__ void __launch_bounds__(128) k(float* a) { a[threadIdx.x] = 0; }", [], 0,
     "exceeds __launch_bounds__(128)"),
    ("host-launch", K.format(body="a[threadIdx.x] = 0;") + "\nint main() { float* d; cudaMalloc(&d, 4); "
     "k<<<1, 256>>>(d, 1); return 0; }", [], 0, "coalesced"),
    ("negative-index", K.format(body="a[(int)threadIdx.x - 64] = 0;"), [], 0, "coalesced"),
    ("bitfield", "struct B { int a : 3; int b : 5; };\n__global__ void k(B* p) { p[threadIdx.x].a = 1; }", [], 0,
     "cannot place"),
    # command-line values
    ("kernel-missing", K.format(body="a[0] = 0;"), ["--kernel", "nope"], 2, "--kernel nope: no __global__ function"),
    ("bad-block", K.format(body="a[0] = 0;"), ["--block", "2000"], 2, "at most 1024 per block"),
    ("bad-block-text", K.format(body="a[0] = 0;"), ["--block", "x,y"], 2, "bad block"),
    ("bad-let", K.format(body="a[0] = 0;"), ["--let", "n"], 2, "bad --let 'n': expected NAME=VALUE"),
    ("bad-let-value", K.format(body="a[0] = 0;"), ["--let", "n=abc"], 2, "must be an integer"),
    ("let-unknown-param", K.format(body="a[0] = 0;"), ["--let", "m=3"], 2, "no kernel of the file has a parameter"),
    ("bad-let-element", K.format(body="a[0] = 0;"), ["--let", "t.sizes[x]=3"], 2, "expected NAME=VALUE"),
    ("let-array-element", "struct T { float* p; int s[2]; };\n__global__ void k(T t) { t.p[threadIdx.x * t.s[1]] = 0; }",
     ["--let", "t.s[1]=2", "--block", "32"], 0, "strided"),
    ("bad-template-type", "template <typename T> __global__ void k(T* a) { a[0] = 0; }", ["--template", "T=notatype"],
     2, "unknown type"),
    ("bad-template-value", "template <int N> __global__ void k(float* a) { a[N] = 0; }", ["--template", "N=x"], 2,
     "expected an integer value"),
    ("bad-define", K.format(body="a[0] = 0;"), ["-D", "1BAD"], 2, "bad -D '1BAD'"),
    ("bad-arch", K.format(body="a[0] = 0;"), ["--arch", "banana"], 2, "bad --arch"),
    ("bad-fail-on", K.format(body="a[0] = 0;"), ["--fail-on", "everything"], 2, "--fail-on 'everything'"),
    ("bad-block-idx", K.format(body="a[0] = 0;"), ["--block-idx", "5"], 2, "outside the grid"),
]


@pytest.mark.parametrize("name,text,args,rc,expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input(tmp_path, capsys, name, text, args, rc, expected):
    path = tmp_path / f"{name}.cu"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("latin-1" if name == "latin1" else "utf-8"))
    code = main(["lint", str(path), "--no-resources", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == rc, out + err
    assert expected in out + err
    if rc == 2 and not out:
        assert len(err.strip().splitlines()) == 1, err  # one clear line


@pytest.mark.parametrize("target", ["missing", "directory"])
def test_bad_path(tmp_path, capsys, target):
    path = tmp_path / "nothing.cu" if target == "missing" else tmp_path
    assert main(["lint", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert ("no such file" if target == "missing" else "is a directory") in err


def test_there_are_at_least_sixty_bad_inputs():
    assert len(CASES) + 2 >= 60

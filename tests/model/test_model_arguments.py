"""Each public model function names the argument it refuses, with the exact one-line message, and keeps the types
it promises (mutation testing: a check that names the wrong argument, or none, must fail a test)."""

import numpy as np
import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model.constant import constant_requests
from gpumemlab.model.dram import DramLayout, tiled_matmul_phase
from gpumemlab.model.intensity import reuse_intensity


def message(fn, *args, **kw) -> str:
    with pytest.raises(UsageError) as info:
        fn(*args, **kw)
    return str(info.value)


@pytest.mark.parametrize("kw,want", [
    (dict(layout="x"), "layout must be a DramLayout, got str 'x'"),
    (dict(width=4.0), "width must be an integer, got float 4.0"),
    (dict(width=0), "width must be >= 1, got 0"),
    (dict(tile="2"), "tile must be an integer, got str '2'"),
    (dict(tile=0), "tile must be >= 1, got 0"),
    (dict(phase=None), "phase must be an integer, got NoneType None"),
    (dict(width=2048, tile=2), "width 2048 is too large for this element-by-element picture (at most 1024)"),
    (dict(phase=-1), "phase -1 is outside 0..1 for width 4, tile 2"),
])
def test_tiled_matmul_phase_names_the_bad_argument(kw, want):
    call = dict(layout=DramLayout(), width=4, tile=2, phase=0) | kw
    assert message(tiled_matmul_phase, **call) == want


@pytest.mark.parametrize("kw,want", [
    (dict(channels="4"), "channels must be an integer, got str '4'"),
    (dict(banks_per_channel=2.0), "banks_per_channel must be an integer, got float 2.0"),
    (dict(burst_bytes=None), "burst_bytes must be an integer, got NoneType None"),
    (dict(burst_bytes=0), "channels, banks per channel and burst bytes must be positive"),
])
def test_dram_layout_names_the_bad_field(kw, want):
    assert message(DramLayout, **kw) == want


def test_locate_takes_float_byte_addresses_as_whole_bytes():
    ch, bank = DramLayout().locate(np.array([0.0, 9.5, 70.0]))  # bursts 0, 1, 8
    assert ch.dtype == np.int64 and bank.dtype == np.int64
    assert ch.tolist() == [0, 1, 0] and bank.tolist() == [0, 0, 0]


@pytest.mark.parametrize("m,n,want", [
    (1.5, 2, "reuse_m must be an integer, got float 1.5"),
    (2, "2", "reuse_n must be an integer, got str '2'"),
])
def test_reuse_intensity_names_the_bad_factor(m, n, want):
    assert message(reuse_intensity, m, n) == want


def test_constant_requests_reads_the_declaration_as_global_memory():
    """The array is in the constant bank, addressed like global memory: a __shared__ declaration is refused."""
    assert message(constant_requests, "taps[threadIdx.x]", "__shared__ float taps[256]") == (
        "declaration '__shared__ float taps[256]' is __shared__ but the space given is global")
    assert constant_requests("taps[0]", "__constant__ float taps[64]", block=(32, 1, 1))["requests_per_warp"] == 1


def test_number_accepts_finite_reals_and_names_what_it_refuses():
    from gpumemlab.model import args

    assert args.number(None, "x", optional=True) is None
    assert args.number(2, "x", optional=True) == 2.0 and type(args.number(2, "x")) is float
    assert args.number(0, "x", positive=False) == 0.0
    assert message(args.number, None, "x") == "x must be a number, got NoneType None"
    assert message(args.number, True, "x") == "x must be a number, got bool True"
    assert message(args.number, float("inf"), "x") == "x must be a finite number, positive, got inf"
    assert message(args.number, float("nan"), "x", positive=False) == "x must be a finite number, >= 0, got nan"
    assert message(args.number, -1, "x", positive=False) == "x must be >= 0, got -1"
    assert message(args.number, 0, "x") == "x must be positive, got 0"


def test_integer_text_and_instance_messages():
    from gpumemlab.model import args

    assert args.integer(None, "n", optional=True) is None
    assert args.integer(np.int64(5), "n") == 5 and type(args.integer(np.int64(5), "n")) is int
    assert message(args.integer, 3, "n", least=4) == "n must be >= 4, got 3"
    assert message(args.integer, "a" * 60, "n") == "n must be an integer, got str '" + "a" * 39
    assert message(args.text, 3, "name") == "name must be a string, got int 3"
    assert message(args.text, 3, "name", optional=True) == "name must be a string or None, got int 3"
    assert args.text(None, "name", optional=True) is None
    assert message(args.instance, 3, DramLayout, "layout", " (see docs)") == (
        "layout must be a DramLayout (see docs), got int 3")


def test_device_lookup_and_roofline_name_their_arguments():
    from gpumemlab.model.intensity import _normalize, find_device, roofline

    assert _normalize("NVIDIA GeForce RTX 4090") == "rtx4090" and _normalize("Tesla T4") == "t4"
    assert message(find_device, 3) == "device name must be a string, got int 3"
    assert message(roofline, "1", 100.0, 10.0) == "op_per_byte must be a number, got str '1'"
    assert message(roofline, 1.0, 0, 10.0) == "peak_gflops must be positive, got 0"
    assert message(roofline, 1.0, 100.0, -1) == "bandwidth_gbs must be positive, got -1"


def test_occupancy_default_is_no_shared_memory():
    from gpumemlab.model.occupancy import occupancy

    r = occupancy(32, 16, cc=(7, 5))
    assert (r["smem"], r["smem_per_block"], r["limits"]["shared_memory"]) == (0, 0, None)


@pytest.mark.parametrize("call,want", [
    (dict(kernel=3), "kernel must be a string, got int 3"),
    (dict(kernel="tiled", tile="8"), "tile must be an integer, got str '8'"),
    (dict(kernel="coarsened", coarsen=2.0), "coarsen must be an integer, got float 2.0"),
    (dict(kernel="coarsened", coarsen=0), "tile and coarsening factor must be >= 1, got tile=32, coarsen=0"),
    (dict(kernel="tiled", device_name=7), "device_name must be a string or None, got int 7"),
    (dict(kernel="tiled", peak_gflops=100.0), "give both --peak-gflops and --bandwidth-gbs, or --device"),
])
def test_intensity_names_the_bad_argument(call, want):
    from gpumemlab.model.intensity import intensity

    assert message(intensity, **call) == want


def test_intensity_with_a_device_name_and_no_device():
    from gpumemlab.model.intensity import intensity

    assert intensity("coarsened", 16, 2)["device"] is None
    assert intensity("tiled", device_name="NVIDIA H100 PCIe")["device"]["name"] == "H100 PCIe"


def test_bytes_in_flight_is_bandwidth_times_latency_split_per_sm_and_thread():
    from gpumemlab.model.dram import bytes_in_flight

    r = bytes_in_flight(3350.0, 600.0, 132, 2048)  # GB/s x ns = bytes
    assert r["bytes"] == 3350.0 * 600.0
    assert r["bytes_per_sm"] == 3350.0 * 600.0 / 132
    assert r["bytes_per_thread"] == 3350.0 * 600.0 / 132 / 2048
    assert r["loads16_per_thread"] == 3350.0 * 600.0 / 132 / 2048 / 16
    assert set(r) == {"bytes", "bytes_per_sm", "bytes_per_thread", "loads16_per_thread"}
    assert bytes_in_flight(1, 1, 1, 1)["bytes"] == 1  # ints are numbers too


@pytest.mark.parametrize("args_,want", [
    ((0, 600.0, 132, 2048), "bandwidth_gbps must be a finite number > 0, got 0"),
    ((True, 600.0, 132, 2048), "bandwidth_gbps must be a finite number > 0, got True"),
    (("1", 600.0, 132, 2048), "bandwidth_gbps must be a finite number > 0, got '1'"),
    ((3350.0, float("inf"), 132, 2048), "latency_ns must be a finite number > 0, got inf"),
    ((3350.0, -1.0, 132, 2048), "latency_ns must be a finite number > 0, got -1.0"),
    ((3350.0, 600.0, 0, 2048), "sm_count must be an int > 0, got 0"),
    ((3350.0, 600.0, True, 2048), "sm_count must be an int > 0, got True"),
    ((3350.0, 600.0, 132, 2048.0), "threads_per_sm must be an int > 0, got 2048.0"),
    ((3350.0, 600.0, 132, -3), "threads_per_sm must be an int > 0, got -3"),
])
def test_bytes_in_flight_names_the_bad_argument(args_, want):
    from gpumemlab.model.dram import bytes_in_flight

    assert message(bytes_in_flight, *args_) == want


@pytest.mark.parametrize("n,want", [(0, "0 B"), (1023, "1.02e+03 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
                                    (7 << 20, "7 MiB"), (3 << 30, "3 GiB"), (1 << 40, "1 TiB"), (1 << 50, "1 PiB"),
                                    (5 << 60, "5 EiB")])
def test_byte_sizes_in_messages(n, want):
    from gpumemlab.model.access import _bytes

    assert _bytes(n) == want


def test_warn_is_an_analyzer_warning_with_the_message():
    from gpumemlab.model.access import AnalyzerWarning, warn

    with pytest.warns(AnalyzerWarning) as seen:
        warn("index 1 of a is -1")
    assert [(w.category, str(w.message)) for w in seen] == [(AnalyzerWarning, "index 1 of a is -1")]


@pytest.mark.parametrize("let,element", [("unsigned char c=300", 44), ("const unsigned char c=300", 44),
                                         ("volatile unsigned char c=300", 44), ("auto c=300", 300),
                                         ("const auto c=300", 300), ("c=300", 300)])
def test_a_typed_let_wraps_to_its_type_and_qualifiers_do_not_count(let, element):
    """300 in an unsigned char is 300 - 256 = 44; const, volatile and auto name no type of their own."""
    from gpumemlab.model.access import resolve

    lanes = resolve("a[c + threadIdx.x]", "float a[1024]", space="global", lets=[let], block=(32, 1, 1))
    _, addrs, _ = next(iter(lanes.warps()))
    assert int(addrs[0][0]) // 4 == element


def test_a_let_of_a_non_integer_type_is_refused():
    from gpumemlab.model.access import resolve

    assert message(resolve, "a[c]", "float a[1024]", space="global", lets=["float c=1"]) == (
        "bad --let 'float c=1': 'float' is not a C integer type (int, unsigned, long, size_t, ...)")
    assert message(resolve, "a[c]", "float a[1024]", space="global", lets=["const long double c=1"]) == (
        "bad --let 'const long double c=1': 'long double' is not a C integer type (int, unsigned, long, size_t, ...)")


def test_limits_are_inclusive():
    from gpumemlab.model import args

    assert args.integer(4, "n", least=4) == 4
    r = tiled_matmul_phase(DramLayout(), width=1024, tile=512, phase=1)  # MAX_WIDTH itself is allowed
    assert r["elements"]["0,0"][:2] == [512, 513] and len(r["elements"]) == 4


@pytest.mark.parametrize("lets,want", [
    ("N=3", "lets must be a list of 'NAME=EXPR' strings, (name, expr) pairs or a mapping, got str 'N=3'"),
    (5, "lets must be a list of 'NAME=EXPR' strings, (name, expr) pairs or a mapping, got int 5"),
    ([("N",)], "bad let ('N',): expected 'NAME=EXPR' or a (name, expr) pair"),
    (["=3"], "bad --let name '': expected a C identifier"),
])
def test_bad_lets_are_named(lets, want):
    from gpumemlab.model.access import resolve

    assert message(resolve, "a[0]", "float a[]", space="global", lets=lets) == want


def test_typed_let_as_a_pair_and_a_let_given_twice():
    from gpumemlab.model.access import AnalyzerWarning, resolve

    lanes = resolve("a[c]", "float a[1024]", space="global", lets=[("unsigned char c", "300")], block=(32, 1, 1))
    assert int(next(iter(lanes.warps()))[1][0][0]) // 4 == 44
    with pytest.warns(AnalyzerWarning) as seen:
        lanes = resolve("a[i]", "float a[]", space="global", block=(32, 1, 1), lets=["i=1", "i=2"])
    assert [str(w.message) for w in seen] == [
        "--let i is defined twice (i=1, then i=2): the second one is used from here on"]
    assert int(next(iter(lanes.warps()))[1][0][0]) == 8  # the second one


def test_a_wrapped_unsigned_index_in_the_second_warp_is_named_by_thread():
    """Thread 32 reads i - 33 = -1 as unsigned: element 2^32 - 1, 16 GiB past thread 33's element 0."""
    from gpumemlab.model.access import AnalyzerWarning, resolve

    with pytest.warns(AnalyzerWarning) as seen:
        resolve("a[i - 33]", "float a[]", space="global", block=(64, 1, 1), lets=["unsigned i = threadIdx.x"],
                active="threadIdx.x >= 32")
    assert [str(w.message) for w in seen] == [
        "access 'a[i - 33]': thread 33 reads 16 GiB away from thread 32 of the same warp (more than 16 MiB): an index "
        "that wrapped (unsigned arithmetic)? Give the let its type: --let 'int i=...'"]

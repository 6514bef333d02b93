import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")  # as the CLI does: keep ptxas -v reports (see gpu/cubin.py)

REQUIRE_GPU = "GPUMEMLAB_REQUIRE_GPU"
_PROBE = pytest.StashKey[tuple]()


def gpu_machine() -> bool:
    """An NVIDIA device node or GPUMEMLAB_REQUIRE_GPU: GPU tests will run (and must not share the GPU)."""
    return os.environ.get(REQUIRE_GPU, "") not in ("", "0") or os.path.exists("/dev/nvidiactl")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own: it reads the worker count set here
def pytest_cmdline_main(config):
    """Without a GPU, a run of whole folders (the README's ``python -m pytest -q``) spreads over the CPU cores with
    pytest-xdist when it is installed (the test extra installs it), unless -n was given; a run of a few files stays
    in one process (workers cost a collection each), and so does any run on a GPU machine."""
    if getattr(config.option, "numprocesses", "absent") is not None or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # no xdist, -n given, or inside a worker
    if gpu_machine() or not all(os.path.isdir(a.split("::")[0]) for a in config.args):
        return
    config.option.numprocesses = os.cpu_count() or 1
    config.option.dist = "loadfile" if config.option.dist == "no" else config.option.dist  # a module's fixtures once


def probe_gpu() -> tuple[str, object]:
    """("ok", None), ("none", reason) or ("broken", exception); asked once per session.

    Only NoDeviceError means "this machine has no GPU". Anything else (an import error in the runtime, a bug)
    on a GPU machine must not turn into a quiet skip of every GPU test.
    """
    from gpumemlab.errors import NoDeviceError

    try:
        from gpumemlab.gpu import runtime

        runtime.ensure_device()
    except NoDeviceError as exc:
        return "none", str(exc)
    except Exception as exc:  # noqa: BLE001 - reported as the GPU tests' error, not swallowed
        return "broken", exc
    return "ok", None


def pytest_addoption(parser):
    parser.addoption("--rest-after", metavar="LOG", help="run only the tests without an outcome in LOG, the -v log "
                     "of an earlier run of the same tests that was cut off (a device call's time limit)")


_OUTCOME = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
# "tests/x.py::t[1] PASSED  [ 5%]" in one process; "[gw2] [  5%] PASSED tests/x.py::t[1]" from pytest-xdist workers
_FINISHED = re.compile(rf"^(?:(?P<id>\S+::.+?) (?:{_OUTCOME})\b|\[gw\d+\] \[\s*\d+%\] (?:{_OUTCOME}) (?P<wid>\S+::.*?)\s*$)",
                       re.MULTILINE)


def finished_tests(log_text: str) -> set[str]:
    """Node IDs that have an outcome in a ``pytest -v`` log (one process or pytest-xdist workers)."""
    return {m.group("id") or m.group("wid") for m in _FINISHED.finditer(log_text)}


def pytest_collection_modifyitems(config, items):
    log = config.getoption("--rest-after")
    if log:
        done = finished_tests(Path(log).read_text(encoding="utf-8", errors="replace"))
        keep = [item for item in items if item.nodeid not in done]
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in done])
        items[:] = keep
    if any(item.get_closest_marker("gpu") for item in items):
        config.stash[_PROBE] = probe_gpu()


@pytest.hookimpl(tryfirst=True)  # before fixtures: a module fixture would otherwise touch the GPU first
def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is None:
        return
    state, detail = item.config.stash.get(_PROBE, ("ok", None))
    if state == "broken":
        raise RuntimeError(f"probing the GPU failed (not a missing GPU): {detail!r}") from detail
    if state == "none":
        if os.environ.get(REQUIRE_GPU, "") not in ("", "0"):
            pytest.fail(f"{REQUIRE_GPU}=1 but no CUDA GPU: {detail}", pytrace=False)
        pytest.skip(f"no CUDA GPU: {detail}")


@pytest.fixture
def poisoned_pool():
    """poisoned_pool(cp, shape, dtype): free a poisoned block of that size into CuPy's pool just before a library
    call allocates its result, so that elements the kernel leaves unwritten show as poison, not as a previous
    test's correct values (best effort: the pool usually hands back the block it got last)."""
    def leave(cp, shape, dtype):
        from gpumemlab.bench.verify import poison

        block = cp.empty(shape, dtype)
        poison(block)
        del block

    return leave


@pytest.fixture
def run_cli(capsys):
    """Run ``gpumemlab.cli.main(argv)``; return (exit code, stdout, stderr). argparse exits count too."""
    from gpumemlab.cli import main

    def run(*argv: str):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run


def seeds_dir() -> Path | None:
    """The seed files (DESIGN.md: ``shared/seeds`` beside the checkout or one of its parents), or GPUMEMLAB_SEEDS
    (.ci/run sets it for a clone of a checkout that has them)."""
    if os.environ.get("GPUMEMLAB_SEEDS"):
        return Path(os.environ["GPUMEMLAB_SEEDS"])
    root = Path(__file__).resolve().parents[1]
    return next((p / "shared" / "seeds" for p in root.parents if (p / "shared" / "seeds").is_dir()), None)


@pytest.fixture(scope="session")
def seed_text() -> dict[str, str]:
    """Seed number ("000".."004") -> the seed file's text; the test skips where the seeds are not found."""
    folder = seeds_dir()
    if folder is None:
        pytest.skip("seed files not found (set GPUMEMLAB_SEEDS to their folder)")
    return {p.name[:3]: p.read_text(encoding="utf-8") for p in folder.glob("00[0-4]_*.txt")}

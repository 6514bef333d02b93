"""The package's layers, read from the source (no import runs): only gpu/ imports the CUDA Python bindings, every
import between subpackages points down the layer list of docs/developing.md, and no modules import each other in a
circle (imports inside functions count: a circle that works only because one side imports late is still one)."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "gpumemlab"
# top to bottom; a subpackage imports only from those below it (errors: every layer's exception types)
LAYERS = ("cli", "report", "suite", "experiments", "ops", "tune", "lint", "bench", "ncu", "gpu", "kernels", "model",
          "_progress", "errors")
FACADE = "ops"  # `import gpumemlab`: the public functions, bound lazily to ops/
CUDA = ("cuda.core", "cuda.bindings", "cuda.")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str) -> list[tuple[int, str]]:
    """(line, module) of every import in module ``name``, relative ones resolved; ``from X import y`` gives X.y
    where that is a module of the package, else X."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                found.append((node.lineno, full if full in MODULES else base))
    return found


def layer(module: str) -> str | None:
    """The layer of a module of the package (None for the package's own entry points)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__version__",):
        return FACADE
    if parts[1] == "__main__":
        return None
    return parts[1]


def test_every_subpackage_has_a_layer():
    tops = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    tops |= {p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("__")}
    assert tops <= set(LAYERS), f"add {sorted(tops - set(LAYERS))} to LAYERS (and docs/developing.md)"


def test_only_gpu_imports_the_cuda_bindings():
    found = [f"{MODULES[m].relative_to(SRC)}:{line}: {target}" for m in MODULES if not m.startswith("gpumemlab.gpu.")
             for line, target in imports(m) if target == "cuda" or target.startswith(CUDA)]
    assert found == []
    assert any(t.startswith(CUDA) for m in MODULES if m.startswith("gpumemlab.gpu.") for _, t in imports(m))


# CuPy's runtime layer: raw runtime calls, and the device, stream and event objects; outside gpu/ they go through
# gpu/ helpers (gpu.host, gpu.runtime). Reading the current stream's handle (``cupy.cuda.get_current_stream()``) to
# launch on it is how arrays and kernels agree on a stream, and stays allowed.
CUPY_RUNTIME = ("runtime", "Device", "Stream", "Event", "ExternalStream")


def cupy_runtime_uses(name: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every ``<x>.cuda.<API>`` attribute and every import of ``cupy.cuda.<API>`` or
    ``cupy.cuda`` itself in module ``name`` (strings and comments do not count: they are not in the tree)."""
    path = MODULES[name]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in CUPY_RUNTIME and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "cuda" and not (isinstance(node.value.value, ast.Name)
                                                       and node.value.value.id == "torch"):  # PyTorch's own
            found.append((node.lineno, f"cuda.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cupy"):
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                      if node.module == "cupy" and a.name == "cuda" or node.module.startswith("cupy.cuda")]
    return sorted(found)


def test_cupy_runtime_calls_go_through_gpu_helpers():
    found = [f"{MODULES[m].relative_to(SRC)}:{line}: {what}" for m in MODULES if not m.startswith("gpumemlab.gpu.")
             for line, what in cupy_runtime_uses(m)]
    assert found == []
    assert cupy_runtime_uses("gpumemlab.gpu.host")  # the reader sees the helpers' own calls


def test_the_cupy_runtime_reader_finds_attributes_and_imports(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text("import cupy\nfrom cupy.cuda import runtime\nfrom cupy import cuda\n"
                   "cupy.cuda.runtime.getDevice()\ncupy.cuda.Device(1).use()\ncupy_module().cuda.Stream.null\n"
                   "cupy.cuda.get_current_stream()\nx = 'cupy.cuda.Event()'\ntorch.cuda.Stream()\n")
    monkeypatch.setitem(MODULES, "m", src)
    assert cupy_runtime_uses("m") == [(2, "cupy.cuda.runtime"), (3, "cupy.cuda"), (4, "cuda.runtime"),
                                      (5, "cuda.Device"), (6, "cuda.Stream")]


def test_imports_point_down_the_layers():
    rank = {name: i for i, name in enumerate(LAYERS)}
    up = []
    for m in MODULES:
        here = layer(m)
        for line, target in imports(m):
            there = layer(target) if target.startswith("gpumemlab") else None
            if here and there and here != there and rank[there] < rank[here]:
                up.append(f"{MODULES[m].relative_to(SRC)}:{line}: {here} imports {target} ({there} is above it)")
    assert up == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_modules_import_each_other_in_a_circle():
    def owner(target: str) -> str | None:  # gpumemlab.ops.reduce.sum -> gpumemlab.ops.reduce
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        return target or None

    # a package's __init__ importing its own modules, which import names from it, is how packages are built
    graph = {m: {o for _, t in imports(m) if (o := owner(t)) and o != m} for m in MODULES
             if MODULES[m].name != "__init__.py"}
    assert _cycles(graph) == []


@pytest.mark.parametrize("graph, want", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [["a", "b", "c"]]),
])
def test_cycle_finder(graph, want):
    assert _cycles(graph) == want


def test_the_import_reader_resolves_relative_imports_and_submodules():
    got = {t for _, t in imports("gpumemlab.ops.reduce")}
    assert {"gpumemlab.ops.reduce_axis", "gpumemlab.ops._checks", "gpumemlab.ops.full_sum"} <= set(got)
    assert layer("gpumemlab.ops.full_sum") == "ops" and layer("gpumemlab") == FACADE

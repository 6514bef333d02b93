"""lint's expression front end (clang's parse, lint's interpreter) against the analyzer's own expression parser: for
any integer index expression over threadIdx.x, every lane of a warp stores at the same byte offset either way, in
global and in shared memory (hypothesis). Both evaluate through model.expr, whose C semantics
tests/model/test_model_comparisons.py and test_model_fuzz.py hold to an independent reference."""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpumemlab.lint import analysis, lint_file
from gpumemlab.lint.analysis import Options
from gpumemlab.model.access import resolve

EXAMPLES = max(10, int(100 * float(os.environ.get("HYPOTHESIS_SCALE", "1"))))
OPERATORS = ["+", "-", "*", "&", "|", "^", "/", "%", "<<", ">>", "?:", "?:", "cast"]
COMPARISONS = ["<", "<=", ">", ">=", "==", "!="]
# operators whose operands need care: a non-zero divisor, a shift of an unsigned value by less than 32
FORMS = {"/": "({a} / {small})", "%": "({a} % {small})", "<<": "((unsigned)({a}) << {shift})",
         ">>": "((unsigned)({a}) >> {shift})", "?:": "({a} {cmp} {b} ? {c} : {d})", "cast": "({type})({a})"}


def expression(rng: random.Random, depth: int) -> str:
    """A random integer expression over threadIdx.x with ``depth`` levels of operators (C's conversions between int
    and unsigned, literals of both types); no division by zero, no shift of a negative value or by >= 32."""
    if depth == 0:
        return rng.choice(["threadIdx.x", "(int)threadIdx.x", "warpSize", str(rng.randint(1, 9)),
                           f"{rng.randint(1, 9)}u"])
    op = rng.choice(OPERATORS)
    form = FORMS.get(op, "({a} " + op + " {b})")
    kids = {k: expression(rng, depth - 1) for k in "abcd" if "{" + k + "}" in form}
    return form.format(**kids, small=rng.randint(1, 9), shift=rng.randint(0, 4), cmp=rng.choice(COMPARISONS),
                       type=rng.choice(["unsigned", "int"]))


# drawn from a seed: hypothesis's own choices start from the simplest operator and leaf, rarely reaching the others
INDICES = st.tuples(st.integers(0, 2**32), st.integers(1, 3)).map(
    lambda t: f"({expression(random.Random(t[0]), t[1])}) & 4095")  # in bounds of 4096 floats


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(INDICES)
def test_lint_and_the_analyzer_read_an_index_alike(tmp_path, monkeypatch, index):
    """Each lane's byte offset, for a global and a shared store: lint's (what it hands the model) and the analyzer's."""
    seen = []
    real = analysis.lane_accesses
    monkeypatch.setattr(analysis, "lane_accesses", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    path = tmp_path / "k.cu"
    path.write_text(f"__global__ void k(float* a) {{\n  __shared__ float s[4096];\n  a[{index}] = 0.f;\n"
                    f"  s[{index}] = 0.f;\n}}\n")
    (report,) = lint_file(str(path), Options(block=(32,)), resources=False)
    assume(all(f.verdict != "unknown" for f in report.findings))
    store, shared = seen
    assert (store.space, shared.space) == ("global", "shared")
    for lanes, access, decl in ((store, f"a[{index}]", "float a[]"), (shared, f"s[{index}]", "__shared__ float s[4096]")):
        model = resolve(access, decl, block=(32, 1, 1))
        assert lanes.active.all() and lanes.addresses.tolist() == model.addresses.tolist(), access

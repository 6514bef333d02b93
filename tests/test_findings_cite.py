"""Every number a finding prints comes from the run or from a claim with a source.

The rule, checked for each finding of each experiment over a run (the committed H100 results.json and a fake run):

1. Take the finding's number tokens (digits not glued to a letter on their left, so "V100", "float4" and "L2"
   are names, not numbers, and so are "seed 002" and "1-D"), after removing the names of the run's variants
   ("8 loads in flight" is a label). In a power "a^b" where one side is quoted, the other side is notation
   ("2^26.0": 26.0 is the figure; "16384^2": 16384).
2. Each token must be a token of the printed text of one of the numbers the finding quoted through
   ``experiments._cite`` (each used once; "8.39e+05" prints two), or appear among the number tokens of the
   experiment's claims.
3. Each quoted number must be recomputed from results.json alone: a ``field`` is read again from the record
   with the same variant and params, a ``claim`` figure must appear in the claims' text, a ``constant`` (a named
   threshold or unit of the analysis) is read again from its experiment module, the arithmetic is recomputed,
   and the recomputed value, formatted with the quote's format, must equal the text.
4. Every claim names a non-empty source.

Every experiment's findings are built with ``_cite`` (a plain-string finding fails the committed-run test).
The negative tests below show that each rule fails on a finding that breaks it.
"""

from __future__ import annotations

import copy
import importlib
import math
import re
import pytest

from committed_runs import H100, committed_run
from committed_runs import NAMES as RUNS
from gpumemlab.bench.records import Record, RunResults
from gpumemlab.bench.stats import summarize
from gpumemlab.experiments import registry
from gpumemlab.experiments._cite import (Finding, Num, claim, constant, count, field, geomean, join, log2, q, record_key,
                                         sentence)

TOKEN = re.compile(r"(?<![A-Za-z_\d.,])\d+(?:,\d{3})*(?:\.\d+)?")
POWER = re.compile(r"(?<![A-Za-z_\d.,])(\d[\d,]*(?:\.\d+)?)\^(\d+(?:\.\d+)?)")
NAMES = re.compile(r"\bseed \d{3}\b|\b[123]-D\b")  # "seed 000" (a seed file), "1-D" (a dimension): names


def tokens(text: str) -> list[str]:
    return [t.replace(",", "") for t in TOKEN.findall(NAMES.sub(" ", text))]


def drop_notation(text: str, quoted: list[str]) -> str:
    """Each power "a^b" with a quoted side keeps that side only: the other is the notation's base or exponent."""
    def keep(m):
        base, exponent = m.group(1).replace(",", ""), m.group(2)
        return base if base in quoted else " " + exponent if exponent in quoted else m.group(0)
    return POWER.sub(keep, text)


class Unsourced(Exception):
    """A quoted number that results.json and the claims do not give back."""


ARITHMETIC = {"ratio": lambda a, b: a / b, "product": lambda a, b: a * b, "sum": lambda a, b: a + b,
              "diff": lambda a, b: a - b}


def evaluate(num: Num, records: dict, claim_tokens: set) -> float:
    kind, args = num.expr[0], num.expr[1:]
    again = lambda n: evaluate(n, records, claim_tokens)  # noqa: E731
    if kind == "field":
        return read_field(*args, records)
    if kind == "claim":
        if args[0].replace(",", "") not in claim_tokens:
            raise Unsourced(f"{args[0]} is not a figure of the claims")
        return float(args[0].replace(",", ""))
    if kind == "constant":
        module, name = args
        if not module.startswith("gpumemlab.experiments."):
            raise Unsourced(f"{module}.{name} is not a constant of an experiment")
        return float(getattr(importlib.import_module(module), name))
    if kind in ARITHMETIC:
        return ARITHMETIC[kind](*map(again, args))
    if kind == "scale":
        return again(args[0]) * args[1]
    if kind == "over":
        return args[0] / again(args[1])
    if kind == "log2":
        return math.log2(again(args[0]))
    if kind == "mean":
        parts = [again(n) for n in args[0]]
        return math.fsum(parts) / len(parts)
    if kind == "geomean":
        parts = [math.log(again(n)) for n in args[0]]
        return math.exp(math.fsum(parts) / len(parts))
    if kind == "count":
        missing = [k for k in args[0] if k not in records]
        if missing or len(set(args[0])) != len(args[0]):
            raise Unsourced(f"counted records that are not in the run (or twice): {missing[:2]}")
        return float(len(args[0]))
    raise Unsourced(f"unknown expression {kind!r}")


def read_field(key: tuple, path: tuple, records: dict) -> float:
    if key not in records:
        raise Unsourced(f"quoted a record that is not in the run: {key}")
    value = records[key].to_dict()
    for p in path:
        value = value[p]
    return float(value)


def problems(finding, recs: list, claims: list[dict]) -> list[str]:
    """What breaks rules 1-3 in one finding (empty: it is honest)."""
    out = []
    claim_tokens = {t for c in claims for t in tokens(c["text"])}
    by_key = {record_key(r): r for r in recs}
    text = str(finding)
    for name in sorted({r.variant for r in recs}, key=len, reverse=True):
        text = text.replace(name, " ")
    quoted = [t for x in getattr(finding, "quoted", ()) for t in tokens(x.text)]  # "8.39e+05": 8.39 and 05
    text = drop_notation(text, quoted)
    for t in tokens(text):
        if t in quoted:
            quoted.remove(t)
        elif t not in claim_tokens:
            out.append(f"{t} is neither quoted from the run nor in a claim")
    for x in getattr(finding, "quoted", ()):
        try:
            again = evaluate(x.num, by_key, claim_tokens)
        except (Unsourced, KeyError) as exc:
            out.append(str(exc))
            continue
        if format(again, x.spec) != x.text:
            out.append(f"{x.text} recomputes to {format(again, x.spec)}")
    return out


def check_run(res: RunResults) -> dict:
    """experiment -> its findings' problems, over every registered experiment that has records in ``res``."""
    found = {}
    for name, exp in registry().items():
        recs = [r for r in res.results if r.experiment == name]
        if not recs or exp.findings is None:
            continue
        info = exp.describe(recs)
        assert all(c["source"].strip() for c in info["claims"]), f"{name}: a claim with no source"
        findings = info["findings"]
        cited = bool(findings) and all(isinstance(f, Finding) for f in findings)
        found[name] = (cited, [p for f in findings for p in problems(f, recs, info["claims"])] if cited else None)
    return found


def test_committed_run_findings_quote_only_the_run_and_the_claims():
    found = check_run(committed_run(H100))
    assert {n for n, (cited, _) in found.items() if not cited} == set()
    bad = {n: p for n, (cited, p) in found.items() if cited and p}
    assert not bad, bad
    assert {"offset_copy", "stride_copy", "coalescing_patterns"} <= {n for n, (cited, _) in found.items() if cited}


@pytest.mark.parametrize("name", [n for n in RUNS if n != H100])
def test_every_other_committed_run_is_quoted_honestly(name):
    """The other runs under docs/ (another GPU, a note's run) reach branches the main run does not."""
    found = check_run(committed_run(name))
    assert not {n: p for n, (cited, p) in found.items() if cited and p}


def _rec(exp, variant, params, median_s, nbytes, pct=None):
    stats = summarize([median_s * f for f in (0.99, 1.0, 1.0, 1.01)]).to_dict()
    return Record(experiment=exp, variant=variant, params=params, bytes=nbytes, flops=None, time_s=stats,
                  gbps=nbytes / median_s / 1e9, gflops=None, pct_of_ceiling=pct, ceiling="copy_gbps" if pct else None,
                  verified=True)


def fake_run() -> RunResults:
    n = 1 << 20
    recs = []
    for variant, slow in (("seed kernel", 1.25), ("4 loads in flight", 1.04)):
        for off in range(17):
            t = 1e-3 * (slow if off % 8 else 1.0) * (1 + off / 1000)
            recs.append(_rec("offset_copy", variant, dict(offset=off, n=n), t, 8 * n, pct=61.0 + off))
        for stride in (1, 2, 8):
            recs.append(_rec("stride_copy", variant, dict(stride=stride, n=n), 1e-3 * stride ** 0.9, 8 * n, pct=70.5))
    for size, n_, scale in (("far above L2", 1 << 24, 1.0), ("seed size", 3 << 20, 0.1)):
        for pattern, slow in (("coalesced", 1.0), ("partial", 1.0), ("permuted", 1.3), ("misaligned", 1.5)):
            recs.append(_rec("coalescing_patterns", pattern, dict(n=n_, size=size, pattern=pattern),
                             4e-4 * scale * slow, 8 * n_))
    recs += library_shapes_records() + stream_map_records()
    return RunResults(meta={}, device={}, ceilings={}, results=recs)


def stream_map_records() -> list:
    """The pinned H2D reference, the naive loop, a staged and a caller-pinned stream_map run (light fn, 1 GiB)."""
    gib, x = 1.0, 1 << 30
    common = dict(gib=gib, chunk_mib=64)
    h2d = _rec("stream_map", "pinned H2D (cudaMemcpyAsync)", common, 0.02, x)
    naive = _rec("stream_map", "naive loop", dict(common, fn="light"), 1.0, 2 * x)
    staged = _rec("stream_map", "gpumemlab.stream_map", dict(common, fn="light", route="staged", workers=8), 0.08,
                  2 * x)
    pinned = _rec("stream_map", "gpumemlab.stream_map", dict(common, fn="light", route="caller_pinned", workers=None),
                  0.025, 2 * x)
    for r in (naive, staged, pinned):
        r.extra["pct_of_pinned_h2d"] = 100.0 * h2d.median_s / r.median_s
    return [h2d, naive, staged, pinned]


def test_stream_map_reports_the_caller_pinned_route_apart_from_the_pageable_best():
    found = registry()["stream_map"].describe(stream_map_records())["findings"]
    assert found[0].startswith("light fn, 1 GiB: stream_map (staged route) moves x at 13.4 GB/s = 25% of pinned H2D")
    assert found[1] == ("light fn, x and out page-locked by the caller: stream_map moves x at 42.9 GB/s = 80% of "
                        "pinned H2D, 3.20x its best pageable route (staged)")
    assert found[2] == ("light fn: stream_map by route / host threads: staged/8: 13.4 GB/s, "
                        "caller_pinned/None: 42.9 GB/s")


def library_shapes_records() -> list:
    """Our records of three library_shapes cases and CuPy's, as derive leaves them."""
    out = []
    tie = "a tie within the noise"
    for i, (fn, dims, axes, ratio, verdict) in enumerate((("sum", [16384, 16384], [0], 1.04, "faster"),
                                                           ("sum", [256, 512, 512], [0, 2], 0.97, tie),
                                                           ("mean", [4096, 64], None, 1.01, tie),
                                                           ("transpose", [3, 70000], None, 0.81, "slower"),
                                                           ("transpose", [64, 128, 256], [0, 2, 1], 1.5, "faster"))):
        params = dict(index=i, function=fn, shape="x".join(map(str, dims)), dims=dims, axes=axes)
        base = "cupy.ascontiguousarray(x.T)" if fn == "transpose" else f"cupy.{fn}"
        variant = f"gpumemlab.{fn}"
        if fn == "transpose" and axes:  # an N-D permutation of 1-byte elements
            params["dtype"] = "int8"
            base, variant = "cupy.ascontiguousarray(x.transpose(axes))", "gpumemlab.transpose(x, axes)"
        ours = _rec("library_shapes", variant, params, 1e-3 / ratio, 8 << 20, pct=80.0 + i)
        ours.extra.update(ratio_to_cupy=ratio, verdict=verdict)
        ours.ceiling = "copy_gbps" if fn == "transpose" else "read_gbps"  # as the experiment declares them
        out += [ours, _rec("library_shapes", base, params, 1e-3, 8 << 20, pct=80.0)]
        out[-1].kind = "baseline"
    return out


def test_library_shapes_findings_quote_the_case_and_tally_per_function():
    recs = library_shapes_records()
    found = registry()["library_shapes"].describe(recs)["findings"]
    assert found[0] == ("sum, 2 shapes: geometric mean 1.00x CuPy, worst sum 256x512x512 axes (0, 2) 0.97x; "
                        "faster 1, a tie within the noise 1, slower 0")
    assert found[3] == (f"sum 16384x16384 axis 0: 1.04x cupy.sum (faster), {recs[0].gbps:.0f} GB/s = 80% of the "
                        "read ceiling")
    assert found[5] == (f"mean 4096x64 over all axes: 1.01x cupy.mean (a tie within the noise), {recs[4].gbps:.0f} "
                        "GB/s = 82% of the read ceiling")
    assert found[6] == (f"transpose 3x70000: 0.81x cupy.ascontiguousarray(x.T) (slower), {recs[6].gbps:.0f} GB/s = 83% "
                        "of the copy ceiling")
    assert found[7] == (f"transpose 64x128x256 axes (0, 2, 1) int8: 1.50x cupy.ascontiguousarray(x.transpose(axes)) "
                        f"(faster), {recs[8].gbps:.0f} GB/s = 84% of the copy ceiling")
    assert len(found) == 3 + 5  # a line per function, then one per case


def test_fake_run_findings_are_honest_and_say_tie_inside_the_noise():
    res = fake_run()
    found = check_run(res)
    assert found["offset_copy"] == (True, []) and found["stride_copy"] == (True, [])
    assert found["coalescing_patterns"] == (True, []) and found["library_shapes"] == (True, [])
    assert found["stream_map"] == (True, [])
    text = registry()["coalescing_patterns"].describe([r for r in res.results if r.experiment == "coalescing_patterns"])
    first = text["findings"][0]
    assert first.startswith("far above L2 (n = 16777216): time relative to coalesced: partial a tie within the noise, "
                            "permuted 1.30x, misaligned 1.50x (seed: partial 1.00x, permuted or misaligned 9.8x")


# ---------------------------------------------------------------- the rules fail where they should

CLAIMS = [dict(text="V100: ~790 GB/s at offset 0; about 4/5 of that otherwise.", source="seed 003, 9.2.1.3")]


def test_a_hard_coded_number_fails():
    rec = _rec("x", "v", dict(n=8), 1e-3, 8000)
    honest = sentence("runs at ", q(field(rec, "gbps"), ".3f"), " GB/s (seed: ", q(claim("790"), ".0f"), " GB/s)")
    assert honest == "runs at 0.008 GB/s (seed: 790 GB/s)" and problems(honest, [rec], CLAIMS) == []
    typed = sentence("runs at ", q(field(rec, "gbps"), ".3f"), " GB/s, 97.3% of aligned")
    assert problems(typed, [rec], CLAIMS) == ["97.3 is neither quoted from the run nor in a claim"]
    assert problems("a plain string: 12.5x", [rec], CLAIMS) == ["12.5 is neither quoted from the run nor in a claim"]


def test_a_claim_figure_not_in_the_claims_fails():
    rec = _rec("x", "v", dict(n=8), 1e-3, 8000)
    f = sentence("seed: ", q(claim("9.8"), ".1f"), "x")
    assert problems(f, [rec], CLAIMS) == ["9.8 is not a figure of the claims"]


def test_a_quote_that_no_longer_matches_the_record_fails():
    rec = _rec("x", "v", dict(n=8), 1e-3, 8000)
    f = sentence("at ", q(field(rec, "gbps") * 1000, ".1f"), " MB/s")
    changed = copy.deepcopy(rec)
    changed.gbps *= 1.1
    assert problems(f, [rec], CLAIMS) == []
    assert problems(f, [changed], CLAIMS) == ["8.0 recomputes to 8.8"]
    other = _rec("x", "v", dict(n=9), 1e-3, 8000)
    assert problems(f, [other], CLAIMS) == [f"quoted a record that is not in the run: {record_key(rec)}"]


def test_a_quote_in_exponent_notation_covers_both_of_its_tokens():
    rec = _rec("x", "v", dict(n=8), 1e-3, 8000)
    f = sentence("max error ", q(field(rec, "gbps") * 1e8, ".3g"), " ulp")
    assert f == "max error 8e+05 ulp" and problems(f, [rec], CLAIMS) == []
    assert problems(Finding("max error 8e+05 ulp"), [rec], CLAIMS) == [
        "8 is neither quoted from the run nor in a claim", "05 is neither quoted from the run nor in a claim"]


def test_a_joined_finding_keeps_the_quotes_of_its_parts():
    rec = _rec("x", "v", dict(m=64, n=32), 1e-3, 8000)
    shape = join("x", (q(field(rec, "params", d), ".0f") for d in ("m", "n")))
    f = join("; ", [sentence(shape, ": ", q(field(rec, "gbps"), ".3f"), " GB/s"), "a plain part"])
    assert f == "64x32: 0.008 GB/s; a plain part" and [x.text for x in f.quoted] == ["64", "32", "0.008"]
    assert problems(f, [rec], CLAIMS) == []


def test_each_arithmetic_kind_recomputes_from_its_records():
    a, b = _rec("x", "a", dict(n=8), 1e-3, 8000), _rec("x", "b", dict(n=8), 4e-3, 8000)
    ta, tb = field(a, "time_s", "median"), field(b, "time_s", "median")
    f = sentence(q(100 / (ta / tb), ".0f"), "% ", q((tb - ta) / ta * 100, "+.0f"), "% ", q(ta + tb, ".3f"), " s")
    assert f == "400% +300% 0.005 s" and problems(f, [a, b], CLAIMS) == []
    slower = copy.deepcopy(b)
    slower.time_s["median"] = 5e-3
    assert problems(f, [a, slower], CLAIMS) == ["400 recomputes to 500", "+300 recomputes to +400",
                                                "0.005 recomputes to 0.006"]


def test_a_named_constant_is_read_back_from_its_module_and_products_recompute():
    rec = _rec("x", "v", dict(n=8), 1e-3, 8000)
    reach = constant("gpumemlab.experiments._transfers", "REACH")
    f = sentence("reaches ", q(reach * 100, ".0f"), "% of it; ", q(field(rec, "gbps") * field(rec, "bytes"), ".0f"))
    assert f == "reaches 90% of it; 64" and problems(f, [rec], CLAIMS) == []
    outside = Num(0.9, ("constant", "gpumemlab.bench.stats", "REACH"))
    assert problems(sentence(q(outside * 100, ".0f"), "%"), [rec], CLAIMS) == [
        "gpumemlab.bench.stats.REACH is not a constant of an experiment"]


def test_names_with_digits_are_not_numbers():
    assert tokens("V100 float4 sm_90 L2 x4: 1,234.5 GB/s at 4/5, 12K and 3M") == ["1234.5", "4", "5", "12", "3"]
    assert tokens("(seed 000: uncoalesced; seed 004 claimed 30%)") == ["30"]
    assert tokens("cudaMemcpy2D 54.2 GB/s vs 1-D 55.0 GB/s, 2-D textures, 3-way") == ["54.2", "55.0", "3"]


def test_counts_and_geometric_means_recompute_from_the_run():
    a, b = _rec("x", "a", dict(n=8), 1e-3, 8000), _rec("x", "b", dict(n=8), 4e-3, 8000)
    f = sentence(q(count([a, b]), ".0f"), " records, geometric mean ",
                 q(geomean([field(a, "time_s", "median"), field(b, "time_s", "median")]) * 1e3, ".1f"), " ms")
    assert f == "2 records, geometric mean 2.0 ms" and problems(f, [a, b], CLAIMS) == []
    assert problems(f, [a], CLAIMS) == [f"counted records that are not in the run (or twice): {[record_key(b)]}",
                                        f"quoted a record that is not in the run: {record_key(b)}"]


def test_a_power_keeps_its_quoted_side_only():
    rec = _rec("x", "v", dict(n=16384), 1e-3, 8000)
    square = sentence(q(field(rec, "params", "n"), ".0f"), "^2 floats")
    power = sentence("n=2^", q(log2(field(rec, "params", "n")), ".1f"))
    assert (square, power) == ("16384^2 floats", "n=2^14.0")
    assert problems(square, [rec], CLAIMS) == [] and problems(power, [rec], CLAIMS) == []
    assert problems("n=2^14.0", [rec], CLAIMS) == ["2 is neither quoted from the run nor in a claim",
                                                   "14.0 is neither quoted from the run nor in a claim"]
    assert problems(sentence(power, ", 3^7"), [rec], CLAIMS) == [
        "3 is neither quoted from the run nor in a claim", "7 is neither quoted from the run nor in a claim"]

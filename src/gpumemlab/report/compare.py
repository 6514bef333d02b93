"""Runs side by side: two results.json (a pair: B against A) or more (a fleet: each run against the
fleet's median). Pure Python over the JSON documents; no GPU needed.

Records match on (experiment, variant, params). A pair's speed ratio is time_A / time_B of the medians
(> 1: B is faster); its range runs from the pessimistic to the optimistic end of the two spreads
(p10-p90 of each side, or min-max), and a range that contains 1 is a tie within noise: the two
spreads overlap, so neither side won. When ``ignore`` drops size parameters from the match (runs on
GPUs whose working sets are sized from their own L2), records that moved different amounts of work
are compared per byte (or per flop) instead of per run.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field

from ..bench.records import POSITIVE, Record, RunResults, check_number
from ..errors import UsageError
from .write import input_file
from .format import fmt_num, fmt_time, merged_lines
from .markdown import _table, device_line

SPREADS = {"p10-p90": ("p10", "p90"), "min-max": ("min", "max")}
# Fleet outliers: modified z-score 0.6745 (t - median) / MAD above 3.5 (Iglewicz and Hoaglin, "How to
# Detect and Handle Outliers", 1993) and, so that a tight fleet does not flag noise, at least OUTLIER_REL
# away from the fleet median.
OUTLIER_Z = 3.5
OUTLIER_REL = 0.05


@dataclass
class Run:
    label: str
    path: str
    results: RunResults


def load_runs(paths: list[str]) -> list[Run]:
    """Load results.json files; labels are their folder names (the paths as given where those collide)."""
    runs = []
    for p in paths:
        path = input_file(p)
        res = RunResults.load(path)  # ResultsError (one line) names the file, the record and the field
        runs.append(Run(path.resolve().parent.name or path.stem, p, res))
    for candidate in ([r.label for r in runs], [r.path for r in runs]):
        if len(set(candidate)) == len(candidate):
            break
    else:
        candidate = [f"{r.path}#{i + 1}" for i, r in enumerate(runs)]
    for run, label in zip(runs, candidate):
        run.label = label
    return runs


def match_key(rec: Record, ignore=()) -> tuple:
    return rec.experiment, rec.variant, tuple(sorted((k, json.dumps(v)) for k, v in rec.params.items()
                                                     if k not in ignore))


def _index(res: RunResults, ignore) -> dict[tuple, Record]:
    out = {}
    for r in res.results:
        k = match_key(r, ignore)
        if k in out:
            raise UsageError(f"{r.experiment}/{r.variant}: several records share the parameters "
                             f"{dict(k[2])} once {', '.join(ignore)} are ignored")
        out[k] = r
    return out


def _work(recs: list[Record]) -> str | None:
    """What to divide times by so that the records compare: None when they did the same work."""
    if len({(r.bytes, r.flops) for r in recs}) == 1:
        return None
    for unit in ("bytes", "flops"):
        if all(getattr(r, unit) for r in recs):
            return unit
    raise UsageError(f"{recs[0].experiment}/{recs[0].variant}: the matched records did different work and do "
                     "not all declare bytes or flops to compare per unit of")


def _times(rec: Record, unit: str | None, spread: str | None) -> tuple[float, float, float]:
    """(median, low, high) time, per byte or flop when unit is set; low = high = median without a spread.
    Records from a file were checked when it was read; records built in Python are checked here."""
    keys = ("median",) + (SPREADS[spread] if spread else ())
    where = f"{rec.experiment}/{rec.variant} time_s"
    for k in keys:
        if k not in rec.time_s:
            raise UsageError(f"{where}: no {k!r} for the {spread} spread (try --spread min-max)")
        v = rec.time_s[k]
        problem = check_number(v, POSITIVE, f"{where}: {k!r}")
        if problem or isinstance(v, bool) or not isinstance(v, (int, float)):
            raise UsageError(problem or f"{where}: {k!r} is not a number")
    per = getattr(rec, unit) if unit else 1
    t = [rec.time_s[k] / per for k in keys]
    return (t[0], t[0], t[0]) if len(t) == 1 else (t[0], t[1], t[2])


# ------------------------------------------------------------------------------------------- pairs

@dataclass
class Match:
    experiment: str
    variant: str
    params: dict          # A's parameters (B's equal them, less the ignored ones)
    kind: str
    a_median_s: float
    a_lo_s: float
    a_hi_s: float
    b_median_s: float
    b_lo_s: float
    b_hi_s: float
    ratio: float          # time_A / time_B (per unit of `per` when set): > 1 means B is faster
    ratio_lo: float       # A's low end over B's high end: the least B can be faster
    ratio_hi: float
    verdict: str          # "faster", "slower" (B against A) or "tie" (the range contains 1)
    per: str | None = None
    verified: tuple = (True, True)


def compare_records(a: Record, b: Record, spread: str = "p10-p90") -> Match:
    unit = _work([a, b])
    (am, alo, ahi), (bm, blo, bhi) = _times(a, unit, spread), _times(b, unit, spread)
    ratio, lo, hi = am / bm, alo / bhi, ahi / blo
    verdict = "tie" if lo <= 1 <= hi else ("faster" if ratio > 1 else "slower")
    return Match(a.experiment, a.variant, a.params, a.kind, a.time_s["median"], a.time_s[SPREADS[spread][0]],
                 a.time_s[SPREADS[spread][1]], b.time_s["median"], b.time_s[SPREADS[spread][0]],
                 b.time_s[SPREADS[spread][1]], ratio, lo, hi, verdict, unit, (a.verified, b.verified))


@dataclass
class PairComparison:
    a: Run
    b: Run
    spread: str
    ignore: tuple
    matches: list[Match]
    only_a: list[tuple] = field(default_factory=list)
    only_b: list[tuple] = field(default_factory=list)

    def summary(self) -> dict[str, dict]:
        """Per experiment: counts of each verdict and the geometric mean, min and max of the ratios."""
        out: dict[str, dict] = {}
        for m in self.matches:
            out.setdefault(m.experiment, []).append(m)
        return {exp: dict(matched=len(ms), faster=sum(m.verdict == "faster" for m in ms),
                          slower=sum(m.verdict == "slower" for m in ms), tie=sum(m.verdict == "tie" for m in ms),
                          geomean=math.exp(statistics.fmean(math.log(m.ratio) for m in ms)),
                          min=min(m.ratio for m in ms), max=max(m.ratio for m in ms))
                for exp, ms in out.items()}

    def failures(self, threshold: float) -> list[Match]:
        """Matches whose ratio is below `threshold` outside the noise (ties never fail)."""
        return [m for m in self.matches if m.ratio < threshold and m.verdict != "tie"]

    def to_dict(self) -> dict:
        return dict(a=_run_info(self.a), b=_run_info(self.b), spread=self.spread, ignore=list(self.ignore),
                    ceilings=_ceiling_rows([self.a, self.b]), summary=self.summary(),
                    matches=[asdict(m) for m in self.matches],
                    only_a=[_key_dict(k) for k in self.only_a], only_b=[_key_dict(k) for k in self.only_b])


def compare_pair(a: Run, b: Run, spread: str = "p10-p90", ignore=()) -> PairComparison:
    if spread not in SPREADS:
        raise UsageError(f"unknown spread {spread!r}: expected one of {', '.join(SPREADS)}")
    ia, ib = _index(a.results, ignore), _index(b.results, ignore)
    matches = [compare_records(ra, ib[k], spread) for k, ra in ia.items() if k in ib]
    return PairComparison(a, b, spread, tuple(ignore), matches, [k for k in ia if k not in ib],
                          [k for k in ib if k not in ia])


# ------------------------------------------------------------------------------------------- fleets

@dataclass
class FleetRow:
    experiment: str
    variant: str
    params: dict
    medians_s: list       # per run: the record's median time, None where the run lacks the record
    fleet_median: float   # median over the runs of the median time (per unit of `per` when set)
    relative: list        # per run: fleet median / own time (> 1: faster than the fleet), None if absent
    outliers: list        # indices of the runs flagged (see OUTLIER_Z, OUTLIER_REL)
    per: str | None = None


def _outliers(times: dict[int, float], median: float, rel: float) -> list[int]:
    mad = statistics.median(abs(t - median) for t in times.values())
    flagged = []
    for i, t in times.items():
        far = abs(t / median - 1) > rel
        z = math.inf if mad == 0 else 0.6745 * abs(t - median) / mad
        if far and z > OUTLIER_Z:
            flagged.append(i)
    return flagged


@dataclass
class FleetComparison:
    runs: list[Run]
    ignore: tuple
    rel: float
    rows: list[FleetRow]

    def failures(self, threshold: float) -> list[tuple[FleetRow, int]]:
        """(row, run index) of outliers whose speed relative to the fleet median is below `threshold`."""
        return [(row, i) for row in self.rows for i in row.outliers if row.relative[i] < threshold]

    def to_dict(self) -> dict:
        return dict(runs=[_run_info(r) for r in self.runs], ignore=list(self.ignore),
                    outlier_rule=dict(modified_z_above=OUTLIER_Z, relative_above=self.rel),
                    ceilings=_ceiling_rows(self.runs), rows=[asdict(r) for r in self.rows])


def compare_fleet(runs: list[Run], ignore=(), rel: float = OUTLIER_REL) -> FleetComparison:
    """Every record held by at least three runs, each run's median against the fleet's."""
    indexes = [_index(r.results, ignore) for r in runs]
    keys = list(dict.fromkeys(k for ix in indexes for k in ix))
    rows = []
    for k in keys:
        recs = {i: ix[k] for i, ix in enumerate(indexes) if k in ix}
        if len(recs) < 3:
            continue
        unit = _work(list(recs.values()))
        times = {i: _times(r, unit, None)[0] for i, r in recs.items()}
        median = statistics.median(times.values())
        first = next(iter(recs.values()))
        rows.append(FleetRow(first.experiment, first.variant, first.params,
                             [recs[i].time_s["median"] if i in recs else None for i in range(len(runs))],
                             median, [median / times[i] if i in times else None for i in range(len(runs))],
                             _outliers(times, median, rel), unit))
    return FleetComparison(runs, tuple(ignore), rel, rows)


# ------------------------------------------------------------------------------------------- shared

DEVICE_FIELDS = ("name", "cc", "sm_count", "l2_bytes", "total_memory_bytes", "sm_clock_khz", "memory_clock_khz",
                 "memory_bus_width_bits", "ecc_enabled", "driver_version", "nvrtc_version")
META_FIELDS = ("date", "version", "command", "quick")


def _run_info(run: Run) -> dict:
    meta = run.results.meta
    return dict(label=run.label, path=run.path, device={k: run.results.device.get(k) for k in DEVICE_FIELDS},
                meta={k: meta.get(k) for k in META_FIELDS}, versions=meta.get("versions") or {},
                merged_runs=[{k: m.get(k) for k in ("experiments", "command", "date")}
                             for m in meta.get("merged_runs", [])])


def _ceiling_rows(runs: list[Run]) -> list[dict]:
    names = dict.fromkeys(n for r in runs for n in r.results.ceilings)
    rows = []
    for name in names:
        vals = [r.results.ceilings.get(name, {}).get("value") for r in runs]
        unit = next(r.results.ceilings[name].get("unit", "") for r in runs if name in r.results.ceilings)
        rows.append(dict(ceiling=name, unit=unit, values=vals))
    return rows


def _key_dict(k: tuple) -> dict:
    return dict(experiment=k[0], variant=k[1], params={p: json.loads(v) for p, v in k[2]})


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "-"


def _spread(median: float, lo: float, hi: float) -> str:
    return f"-{100 * (median - lo) / median:.1f}/+{100 * (hi - median) / median:.1f}%"


def _per_work(value: float, per: str | None) -> str:
    """A fleet median: a time, or the rate it stands for when times were divided by bytes or flops."""
    if per is None:
        return fmt_time(value)
    return f"{fmt_num(1 / value / 1e9)} {'GB/s' if per == 'bytes' else 'GFLOP/s'}"


def _header(runs: list[Run]) -> list[str]:
    lines = ["## Runs", ""]
    rows = [("device", *(device_line(r.results.device) for r in runs)),
            ("file", *(r.path for r in runs))]
    rows += [(k, *(str(r.results.meta.get(k, "-")) for r in runs)) for k in META_FIELDS]
    if any(r.results.meta.get("merged_runs") for r in runs):  # records of some experiments come from other runs
        rows.append(("merged from", *("; ".join(merged_lines(r.results.meta, code=str)) or "-" for r in runs)))
    for field_ in ("sm_clock_khz", "memory_clock_khz", "memory_bus_width_bits", "driver_version"):
        rows.append((field_, *(str(r.results.device.get(field_, "-")) for r in runs)))
    pkgs = dict.fromkeys(p for r in runs for p in (r.results.meta.get("versions") or {}))
    rows += [(p, *(str((r.results.meta.get("versions") or {}).get(p, "-")) for r in runs)) for p in pkgs]
    lines += [_table(("", *(r.label for r in runs)), rows), "", "## Ceilings", ""]
    crow = []
    for c in _ceiling_rows(runs):
        vals = [f"{fmt_num(v)} {c['unit']}" if v is not None else "-" for v in c["values"]]
        if len(runs) == 2:
            a, b = c["values"]
            vals.append(f"{b / a:.3f}" if a and b else "-")
        crow.append((c["ceiling"], *vals))
    heads = ("ceiling", *(r.label for r in runs)) + (("B/A",) if len(runs) == 2 else ())
    return lines + [_table(heads, crow), ""]


def render_pair(cmp: PairComparison) -> str:
    a, b = cmp.a.label, cmp.b.label
    lines = ["# gpumemlab compare", "", f"A = {a}, B = {b}.", ""] + _header([cmp.a, cmp.b])
    lines += ["## Summary per experiment", "",
              f"Speed ratio = time_A / time_B of the medians (> 1: B is faster). A record is a tie when the range "
              f"from A's {cmp.spread} and B's {cmp.spread} spreads contains 1.", ""]
    lines += [_table(("experiment", "matched", "B faster", "B slower", "tie", "geomean B/A", "min", "max"),
                     [(e, s["matched"], s["faster"], s["slower"], s["tie"], f"{s['geomean']:.3f}",
                       f"{s['min']:.3f}", f"{s['max']:.3f}") for e, s in cmp.summary().items()]), ""]
    note = " Ratios marked * are per byte (or flop): the runs moved different amounts of work." \
        if any(m.per for m in cmp.matches) else ""
    lines += ["## Records", "",
              f"Spreads are {cmp.spread} relative to each median; unverified records are marked (unverified).{note}",
              ""]
    rows = []
    for m in cmp.matches:
        flag = "" if all(m.verified) else " (unverified)"
        rows.append((m.experiment, m.variant + flag, _params(m.params),
                     fmt_time(m.a_median_s), _spread(m.a_median_s, m.a_lo_s, m.a_hi_s),
                     fmt_time(m.b_median_s), _spread(m.b_median_s, m.b_lo_s, m.b_hi_s),
                     f"{m.ratio:.3f}" + ("*" if m.per else ""), f"{m.ratio_lo:.3f}-{m.ratio_hi:.3f}",
                     {"faster": "B faster", "slower": "B slower", "tie": "tie (within noise)"}[m.verdict]))
    lines += [_table(("experiment", "variant", "params", f"{a} median", "spread", f"{b} median", "spread",
                      "speed B/A", "range", "verdict"), rows), ""]
    for side, keys in ((a, cmp.only_a), (b, cmp.only_b)):
        if keys:
            lines += [f"## Only in {side} ({len(keys)} records, not compared)", ""]
            lines += [f"- {k[0]} / {k[1]} / {_params(_key_dict(k)['params'])}" for k in keys] + [""]
    return "\n".join(lines)


def render_fleet(cmp: FleetComparison) -> str:
    runs = cmp.runs
    lines = ["# gpumemlab compare (fleet)", ""] + _header(runs)
    lines += ["## Records across the fleet", "",
              "Each cell: the run's median time and, in parentheses, the fleet median over its own time (> 1: faster "
              f"than the fleet). Flagged **!** when an outlier: modified z-score above {OUTLIER_Z} (0.6745 x distance "
              f"to the fleet median / median absolute deviation) and more than {100 * cmp.rel:g}% from the fleet "
              "median. Records held by fewer than three runs are left out.", ""]
    rows = []
    for r in cmp.rows:
        cells = []
        for i, (t, rel) in enumerate(zip(r.medians_s, r.relative)):
            cells.append("-" if t is None else f"{fmt_time(t)} ({rel:.3f})" + (" **!**" if i in r.outliers else ""))
        rows.append((r.experiment, r.variant, _params(r.params), _per_work(r.fleet_median, r.per), *cells))
    lines += [_table(("experiment", "variant", "params", "fleet median", *(r.label for r in runs)), rows), ""]
    flagged = sum(len(r.outliers) for r in cmp.rows)
    lines += [f"{len(cmp.rows)} records compared, {flagged} outliers flagged.", ""]
    return "\n".join(lines)

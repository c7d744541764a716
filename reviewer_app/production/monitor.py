"""Production monitor statistics: pure functions over the feedback frame (``storage.repositories.feedback``).

Windows are calendar windows in UTC: ``1d`` a day from midnight, ``7d`` an ISO week from Monday 00:00, so a
window means the same whenever the monitor runs and two runs over more data agree on the windows they share.

Per model, per model and scenario, per feedback scale and window: the volume, the feedback with a 95% CI
(thumbs, the -1..1 scale: the share of +1 with Wilson's score interval; any other scale: the mean with the
t interval), latency and time to first token as median and p95 with how many events had them.

Tests, each named in its row, none random (so the same data always give the same verdicts):

* feedback between two windows (or two models): thumbs, the two-proportion z-test (pooled variance), or
  Fisher's exact test when an expected count of the 2 x 2 table is under 5; other scales, Welch's t-test;
* latency and TTFT: the Mann-Whitney U test (a shift of the distribution; the rows show the medians).

A window is compared with the model's previous window that has events (a quiet day is skipped, and the row
says which window it was compared with). A canary (``NEW=CURRENT``) is compared with the current model in
every window where both have events, and over all those windows together. Every p-value of the result is
Holm-adjusted together (one family), and a change is flagged when its adjusted p is under 0.05.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.inference import ALPHA, holm, t_quantile, t_two_sided_p
from reviewer_app.analysis.two_sample import EXACT_MAX_PRODUCT, fisher_exact, mann_whitney
from reviewer_app.domain.production import (
    THUMBS,
    WINDOWS,
    ChangeRow,
    MonitorResult,
    PanelProduction,
    ProductionModel,
    ProductionPair,
    WindowRow,
    scale_label,
)
from reviewer_app.domain.report import PairRow, RankingRow

DAY_MS = 86_400_000
Z95 = 1.959963984540054  # the standard normal's 0.975 quantile
FISHER_BELOW = 5.0  # an expected count under this: Fisher's exact test instead of the z-test
Z_TEST = "two-proportion z-test"
FISHER = "Fisher's exact test"
WELCH = "Welch's t-test"
MANN_WHITNEY = "Mann-Whitney U test"
LATENCY_METRICS = ("latency_ms", "ttft_ms")


def window_days(ts_ms: np.ndarray, window: str) -> np.ndarray:
    """The first day (days since 1970-01-01, UTC) of the window of each timestamp: the day itself (``1d``) or
    the Monday of its week (``7d``; 1970-01-01 was a Thursday, day 3 of its week)."""
    if window not in WINDOWS:
        raise ValueError(f"unknown window {window!r}; use one of {', '.join(WINDOWS)}")
    days = np.asarray(ts_ms, dtype=np.int64) // DAY_MS
    if window == "7d":
        days = days - (days + 3) % 7
    return days


def day_label(day: int) -> str:
    """Day number as YYYY-MM-DD."""
    return str(np.datetime64(int(day), "D"))


def wilson(k: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for k successes out of n (Wilson 1927), vectorised; NaN where n is 0."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def mean_ci(mean: np.ndarray, var: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The t 95% interval of a mean (NaN where n < 2)."""
    n = np.asarray(n, dtype=float)
    df = np.maximum(n - 1, 1)
    half = t_quantile(0.975, df) * np.sqrt(np.asarray(var, dtype=float) / n)
    half = np.where(n >= 2, half, np.nan)
    return mean - half, mean + half


@dataclass(frozen=True)
class _Sample:
    """What the tests need of one group of events: counts and moments of the feedback, and its latency and
    TTFT values sorted (NaN left out): sorted once per window, they serve both tests the window is in."""

    n: int
    up: int  # thumbs: events with +1
    mean: float
    var: float
    timings: tuple[np.ndarray, ...]  # per LATENCY_METRICS, sorted


def sorted_mann_whitney(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p of the Mann-Whitney U test of sorted ``x`` against sorted ``y``: the same p-value as
    ``two_sample.mann_whitney`` (which it calls for samples small enough for the exact distribution), with
    U counted by binary search instead of ranking the pooled sample: a million latencies over a thousand
    window pairs took seconds that way."""
    n1, n2 = len(x), len(y)
    if n1 * n2 <= EXACT_MAX_PRODUCT:
        return mann_whitney(x, y).p_value
    pooled = np.sort(np.concatenate([x, y]), kind="stable")  # two sorted runs: a merge
    starts = np.flatnonzero(np.r_[True, pooled[1:] != pooled[:-1]])
    sizes = np.diff(np.r_[starts, len(pooled)]).astype(float)
    below = np.searchsorted(y, x, "left").sum()  # pairs with y < x; ties count half
    u = float(below if len(starts) == n1 + n2 else (below + np.searchsorted(y, x, "right").sum()) / 2)
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - float((sizes**3 - sizes).sum()) / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def quantile_sorted(values: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile of sorted ``values`` by linear interpolation (numpy's and pandas' default)."""
    if not len(values):
        return None
    pos = q * (len(values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(values) - 1)
    return float(values[lo] + (values[hi] - values[lo]) * (pos - lo))


def feedback_test(a: _Sample, b: _Sample, thumbs: bool) -> tuple[str, float]:
    """The test of ``b`` against ``a`` on feedback (see the module's docstring): its name and two-sided p."""
    if thumbs:
        n = a.n + b.n
        k = a.up + b.up
        pooled = k / n
        expected = min(a.n * pooled, a.n * (1 - pooled), b.n * pooled, b.n * (1 - pooled))
        if expected < FISHER_BELOW:
            return FISHER, fisher_exact(a.up, a.n - a.up, b.up, b.n - b.up).p_value
        se = math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n))
        if se == 0:
            return Z_TEST, 1.0
        z = (b.up / b.n - a.up / a.n) / se
        return Z_TEST, math.erfc(abs(z) / math.sqrt(2))
    if a.n < 2 or b.n < 2:
        return WELCH, math.nan
    va, vb = a.var / a.n, b.var / b.n
    if va + vb == 0:
        return WELCH, 1.0 if a.mean == b.mean else 0.0
    t = (b.mean - a.mean) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return WELCH, float(t_two_sided_p(np.array([t]), np.array([df]))[0])


def _prepare(frame: pd.DataFrame, window: str) -> pd.DataFrame:
    fb = frame["feedback"].to_numpy(dtype=float)
    return frame.assign(
        win=window_days(frame["ts_ms"].to_numpy(), window),
        up=(fb > 0).astype(np.int64),
        fb2=fb * fb,
    )


Record = dict[str, Any]
Samples = dict[tuple[Any, ...], tuple[np.ndarray, ...]]


def _stats(frame: pd.DataFrame, keys: list[str]) -> list[Record]:
    """Per group of ``keys`` (sorted by them): n, up, mean, var, latency/TTFT counts and quantiles and the
    group's :class:`_Sample` (``sample``), as plain records (a few thousand groups at most)."""
    grouped = frame.groupby(keys, observed=True, sort=True)
    out = grouped.agg(
        n=("feedback", "size"),
        up=("up", "sum"),
        s1=("feedback", "sum"),
        s2=("fb2", "sum"),
        latency_n=("latency_ms", "count"),
        ttft_n=("ttft_ms", "count"),
    )
    out["mean"] = out["s1"] / out["n"]
    out["var"] = np.maximum((out["s2"] - out["s1"] ** 2 / out["n"]) / np.maximum(out["n"] - 1, 1), 0.0)
    records = [{str(k): v for k, v in r.items()} for r in out.reset_index().to_dict("records")]
    timings = [frame[m].to_numpy(dtype=float) for m in LATENCY_METRICS]
    samples: Samples = {}
    for key, where in grouped.indices.items():
        rows = np.asarray(where)
        sorted_timings = []
        for values in timings:
            mine = values[rows]
            sorted_timings.append(np.sort(mine[np.isfinite(mine)]))
        samples[key if isinstance(key, tuple) else (key,)] = tuple(sorted_timings)
    for r in records:
        key = tuple(r[k] for k in keys)
        r["sample"] = _Sample(int(r["n"]), int(r["up"]), float(r["mean"]), float(r["var"]), samples[key])
        for metric, values in zip(LATENCY_METRICS, samples[key], strict=True):
            r[f"{metric}_p50"] = quantile_sorted(values, 0.5)
            r[f"{metric}_p95"] = quantile_sorted(values, 0.95)
    return records


def _none(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _thumbs(r: Record) -> bool:
    return (float(r["scale_min"]), float(r["scale_max"])) == THUMBS


def _window_rows(records: list[Record], with_scenario: bool) -> list[WindowRow]:
    if not records:
        return []
    n = np.array([r["n"] for r in records], dtype=float)
    up = np.array([r["up"] for r in records], dtype=float)
    w_lo, w_hi = wilson(up, n)
    t_lo, t_hi = mean_ci(np.array([r["mean"] for r in records]), np.array([r["var"] for r in records]), n)
    rows = []
    for i, r in enumerate(records):
        thumbs = _thumbs(r)
        rows.append(
            WindowRow(
                model=str(r["model"]),
                scenario=str(r["scenario"]) if with_scenario else None,
                scale=scale_label(float(r["scale_min"]), float(r["scale_max"])),
                window=day_label(int(r["win"])),
                n=int(r["n"]),
                mean=float(up[i] / n[i]) if thumbs else float(r["mean"]),
                ci_low=_none(w_lo[i] if thumbs else t_lo[i]),
                ci_high=_none(w_hi[i] if thumbs else t_hi[i]),
                ci_method="Wilson" if thumbs else "t",
                latency_n=int(r["latency_n"]),
                latency_p50=_none(r["latency_ms_p50"]),
                latency_p95=_none(r["latency_ms_p95"]),
                ttft_n=int(r["ttft_n"]),
                ttft_p50=_none(r["ttft_ms_p50"]),
                ttft_p95=_none(r["ttft_ms_p95"]),
            )
        )
    return rows


@dataclass(frozen=True)
class _Where:
    """Which comparison a test belongs to (the first fields of its ChangeRow)."""

    kind: str
    model: str
    against: str
    scenario: str | None
    scale: str
    window: str
    before_window: str


@dataclass(frozen=True)
class _Test:
    """A test before Holm: everything of a ChangeRow but the adjusted p and the flag."""

    where: _Where
    metric: str
    before: float
    after: float
    n_before: int
    n_after: int
    test: str
    p_value: float


def _compare(a: _Sample, b: _Sample, thumbs: bool, where: _Where) -> list[_Test]:
    """Feedback, latency and TTFT of ``b`` against ``a``."""
    out: list[_Test] = []
    test, p = feedback_test(a, b, thumbs)
    mean_a = a.up / a.n if thumbs else a.mean
    mean_b = b.up / b.n if thumbs else b.mean
    if math.isfinite(p):
        out.append(_Test(where, "feedback", mean_a, mean_b, a.n, b.n, test, p))
    for metric, x, y in zip(LATENCY_METRICS, a.timings, b.timings, strict=True):
        if len(x) == 0 or len(y) == 0:
            continue
        median_x, median_y = quantile_sorted(x, 0.5) or 0.0, quantile_sorted(y, 0.5) or 0.0
        p_value = sorted_mann_whitney(x, y)
        out.append(_Test(where, metric, median_x, median_y, len(x), len(y), MANN_WHITNEY, p_value))
    return out


def _window_tests(records: list[Record], keys: list[str]) -> list[_Test]:
    """Each window of each series against the series' previous window with events (``records`` come sorted
    by ``keys``, the window last, so a series' windows follow each other in time order)."""
    series_keys = keys[:-1]
    out: list[_Test] = []
    previous: Record | None = None
    for r in records:
        key = tuple(r[k] for k in series_keys)
        if previous is not None and tuple(previous[k] for k in series_keys) == key:
            where = _Where(
                kind="window",
                model=str(r["model"]),
                against=str(r["model"]),
                scenario=str(r["scenario"]) if "scenario" in series_keys else None,
                scale=scale_label(float(r["scale_min"]), float(r["scale_max"])),
                window=day_label(int(r["win"])),
                before_window=day_label(int(previous["win"])),
            )
            out += _compare(previous["sample"], r["sample"], _thumbs(r), where)
        previous = r
    return out


def _canary_tests(records: list[Record], canaries: Sequence[tuple[str, str]]) -> list[_Test]:
    """Each canary against its current model: per shared window and scale, and over all of those windows."""
    out: list[_Test] = []
    by_key = {(str(r["model"]), float(r["scale_min"]), float(r["scale_max"]), int(r["win"])): r for r in records}
    for new, current in canaries:
        shared = sorted({k[1:] for k in by_key if k[0] == new} & {k[1:] for k in by_key if k[0] == current})
        for scale_min, scale_max in dict.fromkeys((lo, hi) for lo, hi, _ in shared):
            thumbs = (scale_min, scale_max) == THUMBS
            wins = [w for lo, hi, w in shared if (lo, hi) == (scale_min, scale_max)]
            scale = scale_label(scale_min, scale_max)
            before, after = [], []
            for w in wins:
                a = by_key[(current, scale_min, scale_max, w)]["sample"]
                b = by_key[(new, scale_min, scale_max, w)]["sample"]
                before.append(a)
                after.append(b)
                out += _compare(a, b, thumbs, _Where("canary", new, current, None, scale, day_label(w), day_label(w)))
            where = _Where("canary", new, current, None, scale, "overall", "overall")
            out += _compare(_pool(before), _pool(after), thumbs, where)
    return out


def _pool(parts: list[_Sample]) -> _Sample:
    """Several windows' samples as one (moments from the sums; timings merged in order)."""
    n = sum(p.n for p in parts)
    s1 = sum(p.n * p.mean for p in parts)
    s2 = sum(p.var * (p.n - 1) + p.n * p.mean**2 for p in parts)
    var = max((s2 - s1**2 / n) / max(n - 1, 1), 0.0)
    timings = tuple(
        np.sort(np.concatenate([p.timings[k] for p in parts]), kind="stable") for k in range(len(LATENCY_METRICS))
    )
    return _Sample(n, sum(p.up for p in parts), s1 / n, var, timings)


def _adjusted(tests: list[_Test]) -> tuple[ChangeRow, ...]:
    adjusted = holm(np.array([t.p_value for t in tests], dtype=float))
    return tuple(
        ChangeRow(
            kind=t.where.kind,
            model=t.where.model,
            against=t.where.against,
            scenario=t.where.scenario,
            scale=t.where.scale,
            metric=t.metric,
            window=t.where.window,
            before_window=t.where.before_window,
            before=t.before,
            after=t.after,
            n_before=t.n_before,
            n_after=t.n_after,
            change=t.after - t.before,
            test=t.test,
            p_value=t.p_value,
            p_adjusted=float(q),
            flagged=bool(q < ALPHA),
        )
        for t, q in zip(tests, adjusted, strict=True)
    )


def _iso(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def build_monitor(
    frame: pd.DataFrame, window: str = "1d", canaries: Sequence[tuple[str, str]] = (), *, scenarios: bool = True
) -> MonitorResult:
    """The monitor over ``frame`` (the feedback frame's columns): window rows per model (and per model and
    scenario when ``scenarios``), the tests between consecutive windows and of each canary (NEW, CURRENT),
    Holm-adjusted together. Raises ValueError for an unknown ``window``."""
    window_days(np.array([], dtype=np.int64), window)
    notes: list[str] = []
    models = tuple(sorted({str(m) for m in frame["model"].unique()})) if len(frame) else ()
    for new, current in canaries:
        missing = [m for m in (new, current) if m not in models]
        if missing:
            notes.append(f"Canary {new}={current}: no feedback for {', '.join(missing)}; not compared.")
    if not len(frame):
        return MonitorResult(
            window=window,
            first_event=None,
            last_event=None,
            events=0,
            models=(),
            canaries=tuple(canaries),
            windows=(),
            changes=(),
            notes=tuple(notes),
        )
    data = _prepare(frame, window)
    model_keys = ["model", "scale_min", "scale_max", "win"]
    stats = _stats(data, model_keys)
    window_rows = _window_rows(stats, with_scenario=False)
    tests = _window_tests(stats, model_keys)
    if scenarios and data["scenario"].notna().any():
        scen_keys = ["model", "scenario", "scale_min", "scale_max", "win"]
        named = data[data["scenario"].notna()]
        scen_stats = _stats(named, scen_keys)
        window_rows += _window_rows(scen_stats, with_scenario=True)
        tests += _window_tests(scen_stats, scen_keys)
    tests += _canary_tests(stats, canaries)
    ts = data["ts_ms"].to_numpy()
    return MonitorResult(
        window=window,
        first_event=_iso(int(ts.min())),
        last_event=_iso(int(ts.max())),
        events=len(data),
        models=models,
        canaries=tuple(canaries),
        windows=tuple(window_rows),
        changes=_adjusted(tests),
        notes=tuple(notes),
    )


# --- panel against production -------------------------------------------------------------------------------


def _p_text(p: float) -> str:
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.2g}"


def panel_vs_production(
    ranking: Sequence[RankingRow],
    pairs: Sequence[PairRow],
    feedback: pd.DataFrame,
    *,
    dimension: str | None = None,
) -> PanelProduction:
    """Whether production feedback and the panel order the models of a batch the same way.

    ``ranking`` and ``pairs`` are a batch report's overall rows (``OverallReport.ranking`` / ``.pairs``);
    ``dimension`` picks the ranking's dimension (default: "overall" when present, else the first row's).
    ``feedback`` is the feedback frame (``storage.repositories.feedback.feedback_frame``). Models in both are
    compared on the feedback scale most of their events use (other scales are left out, with a note): every
    pair is tested as the monitor tests two windows, Holm-adjusted over the pairs, and said in a sentence
    against the panel's verdict (a pair the panel separates, its ``PairRow.separated``)."""
    dims = list(dict.fromkeys(r.dimension for r in ranking))
    dim = dimension or ("overall" if "overall" in dims else (dims[0] if dims else "overall"))
    ranked = sorted((r for r in ranking if r.dimension == dim), key=lambda r: (r.rank, r.model))
    fb_models = {str(m) for m in feedback["model"].unique()} if len(feedback) else set()
    both = [r for r in ranked if r.model in fb_models]
    notes: list[str] = []
    if not both:
        return PanelProduction(
            dimension=dim, scale="", models=(), pairs=(), notes=("No model of the batch has production feedback.",)
        )
    mine = feedback[feedback["model"].isin([r.model for r in both])]
    scales = mine.groupby(["scale_min", "scale_max"], observed=True).size().sort_values(ascending=False, kind="stable")
    scale_min, scale_max = (float(v) for v in scales.index[0])
    if len(scales) > 1:
        notes.append(f"Production feedback on other scales than {scale_label(scale_min, scale_max)} is left out.")
    mine = mine[(mine["scale_min"] == scale_min) & (mine["scale_max"] == scale_max)]
    thumbs = (scale_min, scale_max) == THUMBS
    fb = mine["feedback"].to_numpy(dtype=float)
    names = mine["model"].astype(str).to_numpy()
    samples: dict[str, _Sample] = {}
    models: list[ProductionModel] = []
    for r in both:
        values = fb[names == r.model]
        if not len(values):
            notes.append(f"{r.model} has no production feedback on this scale.")
            continue
        n = len(values)
        s = _Sample(n, int((values > 0).sum()), float(values.mean()), float(values.var(ddof=1)) if n > 1 else 0.0, ())
        samples[r.model] = s
        if thumbs:
            lo, hi = wilson(np.array([s.up]), np.array([n]))
            mean = s.up / n
        else:
            lo, hi = mean_ci(np.array([s.mean]), np.array([s.var]), np.array([n]))
            mean = s.mean
        models.append(
            ProductionModel(
                model=r.model,
                panel_rank=r.rank,
                panel_score=r.score,
                scale=scale_label(scale_min, scale_max),
                n=n,
                mean=mean,
                ci_low=_none(float(lo[0])),
                ci_high=_none(float(hi[0])),
            )
        )
    panel = {frozenset((p.model_a, p.model_b)): p for p in pairs if p.dimension == dim}
    tested = []
    for a, b in combinations([m.model for m in models], 2):  # a is the panel's higher (or equal) rank
        sa, sb = samples[a], samples[b]
        test, p = feedback_test(sa, sb, thumbs)
        ma, mb = (sa.up / sa.n, sb.up / sb.n) if thumbs else (sa.mean, sb.mean)
        tested.append((a, b, ma, mb, test, p if math.isfinite(p) else 1.0))
    adjusted = holm(np.array([t[5] for t in tested], dtype=float))
    out_pairs = []
    for (a, b, ma, mb, test, p), q in zip(tested, adjusted, strict=True):
        row = panel.get(frozenset((a, b)))
        panel_higher = row.model_a if row is not None and row.separated else None
        significant = bool(q < ALPHA)
        if significant:
            higher, lower = (a, b) if ma >= mb else (b, a)
            head = f"Production feedback puts {higher} above {lower} (significant, {test}, Holm-adjusted {_p_text(q)})"
            if panel_higher == higher:
                agreement, tail = "agree", f"; your reviewers also rank {higher} above {lower}."
            elif panel_higher == lower:
                agreement, tail = "disagree", f"; your reviewers rank {lower} above {higher}: they disagree."
            else:
                agreement, tail = "panel sees no difference", "; your reviewers see no difference."
        else:
            higher, lower = (a, b) if panel_higher in (None, a) else (b, a)
            head = (
                f"Production feedback shows no significant difference between {higher} and {lower} ({test}, "
                f"Holm-adjusted {_p_text(q)})"
            )
            if panel_higher is not None:
                agreement, tail = "production sees no difference", f"; your reviewers rank {higher} above {lower}."
            else:
                agreement, tail = "both see no difference", "; your reviewers see no difference either."
        diff = (ma - mb) if higher == a else (mb - ma)
        out_pairs.append(
            ProductionPair(
                higher=higher,
                lower=lower,
                production_diff=diff,
                test=test,
                p_value=p,
                p_adjusted=float(q),
                production_significant=significant,
                panel_higher=panel_higher,
                agreement=agreement,
                sentence=head + tail,
            )
        )
    return PanelProduction(
        dimension=dim,
        scale=scale_label(scale_min, scale_max),
        models=tuple(models),
        pairs=tuple(out_pairs),
        notes=tuple(notes),
    )

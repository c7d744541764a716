"""The production monitor: the feedback frame (``storage.repositories.production``) as window rows and tests.

Windows are calendar windows in UTC (``monitor_stats.window_days``), so a window means the same whenever the
monitor runs and two runs over more data agree on the windows they share.

Per model, per model and scenario, per feedback scale and window: the volume, the feedback with a 95% CI,
latency and time to first token as median and p95 with how many events had them. A window is compared with
the model's previous window that has events (a quiet day is skipped, and the row says which window it was
compared with). A canary (``NEW=CURRENT``) is compared with the current model in every window where both
have events, and over all those windows together. Every p-value of the result is Holm-adjusted together
(one family), and a change is flagged when its adjusted p is under 0.05. The intervals and the tests
themselves are ``monitor_stats``'s (its docstring names them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.inference import ALPHA, holm
from reviewer_app.domain.production import THUMBS, ChangeRow, MonitorResult, WindowRow, scale_label
from reviewer_app.production.monitor_stats import (
    LATENCY_METRICS,
    MANN_WHITNEY,
    Sample,
    day_label,
    feedback_test,
    finite_or_none,
    mean_ci,
    quantile_sorted,
    sorted_mann_whitney,
    wilson,
    window_days,
)


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
    group's :class:`Sample` (``sample``), as plain records (a few thousand groups at most)."""
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
        r["sample"] = Sample(int(r["n"]), int(r["up"]), float(r["mean"]), float(r["var"]), samples[key])
        for metric, values in zip(LATENCY_METRICS, samples[key], strict=True):
            r[f"{metric}_p50"] = quantile_sorted(values, 0.5)
            r[f"{metric}_p95"] = quantile_sorted(values, 0.95)
    return records


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
                ci_low=finite_or_none(w_lo[i] if thumbs else t_lo[i]),
                ci_high=finite_or_none(w_hi[i] if thumbs else t_hi[i]),
                ci_method="Wilson" if thumbs else "t",
                latency_n=int(r["latency_n"]),
                latency_p50=finite_or_none(r["latency_ms_p50"]),
                latency_p95=finite_or_none(r["latency_ms_p95"]),
                ttft_n=int(r["ttft_n"]),
                ttft_p50=finite_or_none(r["ttft_ms_p50"]),
                ttft_p95=finite_or_none(r["ttft_ms_p95"]),
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


def _compare(a: Sample, b: Sample, thumbs: bool, where: _Where) -> list[_Test]:
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


def _pool(parts: list[Sample]) -> Sample:
    """Several windows' samples as one (moments from the sums; timings merged in order)."""
    n = sum(p.n for p in parts)
    s1 = sum(p.n * p.mean for p in parts)
    s2 = sum(p.var * (p.n - 1) + p.n * p.mean**2 for p in parts)
    var = max((s2 - s1**2 / n) / max(n - 1, 1), 0.0)
    timings = tuple(
        np.sort(np.concatenate([p.timings[k] for p in parts]), kind="stable") for k in range(len(LATENCY_METRICS))
    )
    return Sample(n, sum(p.up for p in parts), s1 / n, var, timings)


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

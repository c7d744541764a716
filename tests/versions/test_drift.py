"""Behaviour drift without reviewers: metrics against hand-computed values, flags, and the two-sample tests
against published values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.prepare import ANCHOR
from reviewer_app.analysis.two_sample import fisher_exact, mann_whitney
from reviewer_app.domain.versions import ModelPair
from reviewer_app.versions.drift import METRICS, drift_rows
from reviewer_app.versions.refusals import DEFAULT_REFUSAL_PHRASES, refusals

PAIR = [ModelPair("m", "m2")]


def _outputs(model: str, rows: list[tuple], **extra) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["sample_id", "repeat", "text", "latency_ms", "ttft_ms", "finish_reason"])
    return frame.assign(scenario="s", model=model, excluded=False, **extra)


BASELINE = _outputs(
    "m",
    [
        ("x1", 0, "one two three", 100.0, 10.0, "stop"),
        ("x2", 0, "I'm sorry, but I can't help with that.", 200.0, 20.0, "stop"),
        ("x3", 0, "a b c d e", 300.0, 30.0, "length"),
        ("x4", 0, "alpha beta", 400.0, np.nan, "stop"),
    ],
)
CANDIDATE = _outputs(
    "m2",
    [
        ("x1", 0, "one two three", 150.0, 15.0, "stop"),
        ("x2", 0, "Sure: here it is now", 250.0, 25.0, "length"),
        ("x3", 0, "a b c d e f g", 350.0, np.nan, "length"),
        ("x4", 0, "I can\u2019t assist with this request", 450.0, 45.0, None),
    ],
)


def _by_metric(rows):
    return {r.metric: r for r in rows}


def test_drift_metrics_by_hand():
    rows = drift_rows(BASELINE, CANDIDATE, PAIR)
    assert [r.metric for r in rows] == list(METRICS)
    got = _by_metric(rows)
    assert {(r.scenario, r.model, r.baseline_model) for r in rows} == {("s", "m2", "m")}
    # Words (whitespace-separated): baseline 3, 8, 5, 2; candidate 3, 5, 7, 6. Percentiles interpolate
    # linearly: the 95th of four sorted values sits 0.95 x 3 = 2.85 positions in.
    length = got["length_words_median"]
    assert (length.baseline, length.candidate, length.change) == (4.0, 5.5, 1.5)
    assert length.p_value == pytest.approx(mann_whitney(np.array([3, 8, 5, 2]), np.array([3, 5, 7, 6])).p_value)
    assert (length.n_baseline, length.n_candidate) == (4, 4) and not length.flag
    p95 = got["length_words_p95"]
    assert p95.baseline == pytest.approx(5 + 0.85 * 3) and p95.candidate == pytest.approx(6 + 0.85 * 1)
    assert p95.p_value is None and not p95.flag  # 4 outputs: too few for a 95th percentile to be flagged
    assert (got["latency_ms_median"].baseline, got["latency_ms_median"].candidate) == (250.0, 300.0)
    assert got["latency_ms_p95"].baseline == pytest.approx(385.0)
    ttft = got["ttft_ms_median"]  # a missing time leaves that output out: 10, 20, 30 against 15, 25, 45
    assert (ttft.baseline, ttft.candidate, ttft.n_baseline, ttft.n_candidate) == (20.0, 25.0, 3, 3)
    assert got["ttft_ms_p95"].candidate == pytest.approx(25 + 0.9 * 20)
    refusal = got["refusal_rate"]  # x2 in the baseline; x4 in the candidate, with a curly apostrophe
    assert (refusal.baseline, refusal.candidate, refusal.change) == (0.25, 0.25, 0.0)
    truncation = got["truncation_rate"]  # x3 of 4; x2 and x3 of the 3 with a finish reason
    assert truncation.baseline == 0.25 and truncation.candidate == pytest.approx(2 / 3)
    assert truncation.n_candidate == 3
    # Fisher over one output per sample, [[2, 1], [1, 3]]: tables as likely or less, (4 + 12 + 1) / 35.
    assert truncation.p_value == pytest.approx(17 / 35)
    identical = got["identical_share"]  # x1 only; the baseline has no repeats to be reproducible across
    assert (identical.baseline, identical.candidate, identical.change, identical.flag) == (None, 0.25, None, False)
    assert set(identical.as_dict()) >= {"scenario", "model", "metric", "baseline", "candidate", "change", "p_value",
                                        "flag"}  # fmt: skip


def test_words_counted_at_load_win_over_the_text_and_missing_columns_leave_metrics_out():
    base = BASELINE.drop(columns=["ttft_ms", "finish_reason"]).assign(output_words=[10, 10, 10, 10])
    cand = CANDIDATE.drop(columns=["text"]).assign(output_words=[20, 20, 20, 20])
    got = _by_metric(drift_rows(base, cand, PAIR))
    assert (got["length_words_median"].baseline, got["length_words_median"].candidate) == (10.0, 20.0)
    assert set(got) == {"length_words_median", "length_words_p95", "latency_ms_median", "latency_ms_p95"}


def test_excluded_outputs_and_anchors_are_left_out():
    extra = _outputs("m2", [("x9", 0, "one " * 500, 9e9, 9e9, "length")])
    cand = pd.concat(
        [CANDIDATE.assign(**{ANCHOR: False}), extra.assign(excluded=True, **{ANCHOR: False}),
         extra.assign(sample_id="x8", **{ANCHOR: True})],
        ignore_index=True,
    )  # fmt: skip
    assert _by_metric(drift_rows(BASELINE, cand, PAIR)) == _by_metric(drift_rows(BASELINE, CANDIDATE, PAIR))


def test_tests_count_samples_not_repeats():
    rng = np.random.default_rng(0)
    words = rng.integers(50, 150, 40)

    def frame(model: str, scale: float, repeats: int) -> pd.DataFrame:
        rows = [(f"x{k}", r, "w " * int(w * scale), 100.0, 10.0, "stop") for k, w in enumerate(words) for r in
                range(repeats)]  # fmt: skip
        return _outputs(model, rows)

    once = _by_metric(drift_rows(frame("m", 1.0, 1), frame("m2", 1.15, 1), PAIR))["length_words_median"]
    thrice = _by_metric(drift_rows(frame("m", 1.0, 3), frame("m2", 1.15, 3), PAIR))["length_words_median"]
    assert thrice.n_baseline == 3 * once.n_baseline
    assert thrice.p_value == pytest.approx(once.p_value)  # three copies of each output are not more evidence


def test_flags_mark_real_drift_and_only_that():
    rng = np.random.default_rng(1)
    n = 200
    words = rng.integers(80, 200, n)
    latency = rng.lognormal(7, 0.3, n)
    rows_b, rows_c = [], []
    for k in range(n):
        text = " ".join(["word"] * int(words[k]))
        refusal = "I cannot help with that. " if k % 10 == 0 else ""  # 10% refusals in the candidate
        for r in range(2):  # two repeats: the baseline is deterministic, the candidate is not for half
            rows_b.append((f"x{k}", r, text, latency[k], 50.0, "stop"))
            longer = refusal + text + " more" * int(0.3 * words[k]) + (f" v{r}" if k % 2 else "")
            rows_c.append((f"x{k}", r, longer, latency[k] * rng.uniform(0.95, 1.05), 50.0, "stop"))
    got = _by_metric(drift_rows(_outputs("m", rows_b), _outputs("m2", rows_c), PAIR))
    assert got["length_words_median"].flag and got["length_words_median"].p_value < 1e-6
    assert got["length_words_p95"].flag
    assert not got["latency_ms_median"].flag and not got["latency_ms_p95"].flag
    assert not got["ttft_ms_median"].flag
    assert got["refusal_rate"].flag and got["refusal_rate"].change == pytest.approx(0.1)
    assert not got["truncation_rate"].flag and got["truncation_rate"].p_value == 1.0
    identical = got["identical_share"]
    assert identical.baseline == 1.0 and identical.candidate == 0.0 and identical.flag


def test_refusal_phrases_default_and_extra():
    texts = pd.Series(
        [
            "I\u2019m unable to share that.",
            "Here is the summary. " + "x" * 400 + " I cannot help with the rest.",  # past the window
            "Lo siento, no puedo ayudar con eso.",
            None,
            "AS AN AI LANGUAGE MODEL, I think...",
        ]
    )
    assert refusals(texts).tolist() == [True, False, False, False, True]
    assert refusals(texts, ["no puedo ayudar"]).tolist() == [True, False, True, False, True]
    assert all(p == p.lower() for p in DEFAULT_REFUSAL_PHRASES)


def test_mann_whitney_matches_published_values():
    # scipy's mannwhitneyu documentation (Conover's example): U = 17, exact two-sided p = 0.1111,
    # asymptotic (continuity-corrected) p = 0.11134688653314041.
    males, females = np.array([19, 22, 16, 29, 24]), np.array([20, 11, 17, 12])
    exact = mann_whitney(males, females)
    assert (exact.statistic, exact.method) == (17.0, "exact") and exact.p_value == pytest.approx(1 / 9)
    assert mann_whitney(males, females, exact=False).p_value == pytest.approx(0.11134688653314041, rel=1e-9)
    # R's wilcox.test documentation (Hollander & Wolfe 1973, p. 69): W = 35, one-sided p = 0.1272, so the
    # two-sided exact p-value is 0.2544.
    x = np.array([0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46])
    y = np.array([1.15, 0.88, 0.90, 0.74, 1.21])
    result = mann_whitney(x, y)
    assert result.statistic == 35.0 and result.p_value == pytest.approx(0.2544, abs=1e-4)
    assert mann_whitney(y, x).p_value == pytest.approx(result.p_value)  # two-sided: either order
    assert mann_whitney(np.ones(5), np.ones(4)).p_value == 1.0  # nothing to tell apart
    with pytest.raises(ValueError, match="without ties"):
        mann_whitney(np.array([1, 2]), np.array([2, 3]), exact=True)


def test_fisher_exact_matches_published_values():
    # Fisher's tea-tasting experiment (R's fisher.test documentation): p = 0.4857.
    assert fisher_exact(3, 1, 1, 3).p_value == pytest.approx(0.4857, abs=1e-4)
    # The worked example of the Wikipedia article on Fisher's exact test: p = 0.002759.
    assert fisher_exact(1, 9, 11, 3).p_value == pytest.approx(0.002759, abs=1e-6)
    assert fisher_exact(0, 10, 0, 10).p_value == 1.0
    assert np.isnan(fisher_exact(0, 0, 0, 0).p_value)

"""Check pass rates in the report: estimated like a dimension (cluster bootstrap over samples), ranked and
tiered by seed-independent tests; and their correlation with the panel's overall score."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.checks import check_panel_rows, check_rows
from reviewer_app.domain.report_rankings import ALL_CHECKS


def _checks(n_samples: int, seed: int, *, fail_share: float = 0.5) -> pd.DataFrame:
    """ "good" passes its JSON check always; "flaky" fails it on about ``fail_share`` of its outputs. Both
    pass a length check except on every tenth sample."""
    rng = np.random.default_rng(seed)
    rows = []
    output_id = 0
    for s in range(n_samples):
        for model in ("good", "flaky"):
            output_id += 1
            json_ok = model == "good" or rng.random() >= fail_share
            rows.append(("extract", f"s{s}", model, 0, output_id, "json", json_ok, False))
            rows.append(("extract", f"s{s}", model, 0, output_id, "short", s % 10 != 0, False))
    return pd.DataFrame(rows, columns=["scenario", "sample_id", "model", "repeat", "output_id", "check", "passed",
                                       "excluded"])  # fmt: skip


def test_a_model_failing_half_its_json_gets_a_rate_near_a_half_and_is_separated() -> None:
    rows = check_rows(_checks(200, seed=3), "extract", rounds=1000, seed=7)
    by = {(r.check, r.model): r for r in rows}
    flaky, good = by[("json", "flaky")], by[("json", "good")]
    assert flaky.ci_low is not None and flaky.ci_high is not None and flaky.pass_rate is not None
    assert abs(flaky.pass_rate - 0.5) < 0.08
    assert flaky.ci_low < 0.5 < flaky.ci_high  # the true share is inside
    assert flaky.ci_high - flaky.ci_low < 0.2
    assert good.pass_rate == 1.0 and good.n == 200
    assert (good.rank, good.tier, flaky.rank, flaky.tier) == (1, 1, 2, 2)
    # "all": every check passed; the length check fails both on 1 sample in 10, so good passes all on 90%.
    assert by[(ALL_CHECKS, "good")].pass_rate == pytest.approx(0.9)
    assert [r.check for r in rows][:2] == [ALL_CHECKS, ALL_CHECKS]  # "all" comes first
    # Both fail the length check on the same samples: no difference, one tier.
    assert by[("short", "good")].tier == by[("short", "flaky")].tier == 1


def test_equal_models_share_a_tier_and_ranks_do_not_move_with_the_seed() -> None:
    frame = _checks(60, seed=5, fail_share=0.05)
    one = check_rows(frame, "extract", rounds=400, seed=1)
    two = check_rows(frame, "extract", rounds=400, seed=2)
    assert [(r.check, r.model, r.rank, r.tier, r.pass_rate) for r in one] == [
        (r.check, r.model, r.rank, r.tier, r.pass_rate) for r in two
    ]
    assert check_rows(frame, "other scenario", rounds=10, seed=1) == ()


def _overall(checks: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Two ratings per output: about 0.8 when the JSON check passed, 0.3 when not, with noise."""
    rng = np.random.default_rng(seed)
    json_rows = checks[checks["check"] == "json"]
    rows = []
    for r in json_rows.itertuples():
        for _ in range(2):
            base = 0.8 if r.passed else 0.3
            rows.append(("extract", r.sample_id, r.model, 0, float(np.clip(base + rng.normal(0, 0.15), 0, 1))))
    return pd.DataFrame(rows, columns=["scenario", "sample_id", "model_a", "repeat_a", "score"])


def test_passing_goes_with_the_panel_score_and_r_is_pearsons() -> None:
    checks = _checks(150, seed=11)
    overall = _overall(checks, seed=12)
    rows = {r.check: r for r in check_panel_rows(checks, overall, "extract", rounds=500, seed=3)}
    json_row = rows["json"]
    # Pearson's r by hand over the outputs: pass (0/1) against the mean of the output's two ratings.
    means = overall.groupby(["sample_id", "model_a"])["score"].mean()
    passed = checks[checks["check"] == "json"].set_index(["sample_id", "model"])["passed"].astype(float)
    x = passed.to_numpy()
    y = means.reindex(passed.index).to_numpy()
    assert json_row.correlation == pytest.approx(float(np.corrcoef(x, y)[0, 1]), abs=1e-9)
    assert json_row.ci_low is not None and json_row.ci_high is not None
    assert 0.5 < json_row.ci_low < json_row.correlation < json_row.ci_high
    assert json_row.n == 300
    # The length check fails on the same samples for both models whatever their score: near zero.
    short = rows["short"]
    assert short.ci_low is not None and short.ci_high is not None and short.ci_low < 0 < short.ci_high


def test_a_check_everyone_passes_has_no_correlation_and_says_why() -> None:
    checks = _checks(20, seed=1, fail_share=0.0)
    checks = checks[checks["check"] == "json"]
    [_all, row] = check_panel_rows(checks, _overall(checks, seed=2), "extract", rounds=50, seed=1)
    assert row.correlation is None and row.note == "every rated output passed: nothing to correlate"
    few = check_panel_rows(checks, _overall(checks, seed=2).head(4), "extract", rounds=50, seed=1)
    assert few[1].correlation is None and few[1].n == 2

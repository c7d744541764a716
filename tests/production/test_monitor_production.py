"""Panel against production (``production.panel.panel_vs_production``): the sentences when the panel
agrees, is reversed, sees no difference, and when production sees none; models only in one of the two are
left out; a feedback scale used less is left out with a note."""

from __future__ import annotations

import pandas as pd
import pytest

from reviewer_app.domain.production import plain
from reviewer_app.domain.report_rankings import PairRow, RankingRow
from reviewer_app.production.monitor_stats import Z_TEST
from reviewer_app.production.panel import panel_vs_production

MONDAY = 1_772_409_600_000


def rank(model: str, r: int, score: float, dimension: str = "overall") -> RankingRow:
    return RankingRow(model=model, dimension=dimension, score=score, ci_low=score - 0.2, ci_high=score + 0.2,
                      ci_mc_se=0.01, rank=r, tier=r, letters="abc"[r - 1], n=100, note=None)  # fmt: skip


def pair(a: str, b: str, separated: bool, dimension: str = "overall") -> PairRow:
    return PairRow(dimension=dimension, model_a=a, model_b=b, diff=0.4, ci_low=0.1, ci_high=0.7, p_value=0.001,
                   p_adjusted=0.002 if separated else 0.3, separated=separated, test="sign-flip")  # fmt: skip


def feedback(rates: dict[str, float], n: int = 500, scale: tuple[float, float] = (-1.0, 1.0)) -> pd.DataFrame:
    rows = []
    for model, rate in rates.items():
        ups = round(rate * n)
        rows += [(model, None, MONDAY + i, 1.0 if i < ups else -1.0, scale[0], scale[1], None, None) for i in range(n)]
    frame = pd.DataFrame(rows, columns=["model", "scenario", "ts_ms", "feedback", "scale_min", "scale_max",
                                        "latency_ms", "ttft_ms"])  # fmt: skip
    return frame.astype({"model": "category", "scenario": "category"})


PROD = feedback({"A": 0.8, "B": 0.6})  # A clearly above B: z = 6.9, p = 5.2e-12


def test_agreement() -> None:
    result = panel_vs_production([rank("A", 1, 4.1), rank("B", 2, 3.5)], [pair("A", "B", True)], PROD)
    (p,) = result.pairs
    assert p.agreement == "agree" and p.test == Z_TEST and p.production_significant
    assert p.sentence == (
        "Production feedback puts A above B (significant, two-proportion z-test, Holm-adjusted p < 0.0001); "
        "your reviewers also rank A above B."
    )
    assert [(m.model, m.n, m.mean) for m in result.models] == [("A", 500, 0.8), ("B", 500, 0.6)]
    # Wilson, 400 of 500: centre 0.8038415 / 1.0076829 = 0.797712, half-width 1.945057 * 0.0179956 = 0.035003
    assert result.models[0].ci_low == pytest.approx(0.762709, abs=1e-5)
    assert plain(result)["pairs"][0]["agreement"] == "agree"  # serialisable as the report's dataclasses


def test_reversed() -> None:
    result = panel_vs_production([rank("B", 1, 4.1), rank("A", 2, 3.5)], [pair("B", "A", True)], PROD)
    (p,) = result.pairs
    assert p.agreement == "disagree" and p.higher == "A" and p.panel_higher == "B"
    assert p.sentence.endswith("; your reviewers rank B above A: they disagree.")
    assert p.sentence.startswith("Production feedback puts A above B (significant")


def test_panel_sees_no_difference() -> None:
    result = panel_vs_production([rank("A", 1, 3.6), rank("B", 1, 3.5)], [pair("A", "B", False)], PROD)
    (p,) = result.pairs
    assert p.agreement == "panel sees no difference"
    assert p.sentence.endswith("; your reviewers see no difference.")


def test_production_sees_no_difference() -> None:
    flat = feedback({"A": 0.7, "B": 0.7})
    result = panel_vs_production([rank("A", 1, 4.1), rank("B", 2, 3.5)], [pair("A", "B", True)], flat)
    (p,) = result.pairs
    assert not p.production_significant and p.p_adjusted == 1.0
    assert p.sentence == (
        "Production feedback shows no significant difference between A and B (two-proportion z-test, "
        "Holm-adjusted p = 1); your reviewers rank A above B."
    )
    tied = panel_vs_production([rank("A", 1, 4.1), rank("B", 1, 4.0)], [pair("A", "B", False)], flat)
    assert tied.pairs[0].sentence.endswith("; your reviewers see no difference either.")


def test_holm_over_the_pairs_and_models_in_one_side_only() -> None:
    prod = feedback({"A": 0.8, "B": 0.6, "C": 0.75, "Z": 0.1})  # Z is not in the batch
    ranking = [rank("A", 1, 4.1), rank("C", 1, 4.0), rank("B", 2, 3.5), rank("D", 3, 2.0)]  # D has no feedback
    pairs = [pair("A", "C", False), pair("A", "B", True), pair("C", "B", True)]
    result = panel_vs_production(ranking, pairs, prod)
    assert [m.model for m in result.models] == ["A", "C", "B"]
    assert [(p.higher, p.lower) for p in result.pairs] == [("A", "C"), ("A", "B"), ("C", "B")]
    raw = sorted(p.p_value for p in result.pairs)
    assert sorted(p.p_adjusted for p in result.pairs)[0] == pytest.approx(3 * raw[0])
    assert [p.agreement for p in result.pairs][1:] == ["agree", "agree"]


def test_other_dimension_and_other_scale() -> None:
    prod = pd.concat([PROD, feedback({"A": 0.2}, n=10, scale=(1.0, 5.0))]).astype({"model": "category"})
    ranking = [rank("A", 1, 4.1, "clarity"), rank("B", 2, 3.5, "clarity"), rank("B", 1, 4.0), rank("A", 2, 3.0)]
    result = panel_vs_production(ranking, [pair("A", "B", True, "clarity")], prod, dimension="clarity")
    assert result.dimension == "clarity" and result.pairs[0].agreement == "agree"
    assert result.notes == ("Production feedback on other scales than thumbs is left out.",)
    nobody = panel_vs_production([rank("Q", 1, 1.0)], [], PROD)
    assert nobody.pairs == () and nobody.notes == ("No model of the batch has production feedback.",)

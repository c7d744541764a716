"""Pairwise ties and "both bad": per-model rates with CIs, and Davidson's tie model, checked against simulations
with known generating strengths, tie parameter and both-bad rates (issue 28, point 8)."""

from __future__ import annotations

import json
from itertools import combinations

import jsonschema
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from reviewer_app.analysis.decisions import ranking_rows
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import BT_ALPHA, fit_bradley_terry, pairwise_estimate
from reviewer_app.analysis.report import build_report
from reviewer_app.analysis.ties import davidson_probabilities, fit_davidson, tie_section
from reviewer_app.reporting.formats import load_schema, render
from tests.support.simulated_panels import pairwise_panel

THETA = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])  # generating log-strengths (sum 0)
MODELS = ["A", "B", "C", "D", "E"]


def _davidson_panel(
    rng: np.random.Generator, theta: np.ndarray, nu: float, badness: np.ndarray, *, n_samples: int, overlap: int = 1
) -> pd.DataFrame:
    """Every pair of models on every sample, ``overlap`` answers each, drawn from Davidson's model; a comparison
    without a winner is "both_bad" with probability (badness_i + badness_j) / 2, else "tie"."""
    win, tie = davidson_probabilities(theta, np.log(nu))
    rows = []
    for s in range(n_samples):
        for i, j in combinations(range(len(theta)), 2):
            for _ in range(overlap):
                u = rng.random()
                if u < win[i, j]:
                    outcome = "a"
                elif u < win[i, j] + win[j, i]:
                    outcome = "b"
                else:
                    outcome = "both_bad" if rng.random() < (badness[i] + badness[j]) / 2 else "tie"
                rows.append((f"s{s}", MODELS[i], MODELS[j], outcome))
    return pd.DataFrame(rows, columns=["sample_id", "model_a", "model_b", "outcome"])


def _estimate(frame: pd.DataFrame, rng: np.random.Generator, rounds: int):  # type: ignore[no-untyped-def]
    samples = sorted(frame["sample_id"].unique())
    return pairwise_estimate(frame, MODELS, samples, bootstrap_weights(len(samples), rounds, rng))


def _slope(estimated: np.ndarray, truth: np.ndarray) -> float:
    """Least-squares slope through 0 of centred estimates on the (centred) generating strengths."""
    centred = estimated - estimated.mean()
    return float(centred @ truth / (truth @ truth))


def test_davidson_fit_is_the_penalised_likelihood_maximum():
    rng = np.random.default_rng(3)
    win, tie = davidson_probabilities(THETA, np.log(0.7))
    m = len(THETA)
    decisive, draws = np.zeros((m, m)), np.zeros((m, m))
    for i, j in combinations(range(m), 2):
        c = rng.multinomial(60, [win[i, j], win[j, i], tie[i, j]])
        decisive[i, j], decisive[j, i], draws[i, j] = c[0], c[1], c[2]
        draws[j, i] = c[2]
    iu, ju = np.triu_indices(m, 1)

    def loss(x: np.ndarray) -> float:
        w, t = davidson_probabilities(x[:m], x[m])
        ll = (
            decisive[iu, ju] @ np.log(w[iu, ju])
            + decisive[ju, iu] @ np.log(w[ju, iu])
            + draws[iu, ju] @ np.log(t[iu, ju])
        )
        return float(-ll + BT_ALPHA * (x[:m] ** 2).sum())

    ref = minimize(loss, np.zeros(m + 1), method="BFGS", options={"gtol": 1e-9}).x
    theta, log_nu = fit_davidson(decisive, draws)
    np.testing.assert_allclose(theta, ref[:m], atol=1e-4)
    np.testing.assert_allclose(log_nu, ref[m], atol=1e-4)
    # Batched fits give the same answer as single ones.
    batch_theta, batch_nu = fit_davidson(np.stack([decisive, decisive.T]), np.stack([draws, draws]))
    np.testing.assert_allclose(batch_theta[0], theta, atol=1e-8)
    np.testing.assert_allclose(batch_theta[1], -theta, atol=1e-8)  # everyone's wins reversed
    np.testing.assert_allclose(batch_nu, [log_nu, log_nu], atol=1e-8)


def test_without_ties_davidson_is_bradley_terry():
    decisive = np.array([[0, 7, 9], [3, 0, 6], [1, 4, 0]], dtype=float)
    theta, _ = fit_davidson(decisive, np.zeros((3, 3)))
    np.testing.assert_allclose(theta, fit_bradley_terry(decisive), atol=1e-6)


def test_davidson_recovers_the_generating_strengths_that_ties_half_shrink():
    """Panels drawn from Davidson's model with known strengths and nu (about 20% comparisons without a winner):
    the report's Davidson strengths recover the strengths (slope 1 within noise) and nu; the ranking's
    ties-half Bradley-Terry strengths come out about 0.78x (the shrinkage the report states)."""
    rng = np.random.default_rng(11)
    nu = 0.55
    davidson, ties_half, nus, shrinkage = [], [], [], []
    for _ in range(12):
        frame = _davidson_panel(rng, THETA, nu, np.full(5, 0.3), n_samples=80)
        est = _estimate(frame, rng, rounds=20)
        rows, model_row = tie_section(est, "overall")
        davidson.append(_slope(np.array([r.davidson for r in rows]), THETA))
        ties_half.append(_slope(est.point, THETA))
        assert model_row.nu is not None and model_row.shrinkage is not None
        nus.append(model_row.nu)
        shrinkage.append(model_row.shrinkage)
    print(f"slope Davidson {np.mean(davidson):.3f}, ties half {np.mean(ties_half):.3f}, nu {np.mean(nus):.3f}")
    assert abs(np.mean(davidson) - 1.0) < 0.04  # recovered: SE of the mean about 0.01
    assert abs(np.mean(nus) - nu) < 0.05
    assert 0.72 < np.mean(ties_half) < 0.84  # the shrinkage of today's ranking strengths, measured
    assert abs(np.mean(shrinkage) - np.mean(ties_half) / np.mean(davidson)) < 0.03  # the report says so


def test_both_bad_rates_and_their_intervals_cover_the_truth():
    """Known per-model both-bad rates (model E's outputs are bad far more often): the report's rates are
    unbiased and its 95% cluster-bootstrap intervals cover the truth about 95% of the time."""
    rng = np.random.default_rng(5)
    nu, badness = 0.8, np.array([0.1, 0.1, 0.2, 0.3, 0.9])
    win, tie = davidson_probabilities(THETA, np.log(nu))
    bad_pair = (badness[:, None] + badness[None, :]) / 2
    truth_bad = (tie * bad_pair).sum(axis=1) / 4  # each model meets the 4 others equally often
    truth_tie = tie.sum(axis=1) / 4
    covered_bad, covered_tie, estimates = np.zeros(5), np.zeros(5), []
    panels = 150
    for _ in range(panels):
        frame = _davidson_panel(rng, THETA, nu, badness, n_samples=25, overlap=2)
        rows, _ = tie_section(_estimate(frame, rng, rounds=300), "overall")
        low = np.array([r.both_bad_ci_low for r in rows], dtype=float)
        high = np.array([r.both_bad_ci_high for r in rows], dtype=float)
        covered_bad += (low <= truth_bad) & (truth_bad <= high)
        t_low = np.array([r.tie_ci_low for r in rows], dtype=float)
        t_high = np.array([r.tie_ci_high for r in rows], dtype=float)
        covered_tie += (t_low <= truth_tie) & (truth_tie <= t_high)
        estimates.append([r.both_bad_rate for r in rows])
    coverage_bad, coverage_tie = covered_bad / panels, covered_tie / panels
    print(f"both-bad coverage {coverage_bad}, tie coverage {coverage_tie}")
    np.testing.assert_allclose(np.mean(estimates, axis=0), truth_bad, atol=0.01)
    assert (coverage_bad >= 0.89).all() and (coverage_tie >= 0.89).all()
    assert (coverage_bad <= 0.99).all()  # not vacuous: an interval this wide would say nothing


@pytest.mark.slow
def test_equal_models_with_many_ties_are_separated_in_at_most_5_percent_of_panels():
    """The ranking keeps testing the ties-half strengths: under a Davidson null (equal strengths, 43% of
    comparisons without a winner, some both bad) its Holm decisions still hold the family-wise error."""
    rng = np.random.default_rng(21)
    panels, wrong = 200, 0
    for _ in range(panels):
        frame = _davidson_panel(rng, np.zeros(5), 1.5, np.full(5, 0.4), n_samples=30)
        est = _estimate(frame, rng, rounds=10)
        wrong += any(p.separated for p in ranking_rows(est, "overall").pairs)
    print(f"{wrong} of {panels} null panels separate a pair")
    assert wrong / panels <= 0.05


@pytest.fixture(scope="module")
def both_bad_report():  # type: ignore[no-untyped-def]
    """A pairwise batch in which every tie involving C was answered "both bad" instead."""
    rng = np.random.default_rng(2)
    ratings, outputs, rubric = pairwise_panel(
        rng, {"x": {"A": 0.5, "B": 0.2, "C": -0.6}}, n_samples=40, n_reviewers=4, tie_prob=0.3
    )
    with_c = (ratings["model_a"] == "C") | (ratings["model_b"] == "C")
    ratings.loc[with_c & (ratings["value"] == "tie"), "value"] = "both_bad"
    return ratings, build_report(ratings, outputs, rubric, batch="duel", seed=5, rounds=300)


def test_report_gives_each_model_its_both_bad_rate(both_bad_report):
    ratings, report = both_bad_report
    rows = {r.model: r for r in report.scenarios[0].ties if r.dimension == "overall"}
    for model in "ABC":
        own = ratings[(ratings["model_a"] == model) | (ratings["model_b"] == model)]
        row = rows[model]
        assert row.n == len(own)
        assert row.both_bad_rate == pytest.approx((own["value"] == "both_bad").mean())
        assert row.tie_rate == pytest.approx(own["value"].isin(["tie", "both_bad"]).mean())
        assert row.both_bad_ci_low <= row.both_bad_rate <= row.both_bad_ci_high
        assert row.davidson_ci_low <= row.davidson <= row.davidson_ci_high
    assert rows["A"].both_bad_rate < rows["C"].both_bad_rate  # only C's comparisons were judged both bad
    (model_row,) = [r for r in report.scenarios[0].tie_model if r.dimension == "overall"]
    assert 0.2 < model_row.tie_share < 0.4 and model_row.nu is not None and model_row.shrinkage < 1
    assert report.overall.ties is not None and report.overall.tie_model is not None  # pooled across scenarios


def test_ties_are_in_every_format_and_valid_json(both_bad_report):
    _, report = both_bad_report
    data = json.loads(render(report, "json"))
    jsonschema.Draft202012Validator(load_schema()).validate(data)
    assert {r["model"] for r in data["scenarios"][0]["ties"]} == {"A", "B", "C"}
    assert "both bad" in render(report, "md") and "Davidson" in render(report, "md")
    assert "both bad" in render(report, "html") and "Davidson" in render(report, "html")
    assert any("Davidson 1970" in line for line in report.methods.definitions)

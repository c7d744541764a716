"""Drift of automatic checks' pass rates between a baseline and a follow-up (``compare``'s drift table)."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.versions import ModelPair
from reviewer_app.versions.batch_compare import compare_batches
from reviewer_app.versions.drift import drift_rows
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def _frame(passes: list[bool], model: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "scenario": "extract",
            "sample_id": [f"s{i}" for i in range(len(passes))],
            "model": model,
            "repeat": 0,
            "output_id": range(len(passes)),
            "check": "json",
            "passed": passes,
            "excluded": False,
        }
    )


def _fisher_two_sided(a: int, b: int, c: int, d: int) -> float:
    """Fisher's exact test by hand: the hypergeometric tables at most as likely as the one seen."""
    row1, col1, n = a + b, a + c, a + b + c + d

    def prob(x: int) -> float:
        return comb(col1, x) * comb(n - col1, row1 - x) / comb(n, row1)

    seen = prob(a)
    return sum(p for x in range(max(0, row1 + col1 - n), min(row1, col1) + 1) if (p := prob(x)) <= seen * (1 + 1e-7))


def test_a_check_pass_rate_that_drops_is_flagged_with_fishers_p() -> None:
    outputs = pd.DataFrame({"scenario": "extract", "sample_id": [f"s{i}" for i in range(20)], "repeat": 0})
    base_out, cand_out = outputs.assign(model="m"), outputs.assign(model="m")
    base = _frame([i != 0 for i in range(20)], "m")  # 19 of 20
    cand = _frame([i % 2 == 0 for i in range(20)], "m")  # 10 of 20
    rows = drift_rows(base_out, cand_out, [ModelPair("m", "m")], checks=(base, cand))
    by = {r.metric: r for r in rows}
    for metric in ("check_pass_rate:json", "check_pass_rate:all"):  # one check: "all" is the same
        row = by[metric]
        assert (row.baseline, row.candidate) == (pytest.approx(0.95), pytest.approx(0.5))
        assert row.change == pytest.approx(-0.45)
        assert row.p_value == pytest.approx(_fisher_two_sided(10, 10, 19, 1), rel=1e-6)
        assert row.flag
    same = drift_rows(base_out, cand_out, [ModelPair("m", "m")], checks=(base, base))
    assert not same[-1].flag and same[-1].change == 0


def test_compare_reports_check_drift_from_loaded_batches(engine: Engine, tmp_path: Path) -> None:
    records = make_records(30, ["m1"], scenarios=("extract",))
    checks = [{"type": "json"}]
    base = [{**r, "output": json.dumps({"a": 1}), "checks": checks} for r in records]
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    load_batch(engine, [write_batch(tmp_path / "a", base)], rubric, name="v1", open_now=True)
    cand = [{**r, "output": "no JSON here" if i % 3 else r["output"]} for i, r in enumerate(base)]
    load_batch(
        engine, [write_batch(tmp_path / "b", cand)], None, name="v2", follow_up="v1", anchor_share=0, open_now=True
    )
    result = compare_batches(engine, "v1", "v2", rounds=100)
    [row] = [d for d in result.drift if d.metric == "check_pass_rate:json"]
    assert (row.baseline, row.candidate, row.flag) == (1.0, pytest.approx(10 / 30), True)

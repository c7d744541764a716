"""The numbers of a comparison must not move when its code is made faster (issue 10's benchmark).

``tests/fixtures/compare_golden.json`` was recorded before the comparison was sped up, from fixed chains:
a follow-up loaded with ``--follow-up`` and anchors (rating mode, a stricter panel, one real regression, a
refusing model), a pairwise pair of batches, and the simulated frames of ``tests.support.version_chains``
(anchors, two dimensions) fed to the statistics directly. Every diff, interval, shift, verdict and drift value
must come out the same: floats equal within 1e-12 (relative or absolute; summation order may change), every
other value exactly. To record it again (only when a number is meant to change, and say why in the commit):
``BLIND_REVIEW_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/versions/test_compare_golden.py -k sqlite``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.ratings.files import import_ratings
from reviewer_app.versions.batch_compare import compare_batches
from reviewer_app.versions.compare import compare_ratings
from reviewer_app.versions.drift import drift_rows
from reviewer_app.versions.pairing import pair_models
from tests.helpers import write_batch
from tests.support.compare_chain import (
    SAMPLE_EFFECT,
    SCENARIOS,
    load,
    rate_items,
    ratings,
    records,
    seeded_anchor_picks,
)
from tests.support.simulated_panels import likert
from tests.support.version_chains import chain

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "compare_golden.json"
TOLERANCE = 1e-12


def _same(expected: Any, got: Any, where: str = "$") -> list[str]:
    """Every place where ``got`` differs from ``expected`` (floats within :data:`TOLERANCE`)."""
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if math.isnan(expected) and math.isnan(got):
            return []
        ok = math.isclose(expected, got, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
        return [] if ok else [f"{where}: {expected!r} != {got!r}"]
    if isinstance(expected, dict) and isinstance(got, dict):
        if set(expected) != set(got):
            return [f"{where}: keys {sorted(set(expected) ^ set(got))} differ"]
        return [p for k in expected for p in _same(expected[k], got[k], f"{where}.{k}")]
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [f"{where}: {len(expected)} items != {len(got)}"]
        return [p for i, (e, g) in enumerate(zip(expected, got, strict=True)) for p in _same(e, g, f"{where}[{i}]")]
    return [] if expected == got and type(expected) is type(got) else [f"{where}: {expected!r} != {got!r}"]


def _plain(data: Any) -> Any:
    """``data`` as JSON would give it back (tuples as lists, NaN kept)."""
    return json.loads(json.dumps(data, default=str))


def _follow_up(engine: Engine, tmp_path: Path) -> dict[str, Any]:
    load(engine, tmp_path, "v1", records({"m1": "m1", "m2": "m2"}))
    base = {(s, m): 3.5 for s in SCENARIOS for m in ("m1", "m2")}
    import_ratings(engine, "v1", ratings(tmp_path / "v1.csv", base, seed=1))
    batch = write_batch(tmp_path / "v2", records({"m1": "m1", "m2": "m2"}, refuse=frozenset({("qa", "m2")})))
    summary = load_batch(
        engine, [batch], None, name="v2", follow_up="v1", anchor_share=0.5, on_leak="flag", open_now=True
    )

    def stricter(i: int, model: str, anchor: bool) -> float:
        worse = 0.0 if anchor or (model, SCENARIOS[i % 2]) != ("m2", "summaries") else 1.5
        return 3.5 + SAMPLE_EFFECT[i] - 0.6 - worse

    rate_items(engine, summary.batch_id, stricter, seed=5)
    return compare_batches(engine, "v1", "v2", rounds=300, seed=11).as_dict()


def _pairwise(engine: Engine, tmp_path: Path) -> dict[str, Any]:
    pairwise = 'mode = "pairwise"\noverlap = 3\n'
    load(engine, tmp_path, "p1", records({"m1": "m1", "ref": "ref"}), rubric=pairwise)
    load(engine, tmp_path, "p2", records({"m1": "m1", "ref": "ref"}, refuse=frozenset({("qa", "m1")})), rubric=pairwise)
    for name, p_qa, seed in (("p1", 0.5, 3), ("p2", 0.1, 4)):
        rng = np.random.default_rng(seed)
        lines = ["reviewer,sample_id,model_a,model_b,dimension,winner"]
        for i in range(60):
            p = p_qa if SCENARIOS[i % 2] == "qa" else 0.5
            for who in ("ana", "ben", "cleo"):
                lines.append(f"{who},s{i},m1,ref,overall,{'a' if rng.random() < p else 'b'}")
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        import_ratings(engine, name, path)
    return compare_batches(engine, "p1", "p2", rounds=300, seed=12).as_dict()


def _simulated() -> dict[str, Any]:
    dims = (likert("correctness"), likert("clarity", 1, 7))
    base = {"qa": {"a": 3.0, "b": 3.4}, "code": {"a": 3.2, "b": 2.9}}
    cand = {"qa": {"a": 2.4, "b": 3.4}, "code": {"a": 3.2, "b": 3.1}}
    data = chain(np.random.default_rng(2026), base, cand, n_samples=40, panel_shift=-0.3, dims=dims)
    pairs = pair_models(["a", "b"], ["a", "b"])
    result = compare_ratings(data.baseline, data.candidate, data.rubric, pairs, seed=5, rounds=300)
    return result.as_dict(baseline="sim-1", candidate="sim-2")


def _simulated_drift() -> list[dict[str, Any]]:
    import pandas as pd

    rng = np.random.default_rng(77)

    def outputs(scale: float, refuse: float) -> pd.DataFrame:
        n = 120
        words = (rng.integers(20, 200, n) * scale).astype(int)
        texts = ["I cannot help with that." if rng.random() < refuse else " ".join(["w"] * int(k)) for k in words]
        return pd.DataFrame(
            {
                "scenario": ["qa", "code"] * (n // 2),
                "sample_id": [f"s{k // 2}" for k in range(n)],
                "model": ["a"] * (n // 2) + ["b"] * (n // 2),
                "repeat": 0,
                "excluded": False,
                "text": texts,
                "output_words": words,
                "latency_ms": rng.lognormal(6, 0.4, n),
                "ttft_ms": rng.lognormal(4, 0.3, n),
                "finish_reason": np.where(rng.random(n) < 0.05, "length", "stop"),
            }
        )

    rows = drift_rows(outputs(1.0, 0.02), outputs(1.3, 0.2), pair_models(["a", "b"], ["a", "b"]))
    return [r.as_dict() for r in rows]


def test_comparison_numbers_equal_the_recorded_ones(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded_anchor_picks(monkeypatch)  # the anchors the golden file was recorded with
    got = _plain(
        {
            "follow_up": _follow_up(engine, tmp_path),
            "pairwise": _pairwise(engine, tmp_path),
            "simulated": _simulated(),
            "simulated_drift": _simulated_drift(),
        }
    )
    if os.environ.get("BLIND_REVIEW_RECORD_GOLDEN") == "1":  # pragma: no cover - recording, not testing
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["follow_up"]["anchors"] is True and got["follow_up"]["scenarios"], "the chain must have verdicts"
    assert got["pairwise"]["scenarios"] and got["simulated"]["scenarios"] and got["simulated_drift"]
    differences = _same(expected, got)
    assert not differences, "\n".join(differences[:20])

"""The report's bytes do not change with the speed work: digests recorded on the starting commit.

Each case loads a deterministic simulated batch (``tests.support.report_panels.build_panel_db``) into this
test's database: rating mode with a Likert and a continuous dimension, repeats (or none: then every rating
counts), a lead rater, leaked names masked; pairwise mode with leaked outputs excluded. It computes the
report through ``batch_report`` and renders all four formats. The sha256s below were recorded by running
the same builder and calls with the code of commit 0c7315f (a worktree of it, ``PYTHONPATH`` pointing there,
``tests/support/report_panels.py`` copied in) on SQLite and on PostgreSQL: both gave the same digests.
``generated_at`` is fixed because it is the one field that depends on the clock.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.reporting.formats import render
from reviewer_app.services.batch_reports import batch_report
from tests.support.report_panels import build_panel_db

CASES: dict[str, dict[str, Any]] = {
    "rating": {"mode": "rating", "weights": None, "seed": None},
    "rating-weighted": {"mode": "rating", "weights": {"extraction": 2.0, "summary": 0.5}, "seed": 11},
    "pairwise": {"mode": "pairwise", "weights": None, "seed": None},
    "rating-no-repeats": {"mode": "rating", "weights": None, "seed": None, "repeats": False},
}

DIGESTS = {
    "rating": {
        "json": "94b4d616a2be78752fb28f20249b03fae5774ec2b9c67a8727218a23d6ca0d8d",
        "csv": "990dc835170d4a6e633f1394706e8b69d0aa2cb2a03be8fabe42400186f60a95",
        "md": "29af16c71beeef37ca50f2b0a4cb618efaddce425686fe794fa516a5806bb7e4",
        "html": "f67c0a5170ad2d6cdfc43eca251ef6f396e7f727893cf19762494cc76998e28f",
    },
    "rating-weighted": {
        "json": "cf3a9a6dad13fc827aed6417deec6a77f13148cb42e0e6c7610fd6b0fcccc313",
        "csv": "ad540918f0feca222c1dd320958838db4a9d9465e57ebf3a93c6aee78c2f6c08",
        "md": "2100ea2b2e18e82f2648ac495d84c8353fc3288690046ce2385643a6a79f52b6",
        "html": "0a2361f216d1a2f32475ec0ea6f80c57091a52a066c165ffe142da1aee2036ce",
    },
    "pairwise": {
        "json": "6b2a2075af26ae80b986ee23976bc67fa55aad2d904860206ea41f3a043bc90d",
        "csv": "cd5cfa6bd899ea0e92a5b7ad42aa8a4588ebef9074b7ee379a3c0cd2a20561b1",
        "md": "198c90cecae057e0c462dc096a1a2bf2c8ad665b6c7c0434be74141b1f3437c8",
        "html": "af23915e730a9a80e69697c312c49892e919a8ef491a93f751f32f6ea07f419b",
    },
    "rating-no-repeats": {
        "json": "8b7ef21ccbf4a87116178933db1a04e6a981441e8f28057b3ae38aca05ccf9cd",
        "csv": "990dc835170d4a6e633f1394706e8b69d0aa2cb2a03be8fabe42400186f60a95",
        "md": "b32227f0f1e96a5957e256324c64a73c5636d00116e366ddc1f76049041296a6",
        "html": "5ad8a2f04d6fe8057cf661962e6b65b6cca56d69ecc3d32fb8dfd3cdcd6eea71",
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_report_bytes_match_the_starting_commit(engine: Engine, tmp_path: Path, case: str) -> None:
    c = CASES[case]
    name = build_panel_db(engine, tmp_path / "files", mode=c["mode"], repeats=c.get("repeats", True))
    report = batch_report(engine, batch=name, rounds=200, weights=c["weights"], seed=c["seed"])
    report = dataclasses.replace(report, generated_at="2026-11-30T00:00:00+00:00")
    got = {fmt: hashlib.sha256(render(report, fmt).encode("utf-8")).hexdigest() for fmt in DIGESTS[case]}
    assert got == DIGESTS[case]

"""Results through the API, against a real server on loopback: each answer is what the CLI's command writes
for the same batch (report in every format, ratings export streamed, preferences, compare, history), the
imports check like the CLI's, and production feedback goes in as posted events."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.api import files as api_files
from reviewer_app.client import BlindReview
from reviewer_app.errors import FeedbackImportError, NotFoundError, RatingsImportError, ReportError
from reviewer_app.exports import export_preferences
from reviewer_app.ratings.export import export_ratings
from reviewer_app.results.batch_reports import batch_report, write_report
from tests.exports.builders import RATING_SCORES, pairwise_batch, rating_batch
from tests.support import compare_chain
from tests.support.api_server import Tokens, role_tokens, running_api

ROUNDS = 100


@pytest.fixture
def api(engine: Engine) -> Iterator[tuple[str, Tokens]]:
    tokens = role_tokens(engine)
    with running_api(engine) as url:
        yield url, tokens


def test_the_report_in_every_format_is_the_clis(api: tuple[str, Tokens], engine: Engine, tmp_path: Path) -> None:
    url, tokens = api
    rating_batch(engine, tmp_path)
    report = batch_report(engine, batch="scores", rounds=ROUNDS)
    with BlindReview(url, tokens.lead) as br:
        got_json = br.report("scores", rounds=ROUNDS)
        expected_json = json.loads(write_report(report, "json", tmp_path / "r.json").read_text())
        assert _timeless(got_json) == _timeless(expected_json)
        for fmt in ("csv", "md", "html"):
            got = br.report_file("scores", tmp_path / "api" / f"r.{fmt}", format=fmt, rounds=ROUNDS)
            expected = write_report(report, fmt, tmp_path / f"r.{fmt}")
            assert _timeless(got.read_text()) == _timeless(expected.read_text()), fmt
        got = br.report_file("scores", tmp_path / "api" / "r.parquet", format="parquet", rounds=ROUNDS)
        expected = write_report(report, "parquet", tmp_path / "r.parquet")
        pd.testing.assert_frame_equal(pd.read_parquet(got), pd.read_parquet(expected))
        frame = br.report_frame("scores", rounds=ROUNDS)
        assert len(frame) > 0 and "model" in frame.columns
        with pytest.raises(ReportError, match="weights"):
            br.report("scores", rounds=ROUNDS, weights="qa=lots")
        with pytest.raises(NotFoundError):
            br.report("nope")
    with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.lead}"}) as http:
        answer = http.get("batches/scores/report", params={"format": "html", "rounds": ROUNDS})
        assert answer.headers["content-disposition"] == 'attachment; filename="scores-report.html"'
        assert answer.headers["content-type"].startswith("text/html")


def _timeless(value: object) -> object:
    """The report without the moment it was made (the API's and the test's are made a second apart)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return re.sub(r"20\d\d-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?(\+00:00| UTC)?", "<time>", text)


def test_the_ratings_export_is_streamed_and_is_the_clis(
    api: tuple[str, Tokens], engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, tokens = api
    rating_batch(engine, tmp_path)
    monkeypatch.setattr(api_files, "_CHUNK", 64)  # many chunks, so the stream's joins are tested
    with BlindReview(url, tokens.lead) as br:
        for fmt in ("csv", "jsonl", "parquet"):
            expected = tmp_path / f"cli.{fmt}"
            export_ratings(engine, "scores", fmt, expected)
            got = br.export_ratings("scores", tmp_path / "api" / f"ratings.{fmt}", format=fmt)
            if fmt == "parquet":
                pd.testing.assert_frame_equal(pd.read_parquet(got), pd.read_parquet(expected))
            else:
                assert got.read_bytes() == expected.read_bytes(), fmt
        frame = br.ratings_frame("scores")
        assert len(frame) == RATING_SCORES.count("\n") - 1
    with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.lead}"}) as http:
        with http.stream("GET", "batches/scores/ratings") as answer:
            assert answer.headers.get("content-length") is None  # streamed, not sized up front
            assert answer.headers["content-disposition"] == 'attachment; filename="scores-ratings.csv"'
            chunks = list(answer.iter_raw())
        assert len(chunks) > 1


def test_ratings_import_checks_every_row_like_the_cli(api: tuple[str, Tokens], engine: Engine, tmp_path: Path) -> None:
    url, tokens = api
    rating_batch(engine, tmp_path, rated=False)
    bad = tmp_path / "scores.csv"
    bad.write_text(RATING_SCORES.replace("ann,s0,m2,correctness,3", "ann,s0,m2,correctness,9"), encoding="utf-8")
    with BlindReview(url, tokens.admin) as br:
        with pytest.raises(RatingsImportError) as caught:
            br.import_ratings("scores", bad)
        assert caught.value.problems[0].file == "scores.csv"
        assert caught.value.problems[0].line == 4
        assert br.batch("scores").batch.counts.ratings == 0  # nothing written
        good = tmp_path / "good.csv"
        good.write_text(RATING_SCORES, encoding="utf-8")
        done = br.import_ratings("scores", good)
        assert (done.ratings, sorted(done.reviewers)) == (22, ["ann", "bob", "cy"])
        assert br.batch("scores").batch.counts.ratings == 22


def test_preferences_are_the_clis(api: tuple[str, Tokens], engine: Engine, tmp_path: Path) -> None:
    url, tokens = api
    pairwise_batch(engine, tmp_path)
    with BlindReview(url, tokens.lead) as br:
        got = br.export_preferences("pairs", tmp_path / "api.jsonl", ties="mark")
        export_preferences(engine, "pairs", tmp_path / "cli.jsonl", ties="mark")
        assert got.read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
        frame = br.preferences_frame("pairs", ties="mark")
        assert {"prompt", "chosen", "rejected"} <= set(frame.columns)
        assert len(frame) == len((tmp_path / "cli.jsonl").read_text().splitlines()) == 4
        packed = br.export_preferences("pairs", tmp_path / "hf.zip", format="hf")
        names = zipfile.ZipFile(io.BytesIO(packed.read_bytes())).namelist()
        assert any(n.endswith("README.md") for n in names) and any(n.endswith(".parquet") for n in names)


def test_compare_finds_the_regression_and_history_follows_the_model(
    api: tuple[str, Tokens], engine: Engine, tmp_path: Path
) -> None:
    url, tokens = api
    compare_chain.chain(engine, tmp_path)
    with BlindReview(url, tokens.lead) as br:
        result = br.compare("v1", "v2", match=["m1=m1-v2"], rounds=ROUNDS)
        regressions = {
            (s["scenario"], m["model"])
            for s in result["scenarios"]
            for m in s["models"]
            if m["verdict"] == "regression"
        }
        assert ("qa", "m1-v2") in regressions
        assert ("summaries", "m2") not in regressions
        history = br.history("m2", rounds=ROUNDS)
        assert history["model"] == "m2"
    with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.lead}"}) as http:
        answer = http.get("compare", params={"baseline": "v1", "candidate": "v2", "format": "md", "rounds": ROUNDS})
        assert answer.status_code == 200 and answer.text.startswith("#")


def test_feedback_events_go_in_once_and_the_monitor_reads_them(api: tuple[str, Tokens]) -> None:
    url, tokens = api
    start = datetime(2026, 3, 2, tzinfo=UTC)
    events = [
        {
            "model": model,
            "timestamp": (start + timedelta(minutes=7 * i)).isoformat(),
            "feedback": 1 if i % (2 if model == "cur" else 5) else -1,
            "request_id": f"{model}-{i}",
        }
        for model in ("cur", "new")
        for i in range(300)
    ]
    with BlindReview(url, tokens.lead) as br:
        first = br.send_feedback(events)
        assert (first.read, first.new, first.already) == (600, 600, 0)
        again = br.send_feedback(events[:10])
        assert (again.new, again.already) == (0, 10)
        with pytest.raises(FeedbackImportError) as caught:
            br.send_feedback([events[0], {"model": "cur", "timestamp": "yesterday", "feedback": 1}])
        assert str(caught.value.problems[0]).startswith("events.jsonl:2: timestamp:")
        result = br.monitor(canaries=["new=cur"])
        assert set(result["models"]) >= {"cur", "new"}
        assert any(c["kind"] == "canary" and c["flagged"] for c in result["changes"])
        assert result["flagged"]  # the sentences the CLI prints

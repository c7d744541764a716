"""JSONL exports write scores as numbers (a whole-number scale's as an int, a continuous scale's as a float), a
categorical answer and a pairwise winner as text; CSV exports write every answer as before; ``import-ratings``
reads a JSONL export back, with its scores as numbers (today's) or as text (exports before issue 27)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import RatingsImportError
from reviewer_app.ratings.export import export_ratings
from reviewer_app.ratings.files import import_ratings
from tests.helpers import make_records, write_batch, write_rubric

RUBRIC = """
mode = "rating"
overlap = 1
seed = 3
[[dimensions]]
name = "correctness"
description = "Right?"
scale = "likert"
min = 1
max = 5
[[dimensions]]
name = "follows_format"
description = "Format?"
scale = "binary"
[[dimensions]]
name = "tone"
description = "Tone?"
scale = "categorical"
choices = ["formal", "casual"]
[[dimensions]]
name = "quality"
description = "0-100"
scale = "continuous"
min = 0
max = 100
"""

RATINGS = (
    "reviewer,sample_id,model,dimension,score,comment\n"
    "ann,s0,m1,correctness,4,fine\n"
    "ann,s0,m1,follows_format,1,fine\n"
    "ann,s0,m1,tone,casual,fine\n"
    "ann,s0,m1,quality,72.5,fine\n"
    "ann,s1,m1,quality,3,\n"
    "ann,s1,m1,correctness,2,\n"
)


def _loaded(engine: Engine, tmp_path: Path, name: str = "b", seed: int = 3) -> None:
    """A batch of two samples of m1; another ``seed`` makes another batch of the same files."""
    rubric = write_rubric(tmp_path, RUBRIC.replace("seed = 3", f"seed = {seed}"))
    load_batch(engine, [write_batch(tmp_path, make_records(2, ["m1"]))], rubric, name=name)


def _export(engine: Engine, batch: str, fmt: str) -> str:
    out = io.StringIO()
    export_ratings(engine, batch, fmt, None, stream=out)
    return out.getvalue()


def test_jsonl_writes_scores_as_numbers_and_csv_as_before(engine: Engine, tmp_path: Path) -> None:
    _loaded(engine, tmp_path)
    f = tmp_path / "r.csv"
    f.write_text(RATINGS, encoding="utf-8")
    import_ratings(engine, "b", f)
    lines = _export(engine, "b", "jsonl").splitlines()
    scores = {(r["sample_id"], r["dimension"]): r["score"] for r in map(json.loads, lines)}
    assert scores == {
        ("s0", "correctness"): 4,
        ("s0", "follows_format"): 1,
        ("s0", "tone"): "casual",
        ("s0", "quality"): 72.5,
        ("s1", "quality"): 3.0,
        ("s1", "correctness"): 2,
    }
    assert [type(v) for v in scores.values()].count(int) == 3
    assert type(scores["s1", "quality"]) is float  # a continuous score is a float, whole or not
    assert '"score": 4, ' in lines[0] and '"score": 72.5, ' in _export(engine, "b", "jsonl")
    # Each line is what json.dumps writes for its row.
    assert all(json.dumps(json.loads(line), ensure_ascii=False) == line for line in lines)
    # CSV: the stored text, as always.
    rows = list(csv.DictReader(io.StringIO(_export(engine, "b", "csv"))))
    assert {(r["sample_id"], r["dimension"]): r["score"] for r in rows} == {
        ("s0", "correctness"): "4",
        ("s0", "follows_format"): "1",
        ("s0", "tone"): "casual",
        ("s0", "quality"): "72.5",
        ("s1", "quality"): "3",
        ("s1", "correctness"): "2",
    }


def _as_text_scores(jsonl: str) -> str:
    """A JSONL export as exports before issue 27 wrote it: every score as text."""
    out = []
    for line in jsonl.splitlines():
        row = json.loads(line)
        if row["score"] is not None:
            row["score"] = str(row["score"]) if not isinstance(row["score"], float) else f"{row['score']:g}"
        out.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(out)


def test_import_reads_jsonl_exports_with_numbers_and_with_text(engine: Engine, tmp_path: Path) -> None:
    _loaded(engine, tmp_path)
    f = tmp_path / "r.csv"
    f.write_text(RATINGS, encoding="utf-8")
    import_ratings(engine, "b", f)
    new = _export(engine, "b", "jsonl")
    old = _as_text_scores(new)
    assert '"score": "4"' in old and '"score": 4,' in new
    expected = _scores_of(_export(engine, "b", "csv"))
    for seed, (batch, text) in enumerate((("new", new), ("old", old)), start=4):
        _loaded(engine, tmp_path, name=batch, seed=seed)
        path = tmp_path / f"{batch}.jsonl"
        path.write_text(text, encoding="utf-8")
        summary = import_ratings(engine, batch, path)
        assert (summary.ratings, summary.items, summary.comments) == (6, 2, 1)
        assert _scores_of(_export(engine, batch, "csv")) == expected


def _scores_of(csv_text: str) -> set[tuple[str, str, str, str, str]]:
    return {
        (r["reviewer"], r["sample_id"], r["dimension"], r["score"], r["comment"])
        for r in csv.DictReader(io.StringIO(csv_text))
    }


def test_a_bad_jsonl_line_is_located(engine: Engine, tmp_path: Path) -> None:
    _loaded(engine, tmp_path)
    f = tmp_path / "r.jsonl"
    f.write_text(
        '{"reviewer": "ann", "sample_id": "s0", "model": "m1", "dimension": "correctness", "score": 4}\n'
        '{"reviewer": "ann", "sample_id": "s0", "model": "m1", "dimension": "quality", "score": 300}\n'
        "not json\n"
        "[1, 2]\n",
        encoding="utf-8",
    )
    try:
        import_ratings(engine, "b", f)
    except RatingsImportError as exc:
        text = str(exc)
    else:
        raise AssertionError("a bad file was imported")
    assert f"{f}:2: score: '300' is not on the quality scale" in text
    assert f"{f}:3: not valid JSON" in text
    assert f"{f}:4: must be one JSON object per line" in text

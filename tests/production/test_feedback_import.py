"""``import-feedback`` on SQLite and PostgreSQL: located problems and nothing written, a re-import that adds
nothing, request ids (the same twice is one event; with other content a problem, in the file or against the
database), CSV and JSONL alike, timestamps in every accepted form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from reviewer_app.errors import NotFoundError, ValidationError
from reviewer_app.production.feedback import FeedbackImportError, import_feedback, monitor, parse_canary, parse_scale
from reviewer_app.production.feedback_file import parse_timestamp
from storage.engine import read_session
from storage.repositories.production import feedback_frame


def jsonl(path: Path, rows: list[dict[str, Any]] | list[str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def stored(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM feedback_event")).scalar_one())


GOOD = [
    {"model": "m1", "timestamp": "2026-03-02T10:00:00Z", "feedback": 1, "latency_ms": 800, "ttft_ms": 90,
     "request_id": "r1", "scenario": "qa"},
    {"model": "m1", "timestamp": "2026-03-02T12:00:00+02:00", "feedback": -1, "request_id": "r2"},
    {"model": "m2", "timestamp": 1772445600, "feedback": "+1", "latency_ms": None},
    {"model": "m2", "timestamp": 1772445600, "feedback": "+1", "latency_ms": None},  # identical: both count
    {"model": "m2", "timestamp": 1772445600123, "feedback": -1.0, "extra": "ignored"},
]  # fmt: skip


def test_import_then_reimport_adds_nothing(engine: Engine, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "f.jsonl", GOOD)
    first = import_feedback(engine, path)
    assert (first.read, first.new, first.already, first.repeated) == (5, 5, 0, 0)
    assert first.lines() == ["Imported f.jsonl (thumbs): 5 event(s) read, 5 new, 0 already there."]
    again = import_feedback(engine, path)
    assert (again.read, again.new, again.already) == (5, 0, 5)
    assert stored(engine) == 5
    with read_session(engine) as session:
        frame = feedback_frame(session)
    assert sorted(frame["ts_ms"].tolist()) == [
        1772445600000,
        1772445600000,
        1772445600000,
        1772445600000,
        1772445600123,
    ]  # fmt: skip  (10:00Z, 12:00+02:00 and epoch s/ms)
    assert frame["latency_ms"].isna().sum() == 4 and set(frame["scenario"].dropna()) == {"qa"}
    # One more event in a longer file: only it is new.
    bigger = import_feedback(engine, jsonl(tmp_path / "g.jsonl", [*GOOD, {**GOOD[0], "request_id": "r9"}]))
    assert (bigger.new, bigger.already) == (1, 5)


def test_every_problem_is_located_and_nothing_is_written(engine: Engine, tmp_path: Path) -> None:
    rows = [
        json.dumps(GOOD[0]),
        json.dumps({"model": "m1", "timestamp": "2026-03-02T10:00:00", "feedback": 1}),  # no zone
        json.dumps({"model": "m1", "timestamp": "yesterday", "feedback": 1}),
        json.dumps({"model": "m1", "timestamp": "2026-03-02T10:00:00Z", "feedback": 0}),  # off the thumbs scale
        json.dumps({"timestamp": "2026-03-02T10:00:00Z", "feedback": 1}),  # no model
        '{"model": "m1", "timestamp": ',  # bad JSON
        "",
        json.dumps({"model": "m1", "timestamp": "2026-03-02T10:00:00Z", "feedback": 1, "latency_ms": -3}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"model": "m1", "timestamp": "2026-03-02T10:00:00Z", "feedback": True}),
    ]
    with pytest.raises(FeedbackImportError) as caught:
        import_feedback(engine, jsonl(tmp_path / "bad.jsonl", rows))
    where = [(p.line, p.field) for p in caught.value.problems]
    assert where == [(2, "timestamp"), (3, "timestamp"), (4, "feedback"), (5, "model"), (6, None),
                     (8, "latency_ms"), (9, None), (10, "feedback")]  # fmt: skip
    message = str(caught.value)
    assert message.startswith("8 problem(s) in the feedback file; nothing was written.")
    assert "bad.jsonl:2: timestamp: '2026-03-02T10:00:00' has no time zone; add Z for UTC" in message
    assert "bad.jsonl:4: feedback: 0 is off the thumbs scale: use +1 or -1" in message
    assert "bad.jsonl:6: not valid JSON" in message
    assert stored(engine) == 0  # the good first line was not written either


def test_problems_after_rows_were_written_roll_everything_back(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer_app.production.feedback_file as reader

    monkeypatch.setattr(reader, "CHUNK", 2)  # the first chunks are written before the bad line is read
    rows = [{**GOOD[0], "request_id": f"r{i}"} for i in range(6)] + [{"model": "m1", "feedback": 1}]
    with pytest.raises(FeedbackImportError) as caught:
        import_feedback(engine, jsonl(tmp_path / "late.jsonl", rows))
    assert [(p.line, p.field) for p in caught.value.problems] == [(7, "timestamp")]
    assert stored(engine) == 0


def test_series_first_seen_in_later_chunks_are_added_between_them(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL the COPY open across chunks is ended to add a new series, then opened again."""
    import reviewer_app.production.feedback_file as reader

    monkeypatch.setattr(reader, "CHUNK", 2)
    rows = [{"model": f"m{i // 3}", "timestamp": 1772445600 + i, "feedback": 1, "scenario": ["a", None][i % 2]}
            for i in range(9)]  # fmt: skip
    result = import_feedback(engine, jsonl(tmp_path / "series.jsonl", rows))
    assert (result.read, result.new) == (9, 9) and stored(engine) == 9
    with read_session(engine) as session:
        frame = feedback_frame(session).sort_values("ts_ms")
    assert list(frame["model"]) == [f"m{i // 3}" for i in range(9)]
    assert list(frame["scenario"].astype(object).fillna("-")) == [["a", "-"][i % 2] for i in range(9)]
    again = import_feedback(engine, jsonl(tmp_path / "series.jsonl", rows))
    assert (again.new, again.already) == (0, 9)


def test_csv_with_a_missing_column_and_bad_cells(engine: Engine, tmp_path: Path) -> None:
    missing = tmp_path / "missing.csv"
    missing.write_text("model,feedback\nm1,1\n", encoding="utf-8")
    with pytest.raises(FeedbackImportError) as caught:
        import_feedback(engine, missing)
    assert [str(p) for p in caught.value.problems] == [
        "missing.csv:1: timestamp: missing column; the header needs model, timestamp, feedback"
    ]
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "Model,Timestamp,Feedback,Latency_ms\n"
        "m1,2026-03-02T10:00:00Z,1,800\n"
        "m1,2026-03-02T10:00:00Z,1,fast\n"
        "m1,2026-03-02T10:00:00Z\n"
        ",2026-03-02T10:00:00Z,1,\n",
        encoding="utf-8",
    )
    with pytest.raises(FeedbackImportError) as caught:
        import_feedback(engine, bad)
    assert [(p.line, p.field) for p in caught.value.problems] == [(3, "latency_ms"), (4, None), (5, "model")]
    assert stored(engine) == 0


def test_csv_imports_and_reimports(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_text(
        "\ufeffmodel,timestamp,feedback,scenario,latency_ms,ttft_ms\n"
        "m1,2026-03-02T10:00:00Z,4,qa,800,\n"
        "m1,1772445600,2.5,,,\n"
        "m1,1772445600,2.5,,,\n",
        encoding="utf-8",
    )
    first = import_feedback(engine, path, scale=parse_scale("1-5"))
    assert (first.read, first.new, first.scale) == (3, 3, "1-5")
    assert import_feedback(engine, path, scale=(1.0, 5.0)).new == 0
    with pytest.raises(FeedbackImportError, match=r"ok.csv:2: feedback: '4' is off the scale 1 to 3"):
        import_feedback(engine, path, scale=(1.0, 3.0))


def test_request_id_conflicts(engine: Engine, tmp_path: Path) -> None:
    same = import_feedback(engine, jsonl(tmp_path / "same.jsonl", [GOOD[0], GOOD[0]]))
    assert (same.read, same.new, same.repeated, same.already) == (2, 1, 1, 0)
    other = {**GOOD[0], "feedback": -1}
    with pytest.raises(FeedbackImportError) as caught:
        import_feedback(engine, jsonl(tmp_path / "twice.jsonl", [GOOD[1], {**GOOD[1], "feedback": 1}]))
    assert [(p.line, p.field) for p in caught.value.problems] == [(2, "request_id")]
    assert "'r2' appears earlier in the file with other content" in str(caught.value)
    with pytest.raises(FeedbackImportError) as caught:
        import_feedback(engine, jsonl(tmp_path / "changed.jsonl", [GOOD[2], other]))
    assert [(p.line, p.field) for p in caught.value.problems] == [(2, "request_id")]
    assert "'r1' is stored already with other content" in str(caught.value)
    assert stored(engine) == 1


def test_files_and_arguments(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        import_feedback(engine, tmp_path / "nope.jsonl")
    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(ValidationError, match="cannot tell the format"):
        import_feedback(engine, tmp_path / "f.txt")
    with pytest.raises(FeedbackImportError, match="no events in the file"):
        import_feedback(engine, jsonl(tmp_path / "empty.jsonl", []))
    assert parse_scale("-1,1") == (-1.0, 1.0) and parse_scale("1-5") == (1.0, 5.0) and parse_scale("thumbs")
    for bad in ("5-1", "one to five", "1"):
        with pytest.raises(ValidationError):
            parse_scale(bad)
    assert parse_canary("new = old") == ("new", "old")
    with pytest.raises(ValidationError):
        parse_canary("new")
    assert parse_timestamp("2026-03-02T10:00:00.5Z") == 1772445600500
    assert parse_timestamp(1772445600.25) == 1772445600250
    assert "no time zone" in str(parse_timestamp("2026-03-02 10:00"))


def test_monitor_reads_the_stored_events(engine: Engine, tmp_path: Path) -> None:
    import_feedback(engine, jsonl(tmp_path / "f.jsonl", GOOD))
    result = monitor(engine, window="7d", models=["m2"])
    assert result.models == ("m2",) and result.events == 3
    assert [(w.window, w.n) for w in result.windows] == [("2026-03-02", 3)]
    from reviewer_app.errors import ReportError

    with pytest.raises(ReportError, match="No production feedback for ghost yet"):
        monitor(engine, models=["ghost"])


def test_the_frame_reads_names_and_numbers_exactly(engine: Engine, tmp_path: Path) -> None:
    odd = [
        {"model": "NA", "timestamp": 1772445600, "feedback": 1, "latency_ms": 812.3456789012345, "scenario": "null"},
        {"model": 'a "quoted", name', "timestamp": 1772445601, "feedback": -1, "ttft_ms": 0.1 + 0.2},
    ]
    import_feedback(engine, jsonl(tmp_path / "odd.jsonl", odd))
    with read_session(engine) as session:
        frame = feedback_frame(session).sort_values("ts_ms")
        assert len(feedback_frame(session, ["nobody"])) == 0
    assert list(frame["model"]) == ["NA", 'a "quoted", name'] and list(frame["scenario"].astype(object))[0] == "null"
    assert frame["latency_ms"].iloc[0] == 812.3456789012345 and frame["ttft_ms"].iloc[1] == 0.1 + 0.2
    assert frame["scenario"].isna().iloc[1] and frame["latency_ms"].isna().iloc[1]


def test_monitor_rows_come_in_name_order_whatever_the_storage_order(engine: Engine, tmp_path: Path) -> None:
    """Models and scenarios are read as categories sorted by name, so the rows do not follow import order."""
    stored_order = [("zeta", "qa"), ("alpha", "write"), ("zeta", "code"), ("alpha", "qa")]
    events = [{"model": m, "timestamp": 1772445600 + k, "feedback": 1, "scenario": s}
              for k, (m, s) in enumerate(stored_order)]  # fmt: skip
    import_feedback(engine, jsonl(tmp_path / "z.jsonl", events))
    with read_session(engine) as session:
        frame = feedback_frame(session)
    assert list(frame["model"].cat.categories) == ["alpha", "zeta"]
    assert list(frame["scenario"].cat.categories) == ["code", "qa", "write"]
    result = monitor(engine, window="1d")
    assert [(w.model, w.scenario) for w in result.windows] == [
        ("alpha", None), ("zeta", None), ("alpha", "qa"), ("alpha", "write"), ("zeta", "code"), ("zeta", "qa"),
    ]  # fmt: skip

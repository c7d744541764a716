"""`blind-review import-feedback` and `blind-review monitor` end to end: counts printed, problems as lines
with exit 1, the monitor in every format (a known change flagged, the canary compared), untrusted names
escaped in HTML and Markdown and made inert in CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main

MONDAY = 1_772_409_600_000
DAY_MS = 86_400_000
ODD = "<b>x</b>"  # an untrusted model name
FORMULA = "=cmd|calc"


def write_events(path: Path) -> Path:
    """14 days of ``cur`` (0.8 then 0.6 from day 8), a canary ``new`` at 0.8 from day 8, and two odd names."""
    lines = []
    for d in range(14):
        for i in range(300):
            ts = MONDAY + d * DAY_MS + i * 1000
            up = i < (240 if d < 7 else 180)
            lines.append({"model": "cur", "timestamp": ts, "feedback": 1 if up else -1, "latency_ms": 500 + i,
                          "request_id": f"c{d}-{i}"})  # fmt: skip
            if d >= 7:
                lines.append({"model": "new", "timestamp": ts, "feedback": 1 if i < 240 else -1,
                              "latency_ms": 400 + i, "request_id": f"n{d}-{i}"})  # fmt: skip
    lines.append({"model": ODD, "timestamp": MONDAY, "feedback": 1, "scenario": "<i>s</i>"})
    lines.append({"model": FORMULA, "timestamp": MONDAY, "feedback": -1})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_import_and_monitor_in_every_format(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = write_events(tmp_path / "events.jsonl")
    assert main(["import-feedback", str(events)]) == 0
    assert capsys.readouterr().out == (
        "Imported events.jsonl (thumbs): 6302 event(s) read, 6302 new, 0 already there.\n"
    )
    assert main(["import-feedback", str(events), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "0 new, 6302 already there" in captured.out and "import events.jsonl" in captured.err  # the bar

    out = tmp_path / "m.json"
    assert main(["monitor", "--format", "json", "--out", str(out), "--canary", "new=cur"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"Wrote {out} (json): 6302 event(s) of 4 model(s)")
    assert "cur: feedback fell from 80.0% to 60.0% in the window from 2026-03-09 (against 2026-03-08; " in printed
    data = json.loads(out.read_text())
    flagged = [(c["kind"], c["model"], c["metric"], c["window"]) for c in data["changes"] if c["flagged"]]
    assert ("window", "cur", "feedback", "2026-03-09") in flagged
    assert ("canary", "new", "feedback", "overall") in flagged
    assert ("canary", "new", "latency_ms", "overall") in flagged
    assert not [f for f in flagged if f[0] == "window" and f[3] != "2026-03-09"]
    assert data["headline"].endswith(
        f"{len(data['flagged'])} significant change(s) among {len(data['changes'])} test(s)."
    )

    assert main(["monitor", "--format", "html", "--out", str(tmp_path / "m.html"), "--window", "7d"]) == 0
    page = (tmp_path / "m.html").read_text()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page and "<i>s</i>" not in page
    assert (
        page.count("<svg") == 2
        and "<script" not in page
        and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )
    assert main(["monitor", "--format", "md", "--out", str(tmp_path / "m.md")]) == 0
    md = (tmp_path / "m.md").read_text()
    assert "<b>" not in md and "## Flagged changes" in md
    capsys.readouterr()
    assert main(["monitor", "--format", "csv", "--out", "-", "--model", FORMULA]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["model"] for r in rows] == ["'" + FORMULA] and rows[0]["section"] == "window"


def test_problems_are_lines_and_exit_1(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "m", "timestamp": "2026-03-02T10:00:00", "feedback": 1}\n', encoding="utf-8")
    assert main(["import-feedback", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 1 problem(s) in the feedback file; nothing was written.")
    assert "bad.jsonl:1: timestamp: '2026-03-02T10:00:00' has no time zone" in err
    assert main(["import-feedback", str(bad), "--scale", "5-1"]) == 1
    assert "error: --scale: '5-1': the minimum must be below the maximum" in capsys.readouterr().err
    assert main(["monitor", "--out", str(tmp_path / "m.html")]) == 1
    assert "No production feedback yet" in capsys.readouterr().err
    assert main(["monitor", "--canary", "lonely"]) == 1
    assert "--canary: 'lonely': write NEW=CURRENT" in capsys.readouterr().err

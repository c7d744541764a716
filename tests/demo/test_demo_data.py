"""The demo shows what real batches hold: among them a long answer, several screens tall."""

from __future__ import annotations

import json
from pathlib import Path

from reviewer_app.demo import make_files

DEMO = Path(make_files.__file__).resolve().parent


def test_the_demo_has_a_long_answer_and_the_committed_file_is_what_the_script_writes() -> None:
    rows = [json.loads(line) for line in (DEMO / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    longest = max(rows, key=lambda r: len(r["output"]))
    assert len(longest["output"]) >= 10_000  # several screens at 1440x900
    assert longest["output"].count("```python") >= 10  # code blocks to scroll past, as real answers have
    expected = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in make_files._code_rows())
    committed = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r["scenario"] == "code")
    assert committed == expected

"""`blind-review set-titles`: show the titles reviewers see, set them, refuse one that names a model (one line,
exit 1, named by its flag); `load-batch` warns about names that name a model and loads all the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def _load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    records = make_records(4, ["vicuna-13b", "claude-2"], scenarios=("vicuna", "helpful_base"))
    argv = ["load-batch", str(write_batch(tmp_path, records)), "--rubric"]
    argv += [str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))), "--name", "alpaca-claude-vicuna"]
    assert main(argv) == 0
    return capsys.readouterr().out


def test_load_batch_warns_and_set_titles_shows_and_sets(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _load(tmp_path, capsys)
    assert "the batch's name names a model or vendor (Claude, Vicuna): reviewers see it as 'Batch 1'" in out
    assert "    'vicuna' (Vicuna): shown as 'Scenario 2'" in out
    assert "`blind-review set-titles alpaca-claude-vicuna` (see its --help)" in out

    assert main(["set-titles", "alpaca-claude-vicuna"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Titles reviewers see for batch 'alpaca-claude-vicuna' (leads, reports and exports keep the names):",
        "  batch     alpaca-claude-vicuna  ->  Batch 1       "
        "(neutral: the name names a model or vendor (Claude, Vicuna))",
        "  scenario  helpful_base          ->  helpful_base  (the name itself)",
        "  scenario  vicuna                ->  Scenario 2    (neutral: the name names a model or vendor (Vicuna))",
    ]
    argv = ["set-titles", "alpaca-claude-vicuna", "--display-name", "Round 1", "--scenario", "vicuna=Open = ended"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == [
        "batch",
        "alpaca-claude-vicuna",
        "->",
        "Round",
        "1",
        "(title",
        "set",
        "by",
        "an",
        "admin)",
    ]
    assert "vicuna                ->  Open = ended" in lines[3]  # the title keeps its own "="
    # The real name still finds the batch, and leads' commands show it.
    assert main(["list-batches"]) == 0
    assert "alpaca-claude-vicuna" in capsys.readouterr().out
    # Clearing: back to the neutral titles.
    assert main(["set-titles", "alpaca-claude-vicuna", "--display-name", "", "--scenario", "vicuna="]) == 0
    out = capsys.readouterr().out
    assert "->  Batch 1" in out and "->  Scenario 2" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--display-name", "Claude round"],
            "error: --display-name: the title 'Claude round' names a model or vendor (Claude), which would unblind "
            "reviewers; choose a title without it",
        ),
        (["--scenario", "vicuna"], "error: --scenario: write NAME=TITLE (NAME= clears a title), not 'vicuna'"),
        (
            ["--scenario", "nope=x"],
            "error: --scenario: batch 'alpaca-claude-vicuna' has no scenario 'nope' (it has: helpful_base, vicuna)",
        ),
    ],
)
def test_a_refused_title_is_one_line_and_exit_1(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    _load(tmp_path, capsys)
    assert main(["set-titles", "alpaca-claude-vicuna", *argv]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == message and captured.out == ""

"""Issue 27, point 9: a batch is loaded closed, and is shown to and claimed from by its own reviewers only.

Before, a batch was open to every reviewer from the moment it was loaded: a reviewer never named for it
claimed an item within seconds, before any plan was made.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from reviewer_app.batches.audience import batch_audience, set_batch_reviewers
from reviewer_app.batches.catalog import set_batch_open
from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import main
from reviewer_app.errors import BatchClosedError, NotFoundError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import batches_for, next_item, submit_review
from storage.engine import read_session
from storage.models import Batch
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

ANSWER = {"correctness": "4", "follows_format": "1"}


def _files(tmp_path: Path, name: str) -> tuple[Path, Path]:
    folder = tmp_path / name
    return write_batch(folder, make_records(4, ["m1", "m2"])), write_rubric(folder, RATING_RUBRIC.format(overlap=2))


def _visible(engine: Engine, reviewer_id: int) -> list[int]:
    return [b.batch_id for b in batches_for(engine, reviewer_id)]


def test_a_loaded_batch_is_nobodys_until_an_admin_opens_it(engine: Engine, tmp_path: Path) -> None:
    ana = add_reviewer(engine, "ana")[0]
    batch_file, rubric = _files(tmp_path, "b")
    summary = load_batch(engine, [batch_file], rubric, name="support-v1")
    assert any("is not open yet: nobody sees it until you open it" in line for line in summary.lines())
    assert any("`blind-review open-batch support-v1`" in line for line in summary.lines())
    assert _visible(engine, ana.id) == []
    with pytest.raises(BatchClosedError):  # a page left open on it, or a guessed id, claims nothing either
        next_item(engine, summary.batch_id, ana.id)

    set_batch_open(engine, "support-v1", True)
    assert _visible(engine, ana.id) == [summary.batch_id]
    assert next_item(engine, summary.batch_id, ana.id) is not None
    assert batch_audience(engine, "support-v1").line() == "Batch 'support-v1' is open to every active reviewer."


def test_a_batch_with_reviewers_of_its_own_is_theirs_alone(engine: Engine, tmp_path: Path) -> None:
    ana, bob, cy = (add_reviewer(engine, n)[0] for n in ("ana", "bob", "cy"))
    batch_file, rubric = _files(tmp_path, "b")
    summary = load_batch(engine, [batch_file], rubric, name="legal", reviewers=["ana", "bob"], open_now=True)
    assert any("is open to its reviewers: ana and bob" in line for line in summary.lines())
    batch_id = summary.batch_id
    assert _visible(engine, ana.id) == [batch_id] and _visible(engine, cy.id) == []
    assert next_item(engine, batch_id, cy.id) is None  # never named: no item, however asked
    view = next_item(engine, batch_id, bob.id)
    assert view is not None
    submit_review(engine, bob.id, view.assignment_id, ANSWER)

    set_batch_reviewers(engine, "legal", add=["cy"], remove=["bob"])
    assert _visible(engine, cy.id) == [batch_id] and next_item(engine, batch_id, cy.id) is not None
    assert next_item(engine, batch_id, bob.id) is None  # off the batch: no new items...
    assert _visible(engine, bob.id) == [batch_id]  # ...but the answer given is still theirs to see

    audience = set_batch_reviewers(engine, "legal", remove=["ana", "cy"])  # nobody left: open to everyone
    assert audience.everyone and next_item(engine, batch_id, bob.id) is not None


def test_the_people_named_at_assign_become_the_batchs_reviewers(engine: Engine, tmp_path: Path) -> None:
    ana, bob, _cy = (add_reviewer(engine, n)[0] for n in ("ana", "bob", "cy"))
    batch_file, rubric = _files(tmp_path, "b")
    batch_id = load_batch(engine, [batch_file], rubric, name="planned").batch_id
    summary = assign(engine, "planned", ["ana", "cy"])  # planned before it opens: nobody can claim meanwhile
    assert summary.new_assignments == 16
    assert _visible(engine, ana.id) == []  # planned, but not open yet
    set_batch_open(engine, "planned", True)
    assert _visible(engine, ana.id) == [batch_id] and _visible(engine, bob.id) == []
    assert next_item(engine, batch_id, bob.id) is None
    assert batch_audience(engine, "planned").reviewers == ("ana", "cy")
    set_batch_open(engine, "planned", False)
    with pytest.raises(BatchClosedError, match="open it before assigning"):  # closed after it ran: finished
        assign(engine, "planned", ["bob"])


def test_an_unknown_reviewer_stops_the_load_before_anything_is_written(engine: Engine, tmp_path: Path) -> None:
    add_reviewer(engine, "ana")
    batch_file, rubric = _files(tmp_path, "b")
    unknown = r"^no person named 'anna'; add them with `blind-review add-reviewer anna`$"
    with pytest.raises(NotFoundError, match=unknown):
        load_batch(engine, [batch_file], rubric, name="typo", reviewers=["ana", "anna"])
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Batch)).scalar_one() == 0


def test_the_cli_loads_closed_opens_and_chooses_reviewers(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("ana", "bob"):
        add_reviewer(engine, name)
    batch_file, rubric = _files(tmp_path, "b")
    assert main(["load-batch", str(batch_file), "--rubric", str(rubric), "--name", "cli"]) == 0
    assert "Batch 'cli' is not open yet" in capsys.readouterr().out
    assert main(["batch-reviewers", "cli", "--add", "ana,bob"]) == 0
    assert "it will be open to its reviewers: ana and bob" in capsys.readouterr().out
    assert main(["open-batch", "cli"]) == 0
    assert capsys.readouterr().out.strip() == "Batch 'cli' is open to its reviewers: ana and bob."
    assert main(["batch-reviewers", "cli", "--remove", "bob"]) == 0
    assert capsys.readouterr().out.strip() == "Batch 'cli' is open to its reviewers: ana."
    assert main(["close-batch", "cli"]) == 0
    assert "Batch 'cli' is closed: it takes no new or revised ratings" in capsys.readouterr().out

    other, _ = _files(tmp_path, "c")
    (tmp_path / "c" / "batch.jsonl").write_text(other.read_text().replace("m1", "m3"), encoding="utf-8")
    argv = ["load-batch", str(other), "--rubric", str(rubric), "--name", "now", "--open", "--reviewers", "bob"]
    assert main(argv) == 0
    assert "Batch 'now' is open to its reviewers: bob." in capsys.readouterr().out
    assert main(["batch-reviewers", "now", "--add", "zed"]) == 1
    assert "no person named 'zed'" in capsys.readouterr().err

"""Follow-up batches (``load-batch --follow-up``): the baseline's rubric and samples, anchors stored as anchors.

A baseline of 10 samples (5 per scenario) answered by m1 and m2; a follow-up answered by m1 (a new version
under the same name, as a hosted model changes) and m3. With the default share of 0.2, one sample per
scenario is anchored: the baseline's two outputs of each are shown again, four anchor items pointing at the
baseline's own output rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import delete_batch
from reviewer_app.batches.follow_up import pick_anchor_samples
from reviewer_app.batches.loading import load_batch
from reviewer_app.cli._common import flag_for
from reviewer_app.cli.main import main
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.domain.rubric import Rubric
from reviewer_app.domain.versions import ModelPair
from reviewer_app.errors import BatchValidationError, ConflictError
from reviewer_app.people.people import add_reviewer
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.versions.compare import compare_ratings
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Item, Output, Rating, Reviewer
from storage.repositories.batches.batches import model_names
from storage.repositories.results.comments import answer_counts_frame, comments_frame
from storage.repositories.results.frames import ratings_frame
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric


def _new_round(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same samples answered by a new m1 and by m3."""
    out = []
    for rec in records:
        if rec["model"] == "m1":
            out.append({**rec, "output": "New: " + rec["output"]})
            out.append({**rec, "model": "m3", "output": "Third: " + rec["output"]})
    return out


@pytest.fixture
def baseline(engine: Engine, tmp_path: Path) -> tuple[int, list[dict[str, Any]]]:
    records = make_records(10, ["m1", "m2"])
    rubric = write_rubric(tmp_path / "base", RATING_RUBRIC.format(overlap=2))
    summary = load_batch(engine, [write_batch(tmp_path / "base", records)], rubric, name="v1", open_now=True)
    return summary.batch_id, records


def _items(engine: Engine, batch_id: int) -> list[Item]:
    with read_session(engine) as session:
        return list(session.execute(select(Item).where(Item.batch_id == batch_id).order_by(Item.id)).scalars())


def test_a_follow_up_takes_the_baseline_rubric_samples_and_shows_anchors(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    base_id, records = baseline
    path = write_batch(tmp_path / "new", _new_round(records))
    summary = load_batch(engine, [path], None, name="v2", follow_up="v1", open_now=True)
    assert not summary.already_loaded and summary.baseline == "v1"
    assert summary.outputs == 20 and summary.per_model == {"m1": 10, "m3": 10}  # anchors are no model's outputs
    assert summary.anchor_samples == 2 and summary.anchor_items == 4
    assert any("follow-up of 'v1': 4 anchor item(s)" in line for line in summary.lines())
    with read_session(engine) as session:
        batch = session.get(Batch, summary.batch_id)
        base = session.get(Batch, base_id)
        assert batch is not None and base is not None
        assert (batch.baseline_batch_id, batch.anchor_share) == (base_id, 0.2)
        assert batch.rubric_json == base.rubric_json and batch.mode == base.mode
        base_outputs = {o.id: o for o in session.execute(select(Output).where(Output.batch_id == base_id)).scalars()}
        names = model_names(session, summary.batch_id)
    assert names == ["m1", "m2", "m3"]  # the anchors' m2 too: a name scanned for and hidden from reviewers
    items = _items(engine, summary.batch_id)
    anchors = [i for i in items if i.is_anchor]
    assert len(items) == 24 and len(anchors) == 4
    assert all(i.output_a_id in base_outputs and i.output_b_id is None and not i.is_gold for i in anchors)
    own = [i for i in items if not i.is_anchor]
    assert not any(i.output_a_id in base_outputs for i in own)
    # One sample of each scenario, both baseline models' outputs of it.
    anchored = sorted((base_outputs[i.output_a_id].sample_id, base_outputs[i.output_a_id].model_id) for i in anchors)
    assert len({s for s, _ in anchored}) == 2 and len({m for _, m in anchored}) == 2


def test_a_follow_up_is_loaded_once_and_its_share_is_part_of_its_content(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    _, records = baseline
    path = write_batch(tmp_path / "new", _new_round(records))
    first = load_batch(engine, [path], None, name="v2", follow_up="v1", open_now=True)
    again = load_batch(engine, [path], None, name="v2-again", follow_up="v1", open_now=True)
    assert again.already_loaded and again.batch_id == first.batch_id
    none = load_batch(engine, [path], None, name="v2-no-anchors", follow_up="v1", anchor_share=0, open_now=True)
    assert not none.already_loaded and none.anchor_items == 0
    assert not any(i.is_anchor for i in _items(engine, none.batch_id))


def test_the_same_rubric_may_be_given_and_another_is_refused(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    _, records = baseline
    path = write_batch(tmp_path / "new", _new_round(records))
    same = write_rubric(tmp_path / "same", RATING_RUBRIC.format(overlap=2))
    assert not load_batch(engine, [path], same, name="v2", follow_up="v1", open_now=True).already_loaded
    other = write_rubric(tmp_path / "other", RATING_RUBRIC.format(overlap=3))
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, [path], other, name="v3", follow_up="v1", open_now=True)
    assert err.value.worded(flag_for).startswith("--rubric: is not the rubric of the baseline batch 'v1'")


def test_records_the_baseline_lacks_are_refused_at_their_lines(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    _, records = baseline
    new = _new_round(records)
    new[4] = {**new[4], "sample_id": "s99"}  # line 5
    new[5] = {**new[5], "sample_id": "s99"}  # line 6
    new[8] = {**new[8], "prompt": "Another question?"}  # lines 9 and 10: s4 asks another question
    new[9] = {**new[9], "prompt": "Another question?"}
    path = write_batch(tmp_path / "new", new)
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, [path], None, name="v2", follow_up="v1", open_now=True)
    problems = [(p.line, p.field) for p in err.value.problems if p.file == str(path)]
    assert (5, "sample_id") in problems and (6, "sample_id") in problems
    assert (9, "prompt") in problems
    assert "'s99' is not a sample of the baseline batch 'v1'" in str(err.value)
    with read_session(engine) as session:
        assert len(list(session.execute(select(Batch)).scalars())) == 1  # nothing written


def test_bad_follow_up_arguments_are_worded_by_flag(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    _, records = baseline
    path = write_batch(tmp_path / "new", _new_round(records))
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, [path], None, name="v2", follow_up="v1", anchor_share=1.5, open_now=True)
    assert err.value.worded(flag_for) == "--anchor-share: must be a share from 0 to 1 (e.g. 0.2), not 1.5"
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, [path], None, name="v2", follow_up="nope", open_now=True)
    assert err.value.worded(flag_for).startswith("--follow-up: no batch named 'nope' to follow up")


def test_anchor_samples_are_a_keyed_share_of_every_scenario() -> None:
    samples = {"qa": [f"q{i}" for i in range(10)], "code": [f"c{i}" for i in range(3)], "rare": ["r0"]}
    key = bytes(32)
    picked = pick_anchor_samples(samples, 0.2, key)
    assert {k: len(v) for k, v in picked.items()} == {"code": 1, "qa": 2, "rare": 1}  # round, at least one
    assert picked == pick_anchor_samples({k: v[::-1] for k, v in samples.items()}, 0.2, key)  # not the order
    assert all(set(v) <= set(samples[k]) for k, v in picked.items())
    others = [pick_anchor_samples(samples, 0.2, bytes([s] * 32))["qa"] for s in range(20)]
    assert len({tuple(o) for o in others}) > 5  # the batch's secret decides
    assert pick_anchor_samples(samples, 0, key) == {}
    assert pick_anchor_samples(samples, 1, key) == {k: sorted(v) for k, v in samples.items()}


def _rate_everything(engine: Engine, batch_id: int, value: str) -> None:
    """Two reviewers answer every item of the batch with ``value`` on every dimension (rows as the app writes)."""
    ids = [add_reviewer(engine, f"r{batch_id}-{k}")[0].id for k in range(2)]
    items = _items(engine, batch_id)
    with write_session(engine) as session:
        for n, who in enumerate(ids):
            rows = [
                {
                    "batch_id": batch_id,
                    "item_id": item.id,
                    "reviewer_id": who,
                    "occurrence": 0,
                    "position": pos,
                    "label": f"L{n}-{pos}",
                    "status": AssignmentStatus.DONE,
                    "comment": f"note {pos}",
                }
                for pos, item in enumerate(items)
            ]
            session.execute(insert(Assignment), rows)
        shown = session.execute(
            select(Assignment.id, Assignment.item_id, Assignment.reviewer_id).where(Assignment.batch_id == batch_id)
        ).all()
        session.execute(
            insert(Rating),
            [
                {
                    "assignment_id": a,
                    "batch_id": batch_id,
                    "item_id": i,
                    "reviewer_id": r,
                    "dimension": dim,
                    "value": value if dim == "correctness" else "1",
                }
                for a, i, r in shown
                for dim in ("correctness", "follows_format")
            ],
        )
        assert session.execute(select(Reviewer)).first() is not None


def test_anchor_rows_carry_the_baseline_model_and_repeat_and_the_report_leaves_them_out(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    base_id, records = baseline
    summary = load_batch(
        engine, [write_batch(tmp_path / "new", _new_round(records))], None, name="v2", follow_up="v1", open_now=True
    )
    _rate_everything(engine, summary.batch_id, "4")
    _rate_everything(engine, base_id, "3")
    with read_session(engine) as session:
        frame = ratings_frame(session, summary.batch_id, python_strings=True)
        base_frame = ratings_frame(session, base_id, python_strings=True)
        counts = answer_counts_frame(session, summary.batch_id)
        said = comments_frame(session, summary.batch_id, latest=5)
    assert frame["is_anchor"].dtype == bool and not base_frame["is_anchor"].any()
    # What reviewers wrote and how many answered are counted per model: the anchors are no model's here.
    assert set(counts["model_a"]) == {"m1", "m3"} and int(counts["answers"].sum()) == 20 * 2
    assert set(said["model_a"]) == {"m1", "m3"} and len(said) == 2 * 2 * 5  # 5 latest per scenario and model
    anchors = frame[frame["is_anchor"]]
    assert anchors["item_id"].nunique() == 4 and len(anchors) == 4 * 2 * 2
    assert set(anchors["model_a"]) == {"m1", "m2"} and set(anchors["repeat_a"]) == {0}
    assert set(frame.loc[~frame["is_anchor"], "model_a"]) == {"m1", "m3"}
    # The anchors' samples are the follow-up's own (its keys and scenarios), as compare needs them.
    assert set(anchors["sample_id"]) <= set(frame.loc[~frame["is_anchor"], "sample_id"])

    report = batch_report(engine, batch="v2")
    assert report.models == ("m1", "m3")  # m2 is rated only on anchors: in no ranking
    note = [w for w in report.overall.warnings if "anchor item" in w]
    assert note == [
        "This is a follow-up batch: 4 anchor item(s) (16 rating(s)), the baseline batch's own outputs shown "
        "again to measure how the panel moved between rounds, are left out of every ranking, agreement figure "
        "and reviewer diagnostic here; `blind-review compare` uses them."
    ]
    assert all(r.n_ratings == 40 for r in report.reviewers)  # 20 own items x 2 dimensions, anchors left out
    for block in report.scenarios:
        assert block.n_ratings == 40  # 5 samples x 2 models x 2 reviewers x 2 dimensions
    baseline_report = batch_report(engine, batch="v1")
    assert not any("anchor item" in w for w in baseline_report.overall.warnings)


def test_a_pairwise_follow_up_shows_baseline_pairs_again(engine: Engine, tmp_path: Path) -> None:
    records = make_records(10, ["m1", "m2", "m3"])
    rubric = write_rubric(tmp_path / "base", PAIRWISE_RUBRIC.format(overlap=1))
    base = load_batch(engine, [write_batch(tmp_path / "base", records)], rubric, name="p1", open_now=True)
    new = [{**r, "model": r["model"] + "-new"} for r in records if r["model"] != "m3"]
    summary = load_batch(
        engine, [write_batch(tmp_path / "new", new)], None, name="p2", follow_up="p1", anchor_share=0.4, open_now=True
    )
    assert summary.anchor_samples == 4 and summary.anchor_items == 4 * 3  # three pairs of each anchored sample
    base_pairs = {(i.output_a_id, i.output_b_id) for i in _items(engine, base.batch_id)}
    items = _items(engine, summary.batch_id)
    anchors = [(i.output_a_id, i.output_b_id) for i in items if i.is_anchor]
    assert set(anchors) <= base_pairs and len(set(anchors)) == 12
    assert sum(not i.is_anchor for i in items) == 10  # one pair per sample of the two new models
    frame = pd.DataFrame({"a": [a for a, _ in anchors]})
    assert len(frame) == 12


def test_a_baseline_is_not_deleted_from_under_its_follow_up(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    _, records = baseline
    load_batch(
        engine, [write_batch(tmp_path / "new", _new_round(records))], None, name="v2", follow_up="v1", open_now=True
    )
    with pytest.raises(ConflictError, match="'v1' is the baseline of the follow-up batch\\(es\\) 'v2'"):
        delete_batch(engine, "v1", confirm="v1")
    delete_batch(engine, "v2", confirm="v2")
    delete_batch(engine, "v1", confirm="v1")
    with read_session(engine) as session:
        assert session.execute(select(Item)).first() is None


def test_the_cli_loads_a_follow_up_without_a_rubric(
    engine: Engine,
    tmp_path: Path,
    baseline: tuple[int, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, records = baseline
    path = str(write_batch(tmp_path / "new", _new_round(records)))
    assert main(["load-batch", path, "--follow-up", "v1", "--name", "v2", "--anchor-share", "2"]) == 1
    assert "--anchor-share: must be a share from 0 to 1" in capsys.readouterr().err
    assert main(["load-batch", path, "--name", "v2"]) == 1
    assert "--rubric: a rubric file is required" in capsys.readouterr().err
    assert main(["load-batch", path, "--follow-up", "v1", "--name", "v2", "--anchor-share", "0.4"]) == 0
    printed = capsys.readouterr().out
    assert "follow-up of 'v1': 8 anchor item(s), the baseline's own outputs of 4 sample(s) (0.4 of each" in printed


def test_the_follow_up_frames_give_compare_its_panel_shift(
    engine: Engine, tmp_path: Path, baseline: tuple[int, list[dict[str, Any]]]
) -> None:
    """End to end through storage: every rating one point higher in the follow-up round, anchors too. The
    anchors measure the whole point as the panel's shift, and m1 (the same name, a new version) is corrected
    back to no difference."""
    base_id, records = baseline
    summary = load_batch(
        engine, [write_batch(tmp_path / "new", _new_round(records))], None, name="v2", follow_up="v1", open_now=True
    )
    _rate_everything(engine, base_id, "3")
    _rate_everything(engine, summary.batch_id, "4")
    with read_session(engine) as session:
        base_frame = ratings_frame(session, base_id, python_strings=True)
        new_frame = ratings_frame(session, summary.batch_id, python_strings=True)
        rubric = Rubric.from_json(session.get(Batch, base_id).rubric_json)  # type: ignore[union-attr]
    result = compare_ratings(base_frame, new_frame, rubric, [ModelPair("m1", "m1")], seed=1, rounds=200)
    rows = [r for r in result.rows if r.dimension == "correctness"]
    assert rows and all(r.diff == pytest.approx(1.0) for r in rows)
    assert all(r.panel_shift == pytest.approx(1.0) and r.corrected == pytest.approx(0.0) for r in rows)

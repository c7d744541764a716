"""Preference records from known verdicts: which output wins, by how many, with what agreement; ties left out or
marked; a rating batch ordered by the report's overall score; the panel's ratings only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.exports import export_preferences
from reviewer_app.ratings.export import export_rows
from reviewer_app.ratings.files import import_ratings
from tests.exports.builders import CONVERSATION, pairwise_batch, rating_batch, records
from tests.helpers import write_batch, write_rubric

VOTES = ("sample_id", "chosen_model", "rejected_model", "chosen_votes", "rejected_votes", "tie_votes", "tie")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def votes(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r[c] for c in VOTES) for r in rows]


def test_pairwise_majority_wins_and_ties_are_left_out(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    out = tmp_path / "prefs.jsonl"
    summary = export_preferences(engine, "pairs", out)
    rows = read_jsonl(out)
    assert votes(rows) == [("s0", "alpha", "beta", 2, 1, 0, False), ("s3", "beta", "alpha", 3, 0, 0, False)]
    assert [r["agreement"] for r in rows] == [pytest.approx(2 / 3), 1.0]
    first = rows[0]
    assert list(first)[:5] == ["prompt", "chosen", "rejected", "batch", "source"]
    assert (first["prompt"], first["chosen"], first["rejected"]) == ("Question 0?", "alpha answers 0", "beta answers 0")
    assert (rows[1]["chosen"], rows[1]["rejected"]) == ("beta answers 3", "alpha answers 3")
    assert {r["source"] for r in rows} == {"pairwise"} and {r["batch"] for r in rows} == {"pairs"}
    assert [r["scenario"] for r in rows] == ["qa", "summaries"]
    assert rows[0]["chosen_score"] is None and rows[0]["rejected_score"] is None
    assert (summary.records, summary.tied, summary.below_agreement) == (2, 2, 0)
    assert summary.models == ("alpha", "beta")
    assert summary.lines()[0] == (
        f"Wrote 2 preference record(s) from batch 'pairs' (pairwise) to {out} (jsonl); 2 tie(s) left out."
    )


def test_marked_ties_keep_the_pair_in_name_order_with_their_agreement(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    out = tmp_path / "prefs.jsonl"
    summary = export_preferences(engine, "pairs", out, ties="mark")
    rows = read_jsonl(out)
    assert votes(rows) == [
        ("s0", "alpha", "beta", 2, 1, 0, False),
        ("s1", "alpha", "beta", 1, 1, 0, True),  # an even split
        ("s2", "alpha", "beta", 0, 1, 2, True),  # two reviewers saw no difference, one preferred beta
        ("s3", "beta", "alpha", 3, 0, 0, False),
    ]
    assert [r["agreement"] for r in rows] == [pytest.approx(2 / 3), 0.5, pytest.approx(2 / 3), 1.0]
    assert (summary.records, summary.tied) == (4, 2) and "2 tie(s) marked tie: true" in summary.lines()[0]


def test_min_agreement_leaves_out_what_too_few_agreed_with(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    out = tmp_path / "prefs.jsonl"
    summary = export_preferences(engine, "pairs", out, min_agreement=0.9)
    assert votes(read_jsonl(out)) == [("s3", "beta", "alpha", 3, 0, 0, False)]
    assert (summary.records, summary.below_agreement) == (1, 1)
    assert "Left out 1 below --min-agreement 0.9." in summary.lines()
    # 2 of 3 is exactly what --min-agreement 0.6667 asks for, written as people write it
    export_preferences(engine, "pairs", out, min_agreement=0.6667)
    assert len(read_jsonl(out)) == 1
    export_preferences(engine, "pairs", out, min_agreement=2 / 3)
    assert len(read_jsonl(out)) == 2


def test_rating_means_order_the_outputs_as_the_report_scores_them(engine: Engine, tmp_path: Path) -> None:
    rating_batch(engine, tmp_path)
    out = tmp_path / "prefs.jsonl"
    summary = export_preferences(engine, "scores", out, ties="mark")
    rows = read_jsonl(out)
    assert votes(rows) == [
        ("s0", "m1", "m2", 1, 1, 0, False),  # means 0.9375 and 0.875; ann preferred m1, bob m2
        ("s0", "m1", "m3", 2, 0, 0, False),
        ("s0", "m2", "m3", 2, 0, 0, False),
        ("s1", "m1", "m2", 0, 0, 2, True),  # equal means, and both reviewers scored them the same
        ("s1", "m3", "m1", 0, 0, 0, False),  # cy rated m3 alone: no reviewer rated both
        ("s1", "m3", "m2", 0, 0, 0, False),
    ]
    assert [r["agreement"] for r in rows] == [0.5, 1.0, 1.0, 1.0, None, None]
    assert [(r["chosen_score"], r["rejected_score"]) for r in rows] == [
        (0.9375, 0.875),
        (0.9375, 0.0),
        (0.875, 0.0),
        (0.4375, 0.4375),
        (1.0, 0.4375),
        (1.0, 0.4375),
    ]
    assert {r["source"] for r in rows} == {"ratings"} and summary.source == "ratings"
    # One sample's prompt is a conversation: every prompt is one, a text prompt a single user message.
    assert rows[0]["prompt"] == [{"role": "user", "content": "Question 0?"}]
    assert rows[3]["prompt"] == CONVERSATION
    assert (rows[4]["chosen"], rows[4]["rejected"]) == ("m3 answers 1", "m1 answers 1")
    # Ties left out, and a preference no reviewer's own scores back has no agreement to meet a threshold with.
    export_preferences(engine, "scores", out, min_agreement=0.5)
    assert votes(read_jsonl(out)) == [v for v in votes(rows) if v[0] == "s0"]


def test_judges_answers_never_count(engine: Engine, demo: dict[str, str], tmp_path: Path) -> None:
    """The demo batches carry a recorded LLM judge's answers beside the panel's: the preferences count the
    panel's reviewers only (two colleagues, overlap 2), so no item has more votes than that."""

    for batch, source in (("demo-pairwise", "pairwise"), ("demo", "ratings")):
        out = tmp_path / f"{batch}.jsonl"
        summary = export_preferences(engine, batch, out, ties="mark")
        rows = read_jsonl(out)
        assert summary.source == source and len(rows) == summary.records > 0
        panel = {r["reviewer"] for r in export_rows(engine, batch)}
        assert not any(name.startswith("judge:") for name in panel)
        voters = [r["chosen_votes"] + r["rejected_votes"] + r["tie_votes"] for r in rows]
        assert max(voters) <= len(panel) and (source == "ratings" or min(voters) > 0)
        assert not any("demo-judge" in orjson.dumps(r).decode() for r in rows)
        # In the batch file's sample order, each sample's pairs together and in model-name order.
        runs = [s for i, s in enumerate(r["sample_id"] for r in rows) if i == 0 or rows[i - 1]["sample_id"] != s]
        assert len(runs) == len(set(runs))
        pairs = [(r["sample_id"], *sorted((r["chosen_model"], r["rejected_model"]))) for r in rows]
        assert pairs == sorted(pairs, key=lambda p: (runs.index(p[0]), p[1], p[2]))


PER_DIMENSION = """
mode = "pairwise"
overlap = 3
seed = 5
pairwise_granularity = "per_dimension"
[[dimensions]]
name = "correctness"
description = "Which is more correct?"
[[dimensions]]
name = "clarity"
description = "Which is clearer?"
"""


def test_per_dimension_answers_make_one_verdict_per_reviewer(engine: Engine, tmp_path: Path) -> None:
    """Without an ``overall`` dimension a reviewer's verdict is the side that won more of their dimensions:
    s0 ann a+a, bob a+tie, cy b+a (even) -> alpha 2, even 1; s1 ann a+b (even), bob b+both_bad -> beta 1,
    even 1: a tie."""
    load_batch(
        engine,
        [write_batch(tmp_path, records(2, ["alpha", "beta"]))],
        write_rubric(tmp_path, PER_DIMENSION),
        name="dims",
        open_now=True,
    )
    answers = [
        ("ann", "s0", "a", "a"), ("bob", "s0", "a", "tie"), ("cy", "s0", "b", "a"),
        ("ann", "s1", "a", "b"), ("bob", "s1", "b", "both_bad"),
    ]  # fmt: skip
    lines = ["reviewer,sample_id,model_a,model_b,dimension,winner"]
    for who, sample, correctness, clarity in answers:
        lines += [
            f"{who},{sample},alpha,beta,correctness,{correctness}",
            f"{who},{sample},alpha,beta,clarity,{clarity}",
        ]
    (tmp_path / "dims.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_ratings(engine, "dims", tmp_path / "dims.csv")
    out = tmp_path / "dims.jsonl"
    export_preferences(engine, "dims", out, ties="mark")
    rows = read_jsonl(out)
    assert votes(rows) == [("s0", "alpha", "beta", 2, 0, 1, False), ("s1", "alpha", "beta", 0, 1, 1, True)]
    assert [r["agreement"] for r in rows] == [pytest.approx(2 / 3), 0.5]


def _lead_rules(engine: Engine, batch: str, side_of: str | None = None, value: str = "") -> None:
    """A lead rules on a dispute of the batch: for a pairwise batch, on the one showing the output whose text is
    ``side_of``, that it is better (on the lead's own blind sides); otherwise on the first, ``value``."""
    from reviewer_app.adjudication import case_view, queue, rule
    from reviewer_app.batches import find_batch
    from reviewer_app.people.people import add_reviewer, get_person

    add_reviewer(engine, "boss", "lead")
    lead = get_person(engine, "boss")
    batch_id = find_batch(engine, batch).id
    assert batch_id is not None
    token = queue(engine, lead, batch_id).tokens[0]
    if side_of is not None:  # the queue's order is the adjudicator's own draw: find the case by its texts
        for token in queue(engine, lead, batch_id).tokens:
            texts = [o.text for o in case_view(engine, lead, batch_id, token).item.outputs]
            if side_of in texts:
                value = "left" if texts[0] == side_of else "right"
                break
    rule(engine, lead, batch_id, token, value, "Read against the source.")


def test_rulings_decide_the_pairs_they_rule_only_when_asked(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)  # s0: alpha 2-1 (opposite verdicts: disputed); s1: 1-1 (disputed)
    _lead_rules(engine, "pairs", side_of="beta answers 0")
    out = tmp_path / "prefs.jsonl"
    as_answered = export_preferences(engine, "pairs", out, ties="mark")
    rows = read_jsonl(out)
    assert votes(rows)[0] == ("s0", "alpha", "beta", 2, 1, 0, False) and not any(r["adjudicated"] for r in rows)
    assert (as_answered.adjudicated, as_answered.ruled) == (False, 0)
    ruled = export_preferences(engine, "pairs", out, ties="mark", adjudicated=True)
    rows = read_jsonl(out)
    # the ruling in every reviewer's place: beta 3-0, agreement 1; the unruled s1 stays the panel's even split
    assert votes(rows) == [
        ("s0", "beta", "alpha", 3, 0, 0, False),
        ("s1", "alpha", "beta", 1, 1, 0, True),
        ("s2", "alpha", "beta", 0, 1, 2, True),
        ("s3", "beta", "alpha", 3, 0, 0, False),
    ]
    assert [r["adjudicated"] for r in rows] == [True, False, False, False] and rows[0]["agreement"] == 1.0
    assert (rows[0]["chosen"], rows[0]["rejected"]) == ("beta answers 0", "alpha answers 0")
    assert (ruled.adjudicated, ruled.ruled) == (True, 1)
    assert "Adjudicated: 1 record(s) read an adjudicator's ruling in the panel's place (adjudicated: true)." in (
        ruled.lines()
    )
    # min_agreement reads the ruled agreement: s0 now passes 0.9 with s3
    export_preferences(engine, "pairs", out, min_agreement=0.9, adjudicated=True)
    assert [r["sample_id"] for r in read_jsonl(out)] == ["s0", "s3"]


def test_a_ruled_score_moves_the_rating_pairs_of_its_output(engine: Engine, tmp_path: Path) -> None:
    from tests.helpers import RATING_RUBRIC

    rubric = RATING_RUBRIC.format(overlap=2) + "[adjudication]\nspread = 2\n"  # s0 m2's 3 and 5 are disputed
    load_batch(engine, [write_batch(tmp_path, records(2, ["m1", "m2", "m3"]), name="scores.jsonl")],
               write_rubric(tmp_path, rubric, name="scores.toml"), name="scores", open_now=True)  # fmt: skip
    from tests.exports.builders import RATING_SCORES

    (tmp_path / "scores.csv").write_text(RATING_SCORES, encoding="utf-8")
    import_ratings(engine, "scores", tmp_path / "scores.csv")
    _lead_rules(engine, "scores", value="3")
    out = tmp_path / "prefs.jsonl"
    summary = export_preferences(engine, "scores", out, adjudicated=True)
    rows = {(r["chosen_model"], r["rejected_model"]): r for r in read_jsonl(out) if r["sample_id"] == "s0"}
    # m2 on s0: correctness 3 for ann and bob (was 3 and 5), so 0.75 for both: m1 (0.9375) over m2 by both
    m1_m2 = rows["m1", "m2"]
    assert (m1_m2["chosen_votes"], m1_m2["rejected_votes"], m1_m2["agreement"]) == (2, 0, 1.0)
    assert (m1_m2["chosen_score"], m1_m2["rejected_score"], m1_m2["adjudicated"]) == (0.9375, 0.75, True)
    assert rows["m2", "m3"]["adjudicated"] and not rows["m1", "m3"]["adjudicated"]
    assert summary.ruled == 2

"""Which items are disputed under the rubric's ``[adjudication]`` rule, and what a ruling does to the answers the
rankings read (``analysis.disputes``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.disputes import dispute_rule, find_disputes, overrule
from reviewer_app.analysis.prepare import canonical_outcome
from reviewer_app.domain.enums import Mode, Scale
from reviewer_app.domain.rubric import Adjudication, Dimension, Rubric
from tests.support.simulated_panels import ERRATIC_TRUTH, continuous, erratic_reviewer_study, likert, model_gap

BINARY = Dimension(name="format", description="format", scale=Scale.BINARY, level="nominal")


def _frame(answers: dict[tuple[int, str], list[str]], *, model_b: str | None = None) -> pd.DataFrame:
    rows = []
    for (item, dim), values in answers.items():
        for k, value in enumerate(values):
            rows.append(
                {"scenario": "qa", "sample_id": f"s{item}", "item_id": item, "is_gold": False, "reviewer": f"r{k}",
                 "occurrence": 0, "position": item, "swapped": k % 2 == 1, "dimension": dim, "value": value,
                 "model_a": "m1", "model_b": model_b, "is_anchor": False}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _rubric(*dims: Dimension, **adjudication: object) -> Rubric:
    return Rubric(mode=Mode.RATING, overlap=3, dimensions=dims, adjudication=Adjudication(**adjudication))  # type: ignore[arg-type]


def test_a_likert_item_is_disputed_when_its_scores_are_more_than_half_the_scale_apart() -> None:
    frame = _frame({(1, "c"): ["1", "4", "5"], (2, "c"): ["2", "3", "4"], (3, "c"): ["2", "5"], (4, "c"): ["5"]})
    found = find_disputes(frame, _rubric(likert("c")))
    assert found["item_id"].tolist() == [1, 3]
    assert found["panel"].tolist() == ["1, 4, 5", "2, 5"]
    assert dispute_rule(_rubric(likert("c"))) == "c: scores 3 or more points apart"
    # 1-7: 4 or more; the rubric's own spread wins.
    assert dispute_rule(_rubric(likert("c", 1, 7))) == "c: scores 4 or more points apart"
    assert find_disputes(frame, _rubric(likert("c"), spread=2))["item_id"].tolist() == [1, 2, 3]


def test_a_continuous_scale_needs_more_than_half_its_range() -> None:
    frame = _frame({(1, "mqm"): ["0", "50"], (2, "mqm"): ["10", "60.5"]})
    rubric = _rubric(continuous("mqm"))
    assert find_disputes(frame, rubric)["item_id"].tolist() == [2]
    assert dispute_rule(rubric) == "mqm: scores more than 50 points apart"


def test_binary_and_categorical_questions_only_when_named_and_then_any_difference() -> None:
    frame = _frame({(1, "format"): ["0", "1", "1"], (2, "format"): ["1", "1"]})
    assert find_disputes(frame, _rubric(BINARY)).empty
    named = _rubric(BINARY, dimensions=("format",))
    assert find_disputes(frame, named)["item_id"].tolist() == [1]
    assert dispute_rule(named) == "format: any two different answers"


def test_gold_items_repeats_and_anchors_are_not_disputes() -> None:
    frame = _frame({(1, "c"): ["1", "5"], (2, "c"): ["1", "5"], (3, "c"): ["1", "5"], (4, "c"): ["1", "5"]})
    frame.loc[frame["item_id"] == 2, "is_gold"] = True
    frame.loc[(frame["item_id"] == 3) & (frame["reviewer"] == "r1"), "occurrence"] = 1
    frame.loc[frame["item_id"] == 4, "is_anchor"] = True
    assert find_disputes(frame, _rubric(likert("c")))["item_id"].tolist() == [1]


def test_pairwise_opposite_verdicts_in_the_items_own_order_whatever_the_sides() -> None:
    # Reviewer r1 saw each pair swapped: their "left" is the second model.
    frame = _frame({(1, "overall"): ["left", "left"], (2, "overall"): ["left", "right", "tie"]}, model_b="m2")
    rubric = Rubric(mode=Mode.PAIRWISE, overlap=3, dimensions=())
    found = find_disputes(frame, rubric)
    assert found["item_id"].tolist() == [1]
    assert found["panel"].tolist() == ["a 1, b 1"]
    assert dispute_rule(rubric).startswith("opposite verdicts")


@pytest.mark.parametrize("ruling", ["a", "b", "tie", "both_bad"])
def test_a_pairwise_ruling_is_every_answer_of_its_item_in_each_reviewers_own_view(ruling: str) -> None:
    frame = _frame({(1, "overall"): ["left", "left", "right"], (2, "overall"): ["left", "right"]}, model_b="m2")
    rulings = pd.DataFrame({"item_id": [1], "dimension": ["overall"], "value": [ruling]})
    ruled = overrule(frame, rulings, pairwise=True)
    out = canonical_outcome(ruled)
    assert (out[ruled["item_id"] == 1] == ruling).all()
    assert out[ruled["item_id"] == 2].tolist() == canonical_outcome(frame)[frame["item_id"] == 2].tolist()
    assert frame["value"].tolist()[:3] == ["left", "left", "right"]  # the caller's frame is not changed


def test_a_rating_ruling_replaces_only_its_question() -> None:
    frame = _frame({(1, "c"): ["1", "5"], (1, "h"): ["2", "2"], (2, "c"): ["1", "5"]})
    rulings = pd.DataFrame({"item_id": [1], "dimension": ["c"], "value": ["4"]})
    ruled = overrule(frame, rulings, pairwise=False)
    got = ruled.groupby(["item_id", "dimension"])["value"].agg(list).to_dict()
    assert got == {(1, "c"): ["4", "4"], (1, "h"): ["2", "2"], (2, "c"): ["1", "5"]}


def test_rulings_recover_the_truth_an_erratic_reviewer_hid() -> None:
    """Simulation with a known truth (``scripts/validate_adjudication.py``'s, 20 studies): two models 1 point
    apart, one reviewer of three answering at random on a quarter of the items. The disputes are those items,
    and rulings that give the true score bring the measured gap back towards 1."""
    rubric = _rubric(likert("c"), spread=2)
    panel, ruled, found, of_erratic = [], [], 0, 0
    for seed in range(20):
        frame, erratic = erratic_reviewer_study(seed)
        disputes = find_disputes(frame, rubric)
        found, of_erratic = found + len(disputes), of_erratic + len(set(disputes["item_id"]) & erratic)
        values = [str(ERRATIC_TRUTH[m]) for m in disputes["model_a"]]
        rulings = pd.DataFrame({"item_id": disputes["item_id"], "dimension": "c", "value": values})
        panel.append(model_gap(frame))
        ruled.append(model_gap(overrule(frame, rulings, pairwise=False)))
    assert of_erratic / found > 0.9
    assert np.mean(panel) < 0.95
    assert abs(np.mean(ruled) - 1) < abs(np.mean(panel) - 1) / 3


def test_the_rubric_round_trips_its_adjudication_table() -> None:
    rubric = _rubric(likert("c"), spread=2.0, dimensions=("c",), adjudicators=("senior",))
    assert Rubric.from_json(rubric.to_json()) == rubric
    plain = replace(rubric, adjudication=Adjudication())
    assert "adjudication" not in plain.to_json()


def test_a_pairwise_minority_share_keeps_only_close_splits() -> None:
    """Five reviewers: 4-1 is opposite verdicts, but with minority 0.4 only 3-2 (and 2-2 beside a tie) go."""
    frame = _frame(
        {
            # r1 and r3 saw the pair swapped: their "left" is b
            (1, "overall"): ["left", "right", "left", "right", "left"],  # a 5
            (2, "overall"): ["left", "left", "left", "left", "left"],  # a 3, b 2
            (3, "overall"): ["left", "right", "left", "left", "left"],  # a 4, b 1
            (4, "overall"): ["left", "left", "tie", "right", "right"],  # a 2, b 2, tie 1
        },
        model_b="m2",
    )
    pairwise = Rubric(mode=Mode.PAIRWISE, overlap=5, dimensions=())
    assert find_disputes(frame, pairwise)["item_id"].tolist() == [2, 3, 4]
    close = replace(pairwise, adjudication=Adjudication(minority=0.4))
    found = find_disputes(frame, close)
    assert found["item_id"].tolist() == [2, 4]
    assert found["panel"].tolist() == ["a 3, b 2", "a 2, b 2, tie 1"]
    assert dispute_rule(close).startswith("opposite verdicts, the smaller side at least 40% of the reviewers")
    assert Rubric.from_json(close.to_json()) == close


def test_the_minority_setting_is_checked_where_it_is_written() -> None:
    from reviewer_app.batches.rubric_file import parse_rubric_text
    from reviewer_app.errors import RubricError

    pairwise = 'mode = "pairwise"\noverlap = 5\n\n[adjudication]\n'
    assert parse_rubric_text(pairwise + "minority = 0.4\n").adjudication.minority == 0.4
    for bad, said in (
        ("minority = 0.6", "at most 0.5"),
        ("minority = 0", "above 0"),
        ('minority = "half"', "not 'half'"),
        ("spread = 2", "is for rating mode"),
        ("majority = 0.4", "known ones are adjudicators, dimensions, minority, spread"),
    ):
        with pytest.raises(RubricError, match=said):
            parse_rubric_text(pairwise + bad + "\n")
    rating = 'mode = "rating"\noverlap = 3\n\n[[dimensions]]\nname = "c"\ndescription = "c"\nscale = "likert"\n'
    with pytest.raises(RubricError, match="adjudication.minority.*is for pairwise mode"):
        parse_rubric_text(rating + "min = 1\nmax = 5\n\n[adjudication]\nminority = 0.4\n")

"""Anonymous labels: five characters as before, a longer label once a batch would fill half of that space
(issue 14, point 6), tested on a patched small space instead of 16.7M rows."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import AssignmentError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review import blinding
from reviewer_app.review.assignment import assign
from reviewer_app.review.blinding import draw_labels, label_length
from storage.engine import read_session
from storage.models import Assignment
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def draw_labels_0c7315f(rng: random.Random, count: int, taken: set[str] | None = None) -> list[str]:
    """draw_labels as it was at 0c7315f (five characters, ValueError past half the space), for comparison."""
    alphabet, length = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 5
    taken = set() if taken is None else taken
    space = len(alphabet) ** length
    if count + len(taken) > space // 2:
        raise ValueError("too many labels requested")
    out: list[str] = []
    seen = set(taken)
    while len(out) < count:
        n = rng.randrange(space)
        chars = []
        for _ in range(length):
            n, r = divmod(n, len(alphabet))
            chars.append(alphabet[r])
        label = "".join(chars)
        if label not in seen:
            seen.add(label)
            out.append(label)
    return out


@pytest.mark.parametrize("count", [1, 7, 5_000])
def test_below_half_the_space_the_draws_are_what_they_were(count: int) -> None:
    taken = set(draw_labels_0c7315f(random.Random(3), 2_000))
    for seed in range(3):
        assert draw_labels(random.Random(seed), count) == draw_labels_0c7315f(random.Random(seed), count)
        assert draw_labels(random.Random(seed), count, taken) == draw_labels_0c7315f(random.Random(seed), count, taken)


def test_the_real_space_switches_to_six_characters_past_16_7m_labels() -> None:
    assert label_length(32**5 // 2) == 5
    assert label_length(32**5 // 2 + 1) == 6
    assert label_length(32**6 // 2 + 1) == 7


@pytest.fixture
def small_space(monkeypatch: pytest.MonkeyPatch) -> None:
    """Labels of 'A' and 'B': two characters hold 4 labels (2 drawn at most), three 8 (4), and so on."""
    monkeypatch.setattr(blinding, "LABEL_ALPHABET", "AB")
    monkeypatch.setattr(blinding, "LABEL_LENGTH", 2)
    monkeypatch.setattr(blinding, "MAX_LABEL_LENGTH", 6)


def test_a_full_space_gives_longer_labels_and_keeps_the_old_ones_apart(small_space: None) -> None:
    first = draw_labels(random.Random(1), 2)
    assert len(set(first)) == 2 and all(len(x) == 2 and set(x) <= {"A", "B"} for x in first)
    more = draw_labels(random.Random(2), 6, set(first))  # 8 labels in all: four characters (16, 8 drawn)
    assert all(len(x) == 4 for x in more) and len(set(more)) == 6
    assert not set(more) & set(first)
    again = draw_labels(random.Random(2), 8, set(first) | set(more))  # 16 in all: five characters
    assert all(len(x) == 5 for x in again) and len(set(again)) == 8


def test_past_the_longest_label_the_admin_is_told_to_split_the_batch(small_space: None) -> None:
    assert label_length(32) == 6  # 2**6 = 64 labels, half of them drawn
    with pytest.raises(AssignmentError, match=r"^a batch holds at most 32 anonymous labels .* this would make 33"):
        draw_labels(random.Random(1), 30, {"AA", "AB", "BA"})


def test_assign_gives_longer_unique_labels_when_the_short_ones_run_out(
    engine: Engine, tmp_path: Path, small_space: None
) -> None:
    batch = write_batch(tmp_path, make_records(3, ["m1", "m2"]))  # 6 items x k = 2: 12 labels
    load_batch(engine, [batch], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)), name="b", open_now=True)
    for name in ("ann", "bob", "cy"):
        add_reviewer(engine, name)
    summary = assign(engine, "b")
    with read_session(engine) as s:
        labels = list(s.execute(select(Assignment.label)).scalars())
    assert summary.new_assignments == len(labels) == 12
    assert len(set(labels)) == 12 and {len(x) for x in labels} == {5}  # 12 of 32 five-letter labels

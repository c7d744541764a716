"""Drift's identical share pairs each side's first output with a text per (sample, repeat) and counts the
pairs whose texts are equal (``drift._identical``, matched as sorted integer keys since issue 10's benchmark):
checked against a count by hand with repeated keys, missing texts, a repeat only one side has and sample ids
that are numbers on one side and text on the other."""

from __future__ import annotations

import pandas as pd

from reviewer_app.versions.drift import _identical


def _outputs(rows: list[tuple[object, int, str | None]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["sample_id", "repeat", "text"])
    return frame.astype({"sample_id": object, "text": object})


def test_first_text_per_sample_and_repeat_paired_and_compared() -> None:
    base = _outputs(
        [
            ("s1", 0, "a"),
            ("s1", 0, "zz"),  # not the first of (s1, 0)
            ("s2", 0, None),  # no text: the next one is s2's first
            ("s2", 0, "b"),
            ("s3", 0, "c"),
            ("s5", 1, "e"),
            ("7", 0, "n"),
        ]
    )
    cand = _outputs(
        [
            ("s1", 0, "a"),  # equal
            ("s2", 0, "b"),  # equal to base's first with a text
            ("s2", 0, "q"),
            ("s3", 0, "C"),  # differs
            ("s4", 0, "d"),  # only here
            ("s5", 0, "e"),  # another repeat than base's
            (7, 0, "n"),  # the number 7 is not the text "7"
        ]
    )
    assert _identical(base, cand) == (3, 2)
    assert _identical(cand, base) == (3, 2)
    assert _identical(base, cand.iloc[:0]) == (0, 0)

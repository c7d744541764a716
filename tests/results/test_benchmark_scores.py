"""Reading a lead's benchmark scores CSV: what is accepted, and every problem located by line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer_app.errors import Problem, ValidationError
from reviewer_app.results.benchmark_scores import (
    BenchmarkScoresError,
    check_margin,
    parse_benchmark_scores,
    read_benchmark_scores,
)


def _parse(text: str | bytes, **kw) -> object:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_benchmark_scores(data, source="scores.csv", **kw)


def _problems(text: str | bytes) -> list[Problem]:
    with pytest.raises(BenchmarkScoresError) as info:
        _parse(text)
    assert isinstance(info.value, ValidationError)
    return info.value.problems


def test_several_benchmarks_in_file_order_any_scale():
    scores = _parse("model,benchmark,score\nm1,MMLU,71.5\nm2,MMLU,80\nm1,Arena,1210\n m2 , Arena ,1195.5\n\n")
    assert scores.scores == {"MMLU": {"m1": 71.5, "m2": 80.0}, "Arena": {"m1": 1210.0, "m2": 1195.5}}
    assert list(scores.scores) == ["MMLU", "Arena"]
    assert scores.better_high("MMLU") and scores.margin == 2.0 and scores.source == "scores.csv"


def test_a_byte_order_mark_and_column_order_and_case_do_not_matter():
    scores = _parse("\ufeffScore,Model,Benchmark\n0.83,m1,acc\n0.91,m2,acc\n".encode())
    assert scores.scores == {"acc": {"m1": 0.83, "m2": 0.91}}


def test_higher_is_better_column_turns_a_benchmark_round():
    scores = _parse("model,benchmark,score,higher_is_better\nm1,err,3.1,false\nm2,err,2.0,false\nm1,acc,70,\n")
    assert not scores.better_high("err") and scores.better_high("acc")


def test_empty_file_and_header_only_say_what_to_write():
    for text in ("", "  \n"):
        (p,) = _problems(text)
        assert p.file == "scores.csv" and "empty" in p.message and "model,benchmark,score" in p.message
    (p,) = _problems("model,benchmark,score\n")
    assert "no rows under the header" in p.message


def test_missing_columns_are_named_on_line_1():
    problems = _problems("model,score\nm1,3\n")
    assert [(p.line, p.field) for p in problems] == [(1, "benchmark")]
    assert "found: model, score" in problems[0].message


def test_bad_rows_are_each_located():
    text = (
        "model,benchmark,score\n"
        "m1,MMLU,71\n"  # line 2: fine
        "m2,MMLU,seventy\n"  # line 3
        "m3,MMLU,nan\n"  # line 4
        "m4,MMLU,inf\n"  # line 5
        "m1,MMLU,72\n"  # line 6: duplicate of line 2
        ",MMLU,70\n"  # line 7
        "m5,MMLU,\n"  # line 8
        "m6,MMLU,70,extra\n"  # line 9
        "m7,MMLU,71,2\n"  # line 10: a decimal comma is no number (it would be 712)
    )
    problems = _problems(text)
    located = [(p.line, p.field) for p in problems]
    assert located == [
        (3, "score"),
        (4, "score"),
        (5, "score"),
        (6, None),
        (7, "model"),
        (8, "score"),
        (9, None),
        (10, None),
    ]
    assert "'seventy' is not a number" in problems[0].message
    assert "not a finite number" in problems[1].message and "not a finite number" in problems[2].message
    assert "first on line 2" in problems[3].message
    message = str(BenchmarkScoresError(problems))
    assert "8 problem(s) in the benchmark scores file" in message and "scores.csv:3: score:" in message


def test_conflicting_or_unknown_direction_is_located():
    text = "model,benchmark,score,higher_is_better\nm1,err,3,false\nm2,err,2,true\nm3,err,1,maybe\n"
    problems = _problems(text)
    assert [(p.line, p.field) for p in problems] == [(3, "higher_is_better"), (4, "higher_is_better")]
    assert "line 2 set the other way" in problems[0].message


def test_text_that_is_not_utf8_is_refused():
    (p,) = _problems(b"model,benchmark,score\nm\xe9,MMLU,70\n")
    assert "UTF-8" in p.message


def test_read_from_a_path_and_a_missing_path(tmp_path: Path):
    path = tmp_path / "scores.csv"
    path.write_text("model,benchmark,score\nm1,MMLU,70\n", encoding="utf-8")
    assert read_benchmark_scores(path, margin=0.5).margin == 0.5
    with pytest.raises(BenchmarkScoresError, match="cannot read it"):
        read_benchmark_scores(tmp_path / "nope.csv")


@pytest.mark.parametrize("margin", [-1.0, float("nan"), float("inf")])
def test_a_bad_margin_is_an_argument_problem(margin: float):
    with pytest.raises(BenchmarkScoresError) as info:
        check_margin(margin)
    assert info.value.problems[0].is_argument and info.value.problems[0].field == "benchmark_margin"
    assert check_margin(0) == 0.0

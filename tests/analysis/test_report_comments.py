"""Comments and "can't judge" reasons reach the lead's report, per scenario and model, counted in full, listed
newest first up to a bound, and escaped in every format however hostile the text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
from sqlalchemy.engine import Engine

from reviewer_app.analysis.comments import comment_groups
from reviewer_app.batches.catalog import find_batch
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.report import Report, report_to_dict
from reviewer_app.domain.report_panel import COMMENTS_SHOWN
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.files import import_ratings
from reviewer_app.reporting.comments import markdown_text
from reviewer_app.reporting.formats import load_schema, render
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.results.report_cache import ReportCache
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session
from storage.repositories.results.comments import answer_counts_frame, comments_frame
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric

SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'
LINK = "[click me](javascript:alert(1)) and ![pixel](http://tracker.example/p.png)"
PIPES = "a | b | c"
LINES = "first line\nsecond line"
HOSTILE = (SCRIPT, IMG, LINK, PIPES, LINES, "**bold** _it_ `code` ~~gone~~ $x$ &lt;")


def _rating_batch(engine: Engine, folder: Path, name: str = "b", n_samples: int = 6) -> int:
    batch = load_batch(
        engine,
        [write_batch(folder, make_records(n_samples, ["m1", "m2"]))],
        write_rubric(folder, RATING_RUBRIC.format(overlap=1) + f"# {name}\n"),
        name=name,
        open_now=True,
    )
    return batch.batch_id


def _answer_all(engine: Engine, batch_id: int, reviewer_id: int) -> list[tuple[int, str | None, str | None]]:
    """Answer the reviewer's queue in order: every third item "can't judge" with a hostile reason, the
    others scored; three answers in four with a hostile comment. Returns (assignment, comment, reason) per
    answer."""
    given = []
    k = 0
    while (view := next_item(engine, batch_id, reviewer_id)) is not None:
        comment = HOSTILE[k % len(HOSTILE)] if k % 4 != 3 else None
        reason = HOSTILE[(k + 3) % len(HOSTILE)] if k % 3 == 2 else None
        if reason is not None:
            submit_review(engine, reviewer_id, view.assignment_id, {}, comment=comment or "", cant_judge=reason)
        else:
            scores = {"correctness": str(1 + k % 5), "follows_format": str(k % 2)}
            submit_review(engine, reviewer_id, view.assignment_id, scores, comment=comment or "")
        given.append((view.assignment_id, comment, reason))
        k += 1
    return given


def _report(engine: Engine, name: str = "b") -> Report:
    return batch_report(engine, batch=name, rounds=100)


def test_every_answer_is_counted_and_every_word_is_listed_per_scenario_and_model(
    engine: Engine, tmp_path: Path
) -> None:
    batch_id = _rating_batch(engine, tmp_path)
    ann = add_reviewer(engine, "ann")[0]
    assign(engine, "b")
    given = _answer_all(engine, batch_id, ann.id)
    assert len(given) == 12
    report = _report(engine)
    groups = {(g.scenario, g.models): g for g in report.comments}
    assert set(groups) == {(s, (m,)) for s in ("qa", "summaries") for m in ("m1", "m2")}
    assert sum(g.n_answers for g in groups.values()) == 12
    assert sum(g.n_cant_judge for g in groups.values()) == sum(1 for _, _, r in given if r) == 4
    assert sum(g.n_commented for g in groups.values()) == sum(1 for _, c, r in given if c and not r)
    listed = [(row.comment, row.cant_judge_reason) for g in report.comments for row in g.cant_judge + g.commented]
    assert sorted(map(str, listed)) == sorted(str((c, r)) for _, c, r in given if c or r)
    for g in report.comments:
        assert all(row.cant_judge_reason for row in g.cant_judge)
        assert all(row.comment and row.cant_judge_reason is None for row in g.commented)
        for rows in (g.cant_judge, g.commented):
            stamps = [row.submitted_at for row in rows]
            assert stamps == sorted(stamps, reverse=True)  # newest first
        assert g.more == (0, 0)
    jsonschema.Draft202012Validator(load_schema()).validate(report_to_dict(report))
    assert json.loads(render(report, "json"))["comments"] == report_to_dict(report)["comments"]


def test_lists_are_bounded_and_say_how_many_more_the_export_has(engine: Engine, tmp_path: Path) -> None:
    """Twelve answers with a comment on one model in one scenario, two can't judge: the database hands over
    the latest ``latest`` of each kind, the counts stay whole."""
    folder = tmp_path / "files"
    load_batch(
        engine,
        [write_batch(folder, make_records(14, ["m1"], scenarios=("qa",)))],
        write_rubric(folder, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    header = "reviewer,sample_id,model,dimension,score,comment,cant_judge_reason\n"
    rows = [f"ann,s{i},m1,correctness,3,note {i},\nann,s{i},m1,follows_format,1,note {i},\n" for i in range(12)]
    rows += ["ann,s12,m1,,,,unreadable 12\n", "ann,s13,m1,,,why not,unreadable 13\n"]
    f = tmp_path / "r.csv"
    f.write_text(header + "".join(rows), encoding="utf-8")
    import_ratings(engine, "b", f)
    batch_id = find_batch(engine, "b").id
    assert batch_id is not None
    with read_session(engine) as session:
        latest = comments_frame(session, batch_id, latest=3)
        counts = answer_counts_frame(session, batch_id)
    assert counts.to_dict("records") == [
        {"scenario": "qa", "model_a": "m1", "model_b": None, "answers": 14, "cant_judge": 2, "commented": 12}
    ]
    assert latest["cant_judge"].tolist() == [True, True, False, False, False]
    # One import, one timestamp: the newest first means the highest assignment id first.
    assert latest["reason"].tolist()[:2] == ["unreadable 13", "unreadable 12"]
    assert latest["comment"].tolist() == ["why not", None, "note 11", "note 10", "note 9"]
    (group,) = comment_groups(latest, counts)
    assert (group.n_answers, group.n_cant_judge, group.n_commented, group.more) == (14, 2, 12, (0, 9))
    report = _report(engine)
    assert len(report.comments[0].commented) == min(12, COMMENTS_SHOWN)
    md = render(report, "md")
    if COMMENTS_SHOWN < 12:
        assert f"Comments (the {COMMENTS_SHOWN} most recent of 12; {12 - COMMENTS_SHOWN} more in the export):" in md
    assert "Can't judge (2):" in md and "14 answers: 2 can't judge, 12 scored with a comment." in md


def _tags(html: str) -> list[str]:
    return re.findall(r"<\s*([a-zA-Z][a-zA-Z0-9]*)", html)


def test_hostile_comments_are_escaped_in_the_markdown_and_html_reports(engine: Engine, tmp_path: Path) -> None:
    batch_id = _rating_batch(engine, tmp_path)
    ann = add_reviewer(engine, "ann")[0]
    assign(engine, "b")
    _answer_all(engine, batch_id, ann.id)
    report = _report(engine)
    html = render(report, "html")
    section = html[html.index("<h2>Comments and can&#x27;t-judge reasons</h2>") :]
    section = section[: section.index("<h2>", 5)]
    # Only our own tags: no script, image or link from a comment, and the texts are there, escaped.
    assert set(_tags(section)) <= {"h2", "h3", "p", "code", "strong", "table", "thead", "tbody", "tr", "th", "td"}
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in section
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in section
    assert "[click me](javascript:alert(1))" in section and "<a " not in section
    assert "first line\nsecond line" in section  # shown on two lines (white-space: pre-wrap)

    md = render(report, "md")
    part = md[md.index("## Comments and can't-judge reasons") :]
    part = part[: part.index("\n## ", 5)]
    assert "<script" not in part and "<img" not in part  # "<" is an entity: no tag can open
    assert r"\[click me\](javascript:alert(1)) and \!\[pixel\](http://tracker.example/p.png)" in part
    assert r"\*\*bold\*\* \_it\_ \`code\` \~\~gone\~\~ \$x\$ \&lt;" in part
    assert "first line ↵ second line" in part
    for line in part.splitlines():
        if line.startswith("|"):
            # Every row has the cells of its header: a "|" in a comment is escaped, not a new cell.
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            assert len(cells) in (4, 5), line
    assert markdown_text("a | b") == r"a \| b" and markdown_text(None) == "–"


def test_pairwise_comments_are_grouped_per_pair(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["alpha", "beta", "gamma"], scenarios=("qa",)))],
        write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=1)),
        name="p",
        open_now=True,
    )
    f = tmp_path / "p.csv"
    f.write_text(
        "reviewer,sample_id,model_a,model_b,dimension,winner,comment,cant_judge_reason\n"
        "ann,s0,beta,alpha,overall,a,beta is clearer,\n"
        "ann,s1,alpha,beta,overall,tie,,\n"
        "ann,s0,gamma,alpha,,,,gamma's output is empty\n"
        "bob,s1,gamma,beta,overall,b,,\n",
        encoding="utf-8",
    )
    import_ratings(engine, "p", f)
    report = _report(engine, "p")
    assert [(g.models, g.n_answers, g.n_cant_judge, g.n_commented) for g in report.comments] == [
        (("alpha", "beta"), 2, 0, 1),
        (("alpha", "gamma"), 1, 1, 0),
    ]
    assert report.comments[1].cant_judge[0].cant_judge_reason == "gamma's output is empty"
    assert "### qa · alpha vs gamma" in render(report, "md")
    assert "<h3>qa · alpha vs beta</h3>" in render(report, "html")


def test_a_report_without_comments_says_so(engine: Engine, tmp_path: Path) -> None:
    _rating_batch(engine, tmp_path)
    f = tmp_path / "r.csv"
    f.write_text("reviewer,sample_id,model,dimension,score\nann,s0,m1,correctness,4\nbob,s0,m1,correctness,2\n")
    import_ratings(engine, "b", f)
    report = _report(engine)
    assert report.comments == ()
    assert "No comments or can't-judge answers yet." in render(report, "md")
    assert "No comments or can&#x27;t-judge answers yet." in render(report, "html")
    assert json.loads(render(report, "json"))["comments"] == []


def test_a_new_cant_judge_answer_is_a_new_report_on_the_lead_page(engine: Engine, tmp_path: Path) -> None:
    """A can't-judge answer writes no rating; the page's cache must still see it."""
    batch_id = _rating_batch(engine, tmp_path)
    ann = add_reviewer(engine, "ann")[0]
    assign(engine, "b")
    view = next_item(engine, batch_id, ann.id)
    assert view is not None
    submit_review(engine, ann.id, view.assignment_id, {"correctness": "4", "follows_format": "1"})
    cache = ReportCache()
    assert cache.report(engine, batch_id, rounds=100).comments == ()
    view = next_item(engine, batch_id, ann.id)
    assert view is not None
    submit_review(engine, ann.id, view.assignment_id, {}, cant_judge="The output is in another language")
    report = cache.report(engine, batch_id, rounds=100)
    assert cache.builds == 2
    assert [r.cant_judge_reason for g in report.comments for r in g.cant_judge] == ["The output is in another language"]
    submit_review(engine, ann.id, view.assignment_id, {}, cant_judge="The prompt is missing")  # revised
    assert [r.cant_judge_reason for g in cache.report(engine, batch_id, rounds=100).comments for r in g.cant_judge] == [
        "The prompt is missing"
    ]
    assert cache.builds == 3

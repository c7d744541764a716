"""The report's "Comments and can't-judge reasons" section, in Markdown and HTML, and the words it uses.

Reviewers' texts are untrusted: a comment may hold markup, a Markdown link, a table's ``|`` or several lines.
HTML escapes every character that means something there; Markdown backslash-escapes what could make a link,
an image, emphasis, code, a table cell or math, writes ``<`` as an entity (no tag can open), and shows a line
break as " ↵ " (a table row is one line). Each list holds the latest answers only (``COMMENTS_SHOWN`` per
kind), and says how many more the ratings export has.
"""

from __future__ import annotations

import re
from html import escape

from reviewer_app.domain.report import Report
from reviewer_app.domain.report_panel import COMMENTS_SHOWN, CommentGroup, CommentRow

__all__ = ["EMPTY", "comments_html", "comments_markdown", "counts_line", "group_title", "intro", "list_heading", "when"]

TITLE = "Comments and can't-judge reasons"
EMPTY = "No comments or can't-judge answers yet."
EXPORT_HINT = "`blind-review export-ratings` (columns comment and cant_judge_reason)"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]!|~$&])")


def intro() -> str:
    """The sentence under the section's title: what the lists are and where the rest is."""
    return (
        "What reviewers wrote with their answers, per scenario and model. The counts are of every answer; each "
        f"list shows the {COMMENTS_SHOWN} most recent, newest first."
    )


def group_title(group: CommentGroup) -> str:
    """The group's heading: "qa · m1", pairwise "qa · alpha vs beta"."""
    return f"{group.scenario} · {' vs '.join(group.models)}"


def counts_line(group: CommentGroup) -> str:
    """The group's counts: "40 answers: 2 can't judge, 5 scored with a comment."."""
    return (
        f"{group.n_answers} answer{'' if group.n_answers == 1 else 's'}: {group.n_cant_judge} can't judge, "
        f"{group.n_commented} scored with a comment."
    )


def list_heading(kind: str, shown: int, total: int) -> str:
    """A list's heading: "Can't judge (2)", or "Comments (the 10 most recent of 14; 4 more in the export)"."""
    if shown >= total:
        return f"{kind} ({total})"
    return f"{kind} (the {shown} most recent of {total}; {total - shown} more in the export)"


def when(row: CommentRow) -> str:
    """The submit time to the minute, "2026-11-30 10:00" (UTC); "–" when not recorded."""
    return "–" if row.submitted_at is None else row.submitted_at[:16].replace("T", " ")


def markdown_text(text: str | None) -> str:
    """``text`` for a Markdown table cell, shown as written (see the module docstring); "–" for None."""
    if text is None:
        return "–"
    one_line = " ↵ ".join(text.splitlines())
    return _MD_SPECIAL.sub(r"\\\1", one_line).replace("<", "&lt;")


def _md_rows(rows: tuple[CommentRow, ...], reasons: bool) -> list[str]:
    headers = ["sample", "reviewer", "submitted (UTC)"] + (["reason"] if reasons else []) + ["comment"]
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        cells = [markdown_text(r.sample_id), markdown_text(r.reviewer), when(r)]
        cells += ([markdown_text(r.cant_judge_reason)] if reasons else []) + [markdown_text(r.comment)]
        out.append("| " + " | ".join(cells) + " |")
    return out


def comments_markdown(report: Report) -> list[str]:
    """The section as Markdown lines (a title, then per scenario and model the counts and both lists)."""
    out = [f"## {TITLE}", ""]
    if not report.comments:
        return out + [EMPTY, ""]
    out += [intro() + f" {EXPORT_HINT} has all of them.", ""]
    for g in report.comments:
        out += [f"### {markdown_text(group_title(g))}", "", counts_line(g), ""]
        for kind, rows, total, reasons in (
            ("Can't judge", g.cant_judge, g.n_cant_judge, True),
            ("Comments", g.commented, g.n_commented, False),
        ):
            if total:
                out += [list_heading(kind, len(rows), total) + ":", ""] + _md_rows(rows, reasons) + [""]
    return out


def _html_rows(rows: tuple[CommentRow, ...], reasons: bool) -> str:
    headers = ["sample", "reviewer", "submitted (UTC)"] + (["reason"] if reasons else []) + ["comment"]
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    text = '<td style="white-space:pre-wrap;overflow-wrap:anywhere">{}</td>'
    body = []
    for r in rows:
        cells = [f"<td>{escape(r.sample_id)}</td>", f"<td>{escape(r.reviewer)}</td>", f"<td>{escape(when(r))}</td>"]
        if reasons:
            cells.append(text.format(escape(r.cant_judge_reason or "–")))
        cells.append(text.format(escape(r.comment or "–")))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def comments_html(report: Report) -> list[str]:
    """The section as HTML fragments (see :func:`comments_markdown`)."""
    out = [f"<h2>{escape(TITLE)}</h2>"]
    if not report.comments:
        return out + [f'<p class="muted">{escape(EMPTY)}</p>']
    hint = "<code>blind-review export-ratings</code> (columns comment and cant_judge_reason)"
    out.append(f'<p class="muted">{escape(intro())} {hint} has all of them.</p>')
    for g in report.comments:
        out += [f"<h3>{escape(group_title(g))}</h3>", f"<p>{escape(counts_line(g))}</p>"]
        for kind, rows, total, reasons in (
            ("Can't judge", g.cant_judge, g.n_cant_judge, True),
            ("Comments", g.commented, g.n_commented, False),
        ):
            if total:
                out += [f"<p><strong>{escape(list_heading(kind, len(rows), total))}</strong></p>"]
                out.append(_html_rows(rows, reasons))
    return out

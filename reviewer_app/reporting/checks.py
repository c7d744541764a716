"""The automatic checks' part of a report, in words, Markdown and HTML (the results page draws the same rows).

A scenario's block says first, per check, which models pass it significantly less often than the best, then
the pass-rate table (best first within each check) and how passing goes with the panel's overall score.
Check names are the admin's words and model names come from batch files: every cell is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from reviewer_app.domain.report_rankings import ALL_CHECKS, CheckPanelRow, CheckRow, RankingRow
from reviewer_app.domain.words import join_names
from reviewer_app.reporting.compare import html_table, md_table
from reviewer_app.reporting.formats import fmt
from reviewer_app.reporting.html import ci_chart

__all__ = [
    "NOTE",
    "NO_DIFFERENCE",
    "PANEL_NOTE",
    "as_ranking_rows",
    "check_sentences",
    "checks_html",
    "checks_markdown",
]

NOTE = (
    "Automatic checks ran once at load on every output (reviewed or not); a pass rate is the share of a "
    "model's outputs in the scenario that pass, with a 95% cluster-bootstrap CI over samples; ranks and tiers "
    'come from the same pair tests as a rubric dimension. "all" means every check of the output passed.'
)
PANEL_NOTE = (
    "Correlation: Pearson's r between an output passing and its mean overall score from the reviewers "
    "(rated outputs only), with a 95% cluster-bootstrap CI over samples. Near 0: the panel does not care "
    "whether the check passes; positive: outputs that pass are the ones reviewers prefer."
)
NO_DIFFERENCE = "the models' pass rates do not differ significantly"
CHECK_HEADERS = ("check", "model", "pass rate", "95% CI", "outputs", "rank", "tier", "letters")
PANEL_HEADERS = ("check", "correlation with the overall score", "95% CI", "rated outputs", "note")


def _percent(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def check_sentences(rows: Sequence[CheckRow]) -> list[str]:
    """Per check, one sentence: every model passes it about equally, or who passes it less than the best."""
    out = []
    for name in dict.fromkeys(r.check for r in rows):
        part = [r for r in rows if r.check == name]
        label = "all checks" if name == ALL_CHECKS else f"check {name!r}"
        best = [r for r in part if r.tier == 1]
        behind = [r for r in part if r.tier > 1]
        rates = ", ".join(f"{r.model} {_percent(r.pass_rate)}" for r in part)
        head = label[0].upper() + label[1:]
        if not behind:
            out.append(f"{head}: {NO_DIFFERENCE} ({rates}).")
        else:
            verb = "passes" if len(behind) == 1 else "pass"
            out.append(
                f"{head}: {join_names([r.model for r in behind])} {verb} significantly less often than "
                f"{join_names([r.model for r in best])} ({rates})."
            )
    return out


def _check_cells(r: CheckRow) -> list[object]:
    return [r.check, r.model, r.pass_rate, f"{fmt(r.ci_low)} – {fmt(r.ci_high)}", r.n, r.rank, r.tier, r.letters]


def _panel_cells(r: CheckPanelRow) -> list[object]:
    return [r.check, r.correlation, f"{fmt(r.ci_low)} – {fmt(r.ci_high)}", r.n, r.note or ""]


def checks_markdown(rows: Sequence[CheckRow], panel: Sequence[CheckPanelRow]) -> list[str]:
    """The section's Markdown lines (none without checks)."""
    if not rows:
        return []
    out = ["#### Automatic checks", "", *[f"- {s}" for s in check_sentences(rows)], "", NOTE, ""]
    out += [md_table(CHECK_HEADERS, [_check_cells(r) for r in rows]), ""]
    if panel:
        out += [PANEL_NOTE, "", md_table(PANEL_HEADERS, [_panel_cells(r) for r in panel]), ""]
    return out


def as_ranking_rows(rows: Sequence[CheckRow]) -> list[RankingRow]:
    """Check rows as ranking rows, for the charts every ranking is drawn with."""
    return [
        RankingRow(
            model=r.model, dimension=f"check {r.check}", score=r.pass_rate, ci_low=r.ci_low, ci_high=r.ci_high,
            ci_mc_se=None, rank=r.rank, tier=r.tier, letters=r.letters, n=r.n, note=None,
        )
        for r in rows
    ]  # fmt: skip


def checks_html(scenario: str, rows: Sequence[CheckRow], panel: Sequence[CheckPanelRow]) -> list[str]:
    """The section's HTML: sentences, one pass-rate chart per check (0-100% axis), the tables."""
    if not rows:
        return []
    out = ["<h3>Automatic checks</h3>", "<ul>", *[f"<li>{escape(s)}</li>" for s in check_sentences(rows)], "</ul>"]
    for name in dict.fromkeys(r.check for r in rows):
        label = "all checks" if name == ALL_CHECKS else f"check {name}"
        part = as_ranking_rows([r for r in rows if r.check == name])
        out.append(ci_chart(part, f"{scenario}: {label} (pass rate)", True, (0.0, 1.0)))
    out += [f'<p class="muted">{escape(NOTE)}</p>', html_table(CHECK_HEADERS, [_check_cells(r) for r in rows])]
    if panel:
        out += [
            f'<p class="muted">{escape(PANEL_NOTE)}</p>',
            html_table(PANEL_HEADERS, [_panel_cells(r) for r in panel]),
        ]
    return out

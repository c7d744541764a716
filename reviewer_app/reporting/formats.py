"""Render a :class:`~reviewer_app.domain.report.Report` as JSON, CSV or Markdown (HTML: see ``html.py``).

Tables take their columns from the row types (``RankingRow.COLUMNS`` ...). Markdown and CSV show the
``brief`` columns only, and Markdown puts a CI in one "low – high" column.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any, TypeVar

from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.low_agreement import low_agreement_line
from reviewer_app.domain.report import Report, report_to_dict
from reviewer_app.domain.report_adjudication import (
    ADJUDICATION_NOTE,
    AdjudicatedItem,
    AdjudicationScenario,
    AdjudicationSection,
)
from reviewer_app.domain.report_anytime import ANYTIME_NOTE, AnytimePair, AnytimeScenario
from reviewer_app.domain.report_assisted import AssistedModelRow, JudgeSection
from reviewer_app.domain.report_fields import Column, shown_columns
from reviewer_app.domain.report_fragility import FRAGILITY_NOTE, FragilityRow
from reviewer_app.domain.report_judge_card import (
    VERDICT_RULE,
    VERDICT_WORDS,
    JudgeAgreementRow,
    JudgeBiasRow,
    JudgeCard,
    JudgeDimensionCard,
)
from reviewer_app.domain.report_panel import Beside, ReviewerRow, flag_lines
from reviewer_app.domain.report_rankings import (
    LETTERS_NOTE,
    STRENGTH_NOTE,
    TIES_NOTE,
    AgreementRow,
    PairRow,
    RankingRow,
    ReliabilityRow,
    ReviewerDesignRow,
    TieModelRow,
    TieRow,
    WeightSensitivityRow,
    both_bad_line,
)
from reviewer_app.domain.report_style import STYLE_NOTE, StyleRanking, StyleRow
from reviewer_app.domain.report_windows import WINDOWS_NOTE, AgreementTrend, AgreementWindow
from reviewer_app.reporting.comments import comments_markdown
from reviewer_app.reporting.markdown_safety import inert_markdown

__all__ = [
    "ASSISTED_NOTE",
    "CSV_COLUMNS",
    "DESIGN_NOTE",
    "FORMATS",
    "PAIRS_NOTE",
    "RELIABILITY_NOTE",
    "card_line",
    "fmt",
    "judge_heading",
    "position_line",
    "render",
    "render_with",
    "significant",
    "table_rows",
]

FORMATS = ("json", "csv", "md", "html")
T = TypeVar("T")


def _brief_fields(*tables: tuple[Column, ...]) -> list[str]:
    names: dict[str, None] = {}
    for columns in tables:
        names.update((c.name, None) for c in columns if c.brief_header is not None)
    return list(names)


# One long table: the ranking, agreement, reliability and pair rows side by side, under their field names.
CSV_COLUMNS = [
    "section",
    "scenario",
    *_brief_fields(RankingRow.COLUMNS, AgreementRow.COLUMNS, ReliabilityRow.COLUMNS, PairRow.COLUMNS),
]

PAIRS_NOTE = (
    "The 95% CI (unadjusted) is each pair's own interval, not adjusted for the many pairs: it may exclude 0 for "
    "a pair that is not separated. The Holm-adjusted CI is consistent with the decision: it excludes 0 exactly "
    "when the pair is separated ('–' where it is unbounded)."
)

RELIABILITY_NOTE = (
    "Alpha is agreement on single items; the reliability of the models' means (split-half, stepped up to "
    "the whole panel, 95% bootstrap CI) is whether the ranking would come out the same on other samples like these."
)

DESIGN_NOTE = (
    "Where each reviewer rated some models more than others, a lenient reviewer's models look better. These "
    "rankings use scores adjusted for each reviewer's leniency (a model + sample + reviewer fit), with "
    "intervals and tests that count the uncertainty of the leniencies; pairs listed as confounded share no "
    "reviewers, even through others, and are never separated."
)


def load_schema() -> dict[str, Any]:
    """The JSON schema of the report (shipped as package data next to this module)."""
    text = resources.files("reviewer_app.reporting").joinpath("schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def to_json(report: Report) -> str:
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(report: Report) -> str:
    """One long table (:func:`table_rows`), every cell a spreadsheet would run as a formula made inert."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows([neutralise_cell(c) for c in row] for row in table_rows(report))
    return buf.getvalue()


def table_rows(report: Report) -> Iterator[list[Any]]:
    """The rows of the report's one long table, values as they are (:data:`CSV_COLUMNS`): ranking, agreement,
    reliability and pair rows, per scenario and for "(overall)"/"(composite)". The CSV and the Parquet table
    (``report_parquet``) are this table."""

    def rows_of(section: str, scenario: str, rows: Iterable[object]) -> Iterator[list[Any]]:
        for row in rows:
            given = {"section": section, "scenario": scenario}
            yield [given[c] if c in given else getattr(row, c, None) for c in CSV_COLUMNS]

    blocks = [(s.scenario, s) for s in report.scenarios] + [("(overall)", report.overall)]
    for name, block in blocks:
        yield from rows_of("ranking", name, block.ranking)
        yield from rows_of("agreement", name, block.agreement)
        yield from rows_of("reliability", name, block.reliability)
        yield from rows_of("pairs", name, block.pairs)
    yield from rows_of("composite", "(composite)", report.overall.composite.ranking)
    yield from rows_of("pairs", "(composite)", report.overall.composite.pairs)


def decimals(x: float) -> int:
    """How many decimals show ``x`` to 2-3 significant digits, as people read results: three from 1 up (3.51,
    12.3, 123; larger numbers whole), two below (0.63, 0.050, 0.0042), so a small number never shows as 0."""
    size = abs(x)
    if size == 0 or not math.isfinite(size):
        return 2
    exponent = math.floor(math.log10(size))
    return max(0, 2 - exponent) if size >= 1 else max(2, 1 - exponent)


def significant(x: float) -> float:
    """``x`` rounded as :func:`fmt` shows it (for tables that keep numbers as numbers, e.g. to sort)."""
    return round(x, decimals(x))


def fmt(x: Any, digits: int | None = None) -> str:
    """A table cell as text: "–" for a missing value; floats to ``digits`` decimals, by default to 2-3
    significant digits (:func:`decimals`)."""
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{decimals(x) if digits is None else digits}f}"
    return str(x)


def position_line(beside: Beside) -> str | None:
    """The position bias (pairwise) or drift (rating) sentence, or what was not recorded."""
    p, e = beside.position_bias, beside.position_effect
    left_out = ""
    if p is not None:
        if p.note is not None:
            return f"Position bias: {p.note}."
        if p.n_not_recorded:
            left_out = f" ({p.n_not_recorded} imported answers left out: side not recorded)"
        return (
            f"Position bias: the left side won {fmt(p.left_win_rate)} of {p.n} decisive answers "
            f"(95% CI {fmt(p.ci_low)} – {fmt(p.ci_high)}; 0.50 means no bias){left_out}."
        )
    if e is not None:
        if e.note is not None:
            return f"Score versus queue position: {e.note}."
        if e.n_not_recorded:
            left_out = f" ({e.n_not_recorded} imported ratings left out: position not recorded)"
        return (
            f"Score versus queue position: slope {fmt(e.slope_per_100, 3)} (0-1 scale) per 100 positions "
            f"(95% CI {fmt(e.ci_low, 3)} – {fmt(e.ci_high, 3)}; 0 means no drift){left_out}."
        )
    return None


def _md_table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(c).replace("|", "\\|") for c in r) + " |" for r in rows]  # a name may hold "|"
    return "\n".join(lines)


def _ci_cell(row: Any) -> str:
    return f"{fmt(row.ci_low)} – {fmt(row.ci_high)}"


def _holm_cell(row: Any) -> str:
    return f"{fmt(row.holm_ci_low)} – {fmt(row.holm_ci_high)}"


ASSISTED_NOTE = (
    "Judge-assisted: the judge rated every output, the panel a part of them; each model's score is the judge's "
    "mean corrected by the judge's error measured where the panel rated (prediction-powered inference, PPI++: "
    "Angelopoulos et al. 2023), so its interval is valid however biased the judge is, and narrower than the "
    "panel's alone when the judge tracks the panel. Same tests, Holm correction and letters as the panel's "
    "ranking, which it stands beside and never replaces."
)


def judge_heading(section: JudgeSection) -> str:
    """The section's first line: which judge, and how much of the batch it rated."""
    run = section.run
    failed = f", {run.failed} failed" if run.failed else ""
    return (
        f"{run.judge} (model {run.model}): {run.judgements} judgements{failed}; "
        f"{run.items_judged} of {run.items} items rated"
    )


def card_line(card: JudgeCard) -> str:
    """A scenario's verdict on the judge, with its reasons, in one line."""
    return f"{card.scenario}: {VERDICT_WORDS[card.verdict]}. " + " ".join(card.reasons)


def _judge_md(section: JudgeSection) -> list[str]:
    out = ["## Judge vs panel", "", judge_heading(section), ""] + [f"- {n}" for n in section.notes]
    out += [""] if section.notes else []
    if section.cards:
        out += ["### The judge's report card", "", VERDICT_RULE, ""]
    for card in section.cards:
        out += [f"#### {card.scenario}: {VERDICT_WORDS[card.verdict]}", ""] + [f"- {r}" for r in card.reasons]
        out += ["", _md_rows(JudgeAgreementRow.COLUMNS, card.agreement), ""]
        if card.bias:
            out += [_md_rows(JudgeBiasRow.COLUMNS, card.bias), ""]
        if card.measures:
            out += [_md_rows(JudgeDimensionCard.COLUMNS, card.measures), ""]
    if section.assisted:
        out += ["### Judge-assisted rankings", "", ASSISTED_NOTE, ""]
    for a in section.assisted:
        ratio = "" if a.width_ratio is None else f" Intervals {a.width_ratio:.2f}x the panel's alone."
        out += [f"#### {a.scenario} ({a.dimension})", "", f"- {a.summary}{ratio}", ""]
        out += [_md_rows(RankingRow.COLUMNS, a.ranking), "", _md_rows(AssistedModelRow.COLUMNS, a.models), ""]
    return out + [""]


def _anytime_md(rows: Sequence[AnytimeScenario]) -> list[str]:
    out = ["## Anytime-valid verdicts", "", ANYTIME_NOTE, ""]
    for row in rows:
        out += [f"- {row.sentence}"]
    pairs = [p for row in rows for p in row.pairs]
    if pairs:
        out += ["", _md_rows(AnytimePair.COLUMNS, pairs)]
    return [*out, ""]


def _fragility_md(rows: Sequence[FragilityRow]) -> list[str]:
    out = ["## How fragile the verdicts are", "", FRAGILITY_NOTE, ""]
    out += [f"- {r.sentence}" for r in rows]  # a fragile one says so itself
    return [*out, "", _md_rows(FragilityRow.COLUMNS, rows), ""]


def _adjudication_md(section: AdjudicationSection) -> list[str]:
    out = ["## Adjudication", "", f"- {section.summary}", f"- Disputed when: {section.rule}.", "", ADJUDICATION_NOTE]
    out += ["", _md_rows(AdjudicationScenario.COLUMNS, section.scenarios), ""]
    if section.items:
        out += ["Adjudicated items:", "", _md_rows(AdjudicatedItem.COLUMNS, section.items), ""]
    return out


def _trends_md(trends: Sequence[AgreementTrend]) -> list[str]:
    out = ["## Agreement over time", "", WINDOWS_NOTE, ""]
    for trend in trends:
        flag = "**Flagged.** " if trend.flagged else ""
        out += [
            f"### {trend.scenario}",
            "",
            f"- {flag}{trend.sentence}",
            "",
            _md_rows(AgreementWindow.COLUMNS, trend.windows),
            "",
        ]
    return out


def _style_md(rankings: Sequence[StyleRanking]) -> list[str]:
    out = ["## Style control", "", STYLE_NOTE, ""]
    for ranked in rankings:
        title = ranked.scenario if ranked.dimension == "overall" else f"{ranked.scenario} ({ranked.dimension})"
        out += [f"### {title}", "", f"- {ranked.sentence}"]
        if ranked.left_out:
            out += [f"- Not controlled (no variation to learn from): {', '.join(ranked.left_out)}."]
        out += ["", _md_rows(StyleRow.COLUMNS, ranked.rows), ""]
        out += [f"- {c.sentence}" for c in ranked.coefficients] + [""]
    return out


def _pairs_md(pairs: Sequence[PairRow]) -> list[str]:
    if not pairs:
        return []
    return ["Pairs (Holm-adjusted p; separated at 5% family-wise):", "", _md_rows(PairRow.COLUMNS, pairs), "",
            PAIRS_NOTE, ""]  # fmt: skip


def _md_rows(columns: tuple[Column, ...], rows: Sequence[object]) -> str:
    """A Markdown table of the brief columns; a ``ci_low`` / ``ci_high`` pair becomes one "95% CI" column."""
    shown: list[tuple[str, Callable[[Any], object]]] = []
    for c in shown_columns(columns, rows):
        header = c.brief_header
        if header is None or c.name in ("ci_high", "holm_ci_high"):
            continue
        if c.name == "ci_low":  # a pair's interval says it is unadjusted
            shown.append(("95% CI" + (" (unadjusted)" if "unadjusted" in header else ""), _ci_cell))
        elif c.name == "holm_ci_low":
            shown.append(("Holm-adjusted CI", _holm_cell))
        else:
            shown.append((header, c.cell))
    return _md_table([h for h, _ in shown], [[cell(r) for _, cell in shown] for r in rows])


def _reliability_md(rows: Sequence[ReliabilityRow]) -> list[str]:
    if not rows:
        return []
    return ["Reliability of the models' means:", "", _md_rows(ReliabilityRow.COLUMNS, rows), "", RELIABILITY_NOTE, ""]


def _design_md(rows: Sequence[ReviewerDesignRow] | None) -> list[str]:
    if not rows:
        return []
    return [
        "Reviewers did not rate the models evenly:",
        "",
        _md_rows(ReviewerDesignRow.COLUMNS, rows),
        "",
        DESIGN_NOTE,
        "",
    ]


def _range(value: float | None, low: float | None, high: float | None, *, share: bool = False) -> str:
    """A value with its interval in one cell: "18% (12%-24%)", "0.52 (0.31-0.70)"; an open end is "?"."""

    def one(x: float | None) -> str:
        if x is None:
            return "?"
        return f"{x:.0%}" if share else fmt(x)

    if value is None:
        return ""
    return f"{one(value)} ({one(low)} – {one(high)})"


def ties_markdown(rows: Sequence[TieRow] | None, models: Sequence[TieModelRow] | None) -> list[str]:
    """Pairwise: each model's tie and both-bad rates and Davidson strength, the tie model per ranking, and the
    both-bad rates of the "overall" ranking in words."""
    if not rows:
        return []
    table = _md_table(
        ["dimension", "model", "comparisons", "no winner (95% CI)", "both bad (95% CI)", "Davidson strength (95% CI)"],
        [
            [
                r.dimension,
                r.model,
                r.n,
                _range(r.tie_rate, r.tie_ci_low, r.tie_ci_high, share=True),
                _range(r.both_bad_rate, r.both_bad_ci_low, r.both_bad_ci_high, share=True),
                _range(r.davidson, r.davidson_ci_low, r.davidson_ci_high),
            ]
            for r in rows
        ],
    )
    lines = [line for r in rows if r.dimension == "overall" for line in [both_bad_line(r)] if line]
    out = ["Ties and both bad:", "", *[f"- {line}" for line in lines], *([""] if lines else []), table, ""]
    if models:
        out += [_md_rows(TieModelRow.COLUMNS, models), ""]
    return out + [TIES_NOTE, ""]


def to_markdown(report: Report) -> str:
    from reviewer_app.reporting.benchmarks import benchmarks_markdown  # it reads fmt from here
    from reviewer_app.reporting.checks import checks_markdown  # as benchmarks

    m = report.methods
    out = [
        f"# Blind Review report: {report.batch}",
        "",
        f"Generated {report.generated_at} · {report.mode} mode · seed {m.seed} · {m.bootstrap_rounds} bootstrap rounds",
        "",
    ]
    headline = low_agreement_line(report.overall.agreement, report.overall.reliability, headline=True)  # first
    out += [f"⚠ {headline}", ""] if headline else []
    comp = report.overall.composite
    out += [
        "## Composite",
        "",
        comp.summary,
        "",
        _md_rows(RankingRow.COLUMNS, comp.ranking),
        "",
        LETTERS_NOTE,
        "",
    ]
    out += [STRENGTH_NOTE, ""] if report.mode == Mode.PAIRWISE else []
    out += [
        "Weights: " + ", ".join(f"{k} {v:g}" for k, v in comp.weights.items()),
        "",
    ]
    out += [f"- {n}" for n in comp.notes] + ([""] if comp.notes else [])
    ws = report.overall.weight_sensitivity
    if ws.models:
        out += [
            f"Weight sensitivity over {ws.draws} random weightings of the scenarios, the weights apart from the "
            "panel's noise:",
            "",
            *[f"- {line}" for line in ws.summary],
            "",
            _md_rows(WeightSensitivityRow.COLUMNS, ws.models),
            "",
        ]
    elif ws.note:
        out += [f"Weight sensitivity: {ws.note}", ""]
    out += _pairs_md(comp.pairs)
    for block in report.scenarios:
        out += [f"## {block.scenario} ({block.n_samples} samples)", ""]
        out += [f"- ⚠ {w}" for w in block.warnings]  # cautions first, then the ranking sentences
        out += [f"- {line}" for line in block.summary.values()]
        out += ["", _md_rows(RankingRow.COLUMNS, block.ranking), ""] + _pairs_md(block.pairs)
        out += benchmarks_markdown(block.benchmarks, block.scenario)
        out += checks_markdown(block.checks or (), block.checks_vs_panel or ()) + ["Agreement:", ""]
        out += (
            [_md_rows(AgreementRow.COLUMNS, block.agreement), ""]
            + _reliability_md(block.reliability)
            + _design_md(block.reviewer_design)
            + ties_markdown(block.ties, block.tie_model)
        )
    ov = report.overall
    out += ["## All scenarios", ""] + [f"- ⚠ {w}" for w in ov.warnings]
    out += [f"- {line}" for line in ov.summary.values()]
    out += ["", _md_rows(RankingRow.COLUMNS, ov.ranking), ""] + _pairs_md(ov.pairs)
    out += benchmarks_markdown(ov.benchmarks, None)
    out += (
        [_md_rows(AgreementRow.COLUMNS, ov.agreement), ""]
        + _reliability_md(ov.reliability)
        + _design_md(ov.reviewer_design)
        + ties_markdown(ov.ties, ov.tie_model)
    )
    if report.production is not None:
        from reviewer_app.reporting.monitor import production_markdown  # as benchmarks

        out += [production_markdown(report.production)]
    if report.anytime:
        out += _anytime_md(report.anytime)
    if report.style:
        out += _style_md(report.style)
    if report.fragility:
        out += _fragility_md(report.fragility)
    if report.agreement_trends:
        out += _trends_md(report.agreement_trends)
    if report.adjudication is not None:
        out += _adjudication_md(report.adjudication)
    if report.judge is not None:
        out += _judge_md(report.judge)
    out += comments_markdown(report)
    line = position_line(report.beside)
    if line:
        out += ["## Beside quality", "", line, ""]
    if report.reviewers:
        out += ["## Reviewers", "", _md_rows(ReviewerRow.COLUMNS, report.reviewers), ""]
        flags = flag_lines(report.reviewers)
        out += ["Flagged:", "", *(f"- {name}: {reasons}" for name, reasons in flags), ""] if flags else []
    out += ["## Methods", "", f"- Multiple comparisons: {m.multiple_comparisons}."]
    if m.max_ci_mc_se is not None:
        out.append(f"- Largest Monte Carlo error of an interval end: {fmt(m.max_ci_mc_se, 4)} (standard error).")
    out += [f"- {d}" for d in m.definitions] + [""]
    # Names come from batch files and people (a model called "<img src=…>" or "![m](http://…)"): the report
    # is read in Markdown viewers that render HTML and images, so none may open a tag, a link or an image.
    return inert_markdown("\n".join(out))


def render_with(renderers: Mapping[str, Callable[[T], str]], value: T, fmt_name: str) -> str:
    """``value`` by the renderer of ``fmt_name`` (one per name of :data:`FORMATS`: the report, a comparison, a
    history and the monitor share the names and this check); raises ValueError for another format name."""
    if fmt_name not in renderers:
        raise ValueError(f"unknown format {fmt_name!r}; use one of {', '.join(FORMATS)}")
    return renderers[fmt_name](value)


def render(report: Report, fmt_name: str) -> str:
    """The report in one of :data:`FORMATS`; raises ValueError for another format name."""

    def html(r: Report) -> str:
        from reviewer_app.reporting.html import to_html  # it imports this module

        return to_html(r)

    return render_with({"json": to_json, "csv": to_csv, "md": to_markdown, "html": html}, report, fmt_name)

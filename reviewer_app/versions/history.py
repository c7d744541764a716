"""A model's history over follow-up rounds: per batch and scenario its score with the 95% CI, and per link of
a follow-up chain the regression verdict.

Which batches: every batch (not archived) with outputs of the model's own, under its name or one of the
``also`` names a renamed version had before (``history NEW --also OLD``), in load order. In a batch holding
outputs under several of those names, the first in the order given (the model, then ``also``) is the one
followed. A *link* joins a follow-up batch to its direct baseline (``batch.baseline_batch_id``) when both are
in the history: the chain is a tree in general (a baseline may have several follow-ups), so every point has
at most one link, to the batch it was loaded as a follow-up of. A batch whose baseline lacks the model (or is
archived) starts a chain of its own; no verdict is taken against a grandparent, since a follow-up's anchors
measure the panel against its direct baseline only.

Scores come from each batch's own report (``batch_reports.batch_report``; the page passes its report cache),
so a point is exactly what that batch's results page shows: anchors never count, scores are over all the
batch's ratings. Verdicts come from ``compare_batches`` between the link's two batches, decided on its
seed-free interval (so the bootstrap rounds used there, kept low for speed, cannot change one); ``change`` is
the corrected paired difference over the samples both rounds rated, which is why it need not equal the
difference of the two points' scores. No SQL here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.analysis.report import DEFAULT_ROUNDS
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report import Report
from reviewer_app.domain.versions import HistoryBatch, HistoryPoint, ModelHistory
from reviewer_app.errors import BlindReviewError, NotFoundError, ReportError, ValidationError
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.versions.batch_compare import compare_batches
from storage.engine import read_session
from storage.repositories.versions import batches_with_models, models_with_outputs

__all__ = [
    "COMPARE_ROUNDS",
    "PAIRWISE_NOTE",
    "PANEL_NOTE",
    "ReportFor",
    "history_models",
    "model_history",
    "write_history",
]

# Verdicts are decided on compare's seed-free interval, which does not depend on the bootstrap rounds: the
# fewest compare accepts keeps a long history quick.
COMPARE_ROUNDS = 100
PAIRWISE_NOTE = (
    "Pairwise scores are Bradley-Terry strengths within each batch, relative to that batch's other models: "
    "read them across batches only where the opponents stayed the same. Verdicts compare win rates against "
    "the common opponents."
)
CHANGE_NOTE = (
    "A verdict compares a follow-up with the batch it was loaded as a follow-up of, on the samples both rated "
    "and corrected for the panel's shift on anchors; 'change' is that corrected difference with its seed-free "
    "95% interval, so it need not equal the difference of the two scores shown."
)

PANEL_NOTE = (
    "A score is this panel's: another group of reviewers, more or less lenient, would give other scores. Rounds "
    "rated by different reviewers, or a score held against a threshold, are compared by the 'new panel' "
    "interval, which adds the reviewers' variance (the chart's whiskers where there is one)."
)

ReportFor = Callable[[int], Report]


def history_models(engine: Engine) -> list[str]:
    """The models a history can be asked for: those with outputs in a batch that is not archived, sorted."""
    with read_session(engine) as session:
        return models_with_outputs(session)


def model_history(
    engine: Engine,
    model: str,
    *,
    also: Sequence[str] = (),
    rounds: int = DEFAULT_ROUNDS,
    report_for: ReportFor | None = None,
) -> ModelHistory:
    """The history of ``model`` (see the module docstring). ``also``: names a renamed version had before.
    ``report_for`` gives a batch's report by id (the page passes its cache); by default each report is built
    with ``rounds`` bootstrap rounds.

    Raises NotFoundError when no batch has outputs of ``model`` (or of a name in ``also``), listing the
    models there are; ReportError when the model has no ratings yet in any of its batches (the message
    lists them) or ``rounds`` is below 100."""
    if rounds < 100:
        raise ReportError(f"--rounds {rounds} is too few for a 95% interval; use at least 100 (default 1000)")
    names = list(dict.fromkeys([model.strip(), *(a.strip() for a in also)]))
    if not names[0]:
        raise NotFoundError("give a model's name; `blind-review list-batches` shows the models of each batch")
    with read_session(engine) as session:
        found = batches_with_models(session, names)
        known = models_with_outputs(session)
    missing = [n for n in names if not any(n in has for _b, has in found)]
    if missing:
        raise NotFoundError(
            f"no batch has outputs of {' or '.join(repr(n) for n in missing)}; models with outputs: "
            f"{', '.join(known) or 'none (load a batch first)'}"
        )
    get_report = report_for or (lambda batch_id: batch_report(engine, batch_id=batch_id, rounds=rounds))
    ids = {int(b.id or 0): b.name for b, _ in found}
    batches: list[HistoryBatch] = []
    points: list[HistoryPoint] = []
    for row, has in found:
        batch_id = int(row.id or 0)
        name_here = next(n for n in names if n in has)
        notes: list[str] = []
        if len(has) > 1:
            notes.append(f"outputs under {', '.join(has)}: {name_here!r} is followed here")
        own, rated = _points(get_report, batch_id, row.name, row.created_at, name_here, notes)
        baseline = ids.get(row.baseline_batch_id) if row.baseline_batch_id is not None else None
        if row.baseline_batch_id is not None and baseline is None:
            notes.append("its baseline batch has no outputs of this model (or is archived): no verdict")
        if baseline is not None and rated:
            before = next(b for b in batches if b.name == baseline)
            own = _with_verdicts(engine, own, before, name_here, notes)
        batches.append(
            HistoryBatch(
                name=row.name,
                batch_id=batch_id,
                loaded_at=row.created_at,
                mode=str(row.mode),
                follow_up_of=_baseline_name(row.baseline_batch_id, ids, engine),
                linked=baseline is not None,
                model=name_here,
                rated=rated,
                notes=tuple(notes),
            )
        )
        points += own
    if not any(b.rated for b in batches):
        listed = ", ".join(f"{b.name} ({b.model})" for b in batches)
        raise ReportError(
            f"model {model!r} has no ratings yet in any batch; its batches: {listed}. A history needs reviews: "
            "`blind-review assign` and open the batch, or `import-ratings`"
        )
    notes = [CHANGE_NOTE]
    if any(p.panel_ci_low is not None for p in points):
        notes.append(PANEL_NOTE)
    if any(b.mode == Mode.PAIRWISE for b in batches):
        notes.append(PAIRWISE_NOTE)
    return ModelHistory(
        model=names[0], also=tuple(names[1:]), batches=tuple(batches), points=tuple(points), notes=tuple(notes)
    )


def _points(
    get_report: ReportFor, batch_id: int, batch: str, loaded_at: datetime, model: str, notes: list[str]
) -> tuple[list[HistoryPoint], bool]:
    """The model's scenario ranking rows in the batch's report as points; ([], False) with a note when the
    batch has no ratings (of the model) yet."""
    try:
        report = get_report(batch_id)
    except ReportError as exc:
        notes.append(str(exc))
        return [], False
    points = [
        HistoryPoint(
            batch=batch,
            loaded_at=loaded_at,
            model=model,
            scenario=s.scenario,
            dimension=r.dimension,
            score=r.score,
            ci_low=r.ci_low,
            ci_high=r.ci_high,
            n=r.n,
            panel_ci_low=r.panel_ci_low,
            panel_ci_high=r.panel_ci_high,
        )
        for s in report.scenarios
        for r in s.ranking
        if r.model == model
    ]
    if not points:
        notes.append(f"no ratings of {model!r} yet in this batch")
    return points, bool(points)


def _with_verdicts(
    engine: Engine, points: list[HistoryPoint], before: HistoryBatch, model: str, notes: list[str]
) -> list[HistoryPoint]:
    """``points`` with the verdicts of ``compare_batches(before, this batch)`` for the model."""
    if not before.rated:
        notes.append(f"no verdict: {before.name!r} has no ratings of {before.model!r}")
        return points
    batch = points[0].batch
    match = {before.model: model} if before.model != model else {}
    try:
        result = compare_batches(engine, before.name, batch, match=match, rounds=COMPARE_ROUNDS)
    except ValidationError as exc:
        notes.append(f"no verdict against {before.name!r}: {exc.worded(lambda f: f)}")
        return points
    except BlindReviewError as exc:  # batches that cannot be compared: say why, keep the scores
        notes.append(f"no verdict against {before.name!r}: {exc}")
        return points
    rows = {(r.scenario, r.dimension): r for r in result.comparison.rows if r.model == model}
    out = []
    for p in points:
        r = rows.get((p.scenario, p.dimension))
        if r is None:
            out.append(p)
            continue
        out.append(
            HistoryPoint(
                **{
                    **asdict(p),
                    "verdict": r.verdict,
                    "against": before.name,
                    "against_model": r.baseline_model,
                    "change": r.corrected,
                    "change_low": r.decision_low,
                    "change_high": r.decision_high,
                }
            )
        )
    return out


def _baseline_name(baseline_id: int | None, known: dict[int, str], engine: Engine) -> str | None:
    if baseline_id is None:
        return None
    if baseline_id in known:
        return known[baseline_id]
    from storage.repositories.batches.batches import batch_names

    with read_session(engine) as session:
        return batch_names(session, [baseline_id]).get(baseline_id)


def write_history(history: ModelHistory, fmt: str, out: Path) -> Path:
    """Render ``history`` as ``fmt`` (json, csv, md, html) into ``out``; raises ReportError if it can't."""
    from reviewer_app.batches.output_files import write_rendered
    from reviewer_app.reporting.history import FORMATS, render_history

    return write_rendered(lambda: render_history(history, fmt), fmt, FORMATS, out)

"""Reports for leads: read a batch's frames and rubric through storage, compute, render, write.

No SQL here: only ``storage.repositories`` functions. The statistics live in ``reviewer_app.analysis``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.analysis.prepare import counts_for_score
from reviewer_app.analysis.report import DEFAULT_ROUNDS, build_report
from reviewer_app.batches.catalog import batch_rubric, no_such_batch
from reviewer_app.batches.output_files import write_rendered
from reviewer_app.domain.benchmarks import BenchmarkScores
from reviewer_app.domain.report import Report
from reviewer_app.domain.report_assisted import JudgeRun
from reviewer_app.domain.report_panel import COMMENTS_SHOWN
from reviewer_app.errors import NotFoundError, ReportError
from reviewer_app.judge.names import judge_label
from reviewer_app.production.feedback import panel_and_production
from reviewer_app.reporting.formats import FORMATS, render
from storage.engine import read_session
from storage.gc_pause import cycle_collection_paused
from storage.repositories.adjudication import rulings_frame
from storage.repositories.batches.batches import get_batch, get_batch_by_name
from storage.repositories.judge.runs import judge_items, judges_of_batch
from storage.repositories.results.comments import answer_counts_frame, comments_frame
from storage.repositories.results.completions import sample_completions
from storage.repositories.results.frames import judge_frame, ratings_frame
from storage.repositories.results.outputs import checks_frame, outputs_frame


def parse_weights(text: str | None) -> dict[str, float] | None:
    """``"extraction=2,summary=1"`` -> ``{"extraction": 2.0, "summary": 1.0}``; raises ReportError."""
    if not text:
        return None
    weights: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            w = float(value)
        except ValueError:
            w = -1.0
        if not sep or not name.strip() or w < 0:
            raise ReportError(
                f"--weights: {part!r} is not SCENARIO=WEIGHT with a weight >= 0, e.g. --weights extraction=2,summary=1"
            )
        weights[name.strip()] = w
    return weights


def batch_report(
    engine: Engine,
    *,
    batch: str | None = None,
    batch_id: int | None = None,
    rounds: int = DEFAULT_ROUNDS,
    weights: dict[str, float] | None = None,
    seed: int | None = None,
    benchmarks: BenchmarkScores | None = None,
    judge: str | None = None,
    adjudicated: bool = False,
) -> Report:
    """The report for a batch named ``batch`` (or with id ``batch_id``).

    The bootstrap seed is the batch's seed unless ``seed`` is given; ``benchmarks`` (see
    ``services.benchmark_scores``) puts public benchmark scores beside the rankings. Its "Judge vs panel"
    section is about the LLM judge that rated the batch last, or ``judge`` (its model name or its full name,
    ``judge:MODEL@TEMPLATE``). Its adjudication section lists the rulings on disputed items; ``adjudicated``
    ranks with them (stated in the report) instead of the panel as it answered. Raises NotFoundError for an
    unknown batch or judge, ReportError when it has no ratings yet or ``weights`` names a scenario it does not
    have.
    """
    with cycle_collection_paused():  # the frames are millions of fresh objects: see services.gc_pause
        return _batch_report(engine, batch, batch_id, rounds, weights, seed, benchmarks, judge, adjudicated)


def _judge_frames(session: Session, batch_id: int, wanted: str | None) -> tuple[pd.DataFrame | None, JudgeRun | None]:
    """The judge's ratings frame and run for the report (None, None: no judge rated the batch)."""
    judges = [(j, ok, failed) for j, ok, failed in judges_of_batch(session, batch_id) if ok]
    if wanted is not None:
        named = [t for t in judges if wanted in (t[0].name, judge_label(t[0].name, t[0].template_digest))]
        if not named:
            known = ", ".join(judge_label(j.name, j.template_digest) for j, _, _ in judges) or "none"
            raise NotFoundError(f"no judge {wanted!r} rated this batch (judges that did: {known})")
        judges = named
    if not judges:
        return None, None
    chosen, ok, failed = judges[-1]
    assert chosen.id is not None
    label = judge_label(chosen.name, chosen.template_digest)
    frame = judge_frame(session, batch_id, chosen.id, label, python_strings=True)
    items = len(judge_items(session, batch_id))
    run = JudgeRun(
        judge=label,
        model=chosen.api_model,
        template=chosen.template_digest,
        judgements=ok,
        failed=failed,
        items_judged=int(frame["item_id"].nunique()),
        items=items,
    )
    return frame, run


def _batch_report(
    engine: Engine,
    batch: str | None,
    batch_id: int | None,
    rounds: int,
    weights: dict[str, float] | None,
    seed: int | None,
    benchmarks: BenchmarkScores | None,
    judge: str | None = None,
    adjudicated: bool = False,
) -> Report:
    with read_session(engine) as session:
        row = get_batch_by_name(session, batch) if batch is not None else get_batch(session, int(batch_id or 0))
        if row is None and batch is not None:
            raise no_such_batch(session, batch)
        if row is None:
            raise NotFoundError(f"no batch with id {batch_id}; `blind-review list-batches` shows the batches there are")
        assert row.id is not None
        ratings = ratings_frame(session, row.id, python_strings=True)
        outputs = outputs_frame(session, row.id)
        comments = comments_frame(session, row.id, latest=COMMENTS_SHOWN)
        answer_counts = answer_counts_frame(session, row.id)
        checks = checks_frame(session, row.id)
        rulings = rulings_frame(session, row.id)
        judged, judge_run = _judge_frames(session, row.id, judge)
        rubric = batch_rubric(row)
        completions = [key for key, _at in sample_completions(session, row.id, rubric.overlap)]
        name, batch_seed = row.name, row.seed
    if ratings.empty or not counts_for_score(ratings, anchors=False).any():
        raise ReportError(f"batch {name!r} has no ratings yet; a report needs at least one submitted rating")
    if weights:
        unknown = sorted(set(weights) - set(ratings["scenario"]))
        if unknown:
            raise ReportError(
                f"--weights names scenario(s) {', '.join(unknown)} that batch {name!r} does not have "
                f"(it has {', '.join(sorted(set(ratings['scenario'])))})"
            )
    if rounds < 100:
        raise ReportError(f"--rounds {rounds} is too few for a 95% interval; use at least 100 (default 1000)")
    report = build_report(
        ratings,
        outputs,
        rubric,
        batch=name,
        seed=batch_seed if seed is None else seed,
        rounds=rounds,
        weights=weights,
        comments=comments,
        answer_counts=answer_counts,
        benchmarks=benchmarks,
        checks=checks,
        judge=judged,
        judge_run=judge_run,
        completions=completions,
        rulings=rulings,
        use_rulings=adjudicated,
    )
    production = panel_and_production(engine, report)
    return replace(report, production=production) if production.models else report


def write_report(report: Report, fmt: str, out: Path) -> Path:
    """Render ``report`` as ``fmt`` (json, csv, md, html; or parquet, the CSV's table typed) into ``out``;
    raises ReportError if it can't."""
    if fmt != "parquet":
        return write_rendered(lambda: render(report, fmt), fmt, FORMATS, out)
    from reviewer_app.reporting.report_parquet import to_parquet  # pyarrow, for this format only

    data = to_parquet(report)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except OSError as exc:
        raise ReportError(f"cannot write {out} ({exc.strerror}); check the path and permissions") from exc
    return out

"""Production feedback: ``import-feedback`` (a JSONL or CSV file of events into the database) and ``monitor``.

The file's rules, and how its rows are read and checked, are ``feedback_file``'s. The import is atomic: every
row is checked, rows go in as driver-level executemany in chunks inside one transaction with ``ON CONFLICT DO
NOTHING`` on the event key, and if any problem was found the transaction is rolled back and nothing is
written. Problems are collected (up to :data:`MAX_PROBLEMS`) so one run shows what to fix.

The monitor and the panel-versus-production comparison read the stored feedback here and hand it to their
pure functions (``monitor.build_monitor``, ``panel.panel_vs_production``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reviewer_app.domain.production import THUMBS, MonitorResult, PanelProduction, scale_label
from reviewer_app.errors import FeedbackImportError, NotFoundError, Problem, ReportError, ValidationError
from reviewer_app.production.feedback_file import Checker, Progress, csv_chunks, format_of, jsonl_chunks
from reviewer_app.production.monitoring import build_monitor
from reviewer_app.production.panel import panel_vs_production
from reviewer_app.reporting.monitor import change_sentence
from reviewer_app.webhooks import emit
from storage.engine import read_session, write_session
from storage.gc_pause import cycle_collection_paused
from storage.repositories import production as repo

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from reviewer_app.domain.report import Report

MAX_PROBLEMS = 1000  # then the file is not read further: a wrong file fails fast


@dataclass(frozen=True, kw_only=True)
class FeedbackImport:
    """What an import did: events read from the file, new ones written, ones already stored (from an earlier
    import), and repeats of an event earlier in the same file."""

    file: str
    scale: str
    read: int
    new: int
    already: int
    repeated: int

    def lines(self) -> list[str]:
        return [
            f"Imported {self.file} ({self.scale}): {self.read} event(s) read, {self.new} new, "
            f"{self.already} already there" + (f", {self.repeated} repeated in the file." if self.repeated else ".")
        ]


def parse_scale(text: str) -> tuple[float, float]:
    """``-1,1`` / ``1-5`` / ``1,5`` / ``thumbs`` as (min, max); raises ValidationError on anything else."""
    spec = text.strip().lower()
    if spec == "thumbs":
        return THUMBS
    number = r"\s*(-?\d+(?:\.\d+)?)\s*"
    match = re.fullmatch(number + r"[,:]" + number, spec) or re.fullmatch(number + "-" + number, spec)
    if match is None:
        raise ValidationError([Problem.argument("scale", f"{text!r} is not a scale; write MIN,MAX (-1,1 or 1-5)")])
    low, high = float(match.group(1)), float(match.group(2))
    if not low < high:
        raise ValidationError([Problem.argument("scale", f"{text!r}: the minimum must be below the maximum")])
    return low, high


def parse_canary(text: str) -> tuple[str, str]:
    """``NEW=CURRENT`` as (new, current); raises ValidationError otherwise."""
    new, sep, current = text.partition("=")
    if not sep or not new.strip() or not current.strip() or new.strip() == current.strip():
        raise ValidationError([Problem.argument("canary", f"{text!r}: write NEW=CURRENT with two model names")])
    return new.strip(), current.strip()


@cycle_collection_paused()  # a million rows of fresh objects: see services.gc_pause
def import_feedback(
    engine: Engine,
    path: Path,
    *,
    scale: tuple[float, float] = THUMBS,
    fmt: str | None = None,
    progress: bool | None = None,
) -> FeedbackImport:
    """Import the feedback file at ``path`` (JSONL or CSV, by ``fmt`` or the file's suffix) on ``scale``.

    ``progress``: a tqdm bar on stderr (None: when stderr is a terminal). Raises FeedbackImportError with
    every problem found (nothing written), NotFoundError when the file does not exist."""
    from tqdm import tqdm  # here: the monitor, which shares this module, has no bar (60 ms of its start)

    if not path.is_file():
        raise NotFoundError(f"{path} does not exist or is not a file; give the path of a .jsonl or .csv file")
    kind = format_of(path, fmt)
    show = sys.stderr.isatty() if progress is None else progress
    checker = Checker(path.name, scale, datetime.now(UTC), [], {}, {})
    read = new = 0
    with (
        path.open("rb") as handle,
        tqdm(total=path.stat().st_size, unit="B", unit_scale=True, disable=not show, file=sys.stderr,
             desc=f"import {path.name}") as bar,
        write_session(engine) as session,
        repo.EventWriter(session, check_stored=repo.has_events(session)) as writer,
    ):  # fmt: skip
        checker.imported_at = repo.bind_time(session, checker.imported_at)
        ticker = Progress(handle, bar)
        chunks = jsonl_chunks if kind == "jsonl" else csv_chunks
        for chunk in chunks(handle, ticker, checker):
            read += len(chunk.lines)
            rows = checker.rows(chunk)
            if rows and not checker.problems:  # after a problem nothing is written, but every row is checked
                inserted, conflicts = writer.write(rows)
                new += inserted
                for key, line in conflicts:
                    rid = key.removeprefix("request:")
                    message = "is stored already with other content (imported before); give it a new request id"
                    checker.problem(line, "request_id", f"{rid!r} {message}")
            if len(checker.problems) >= MAX_PROBLEMS:
                checker.problem(chunk.lines[-1], None, f"stopped reading after {MAX_PROBLEMS} problems")
                break
        if not read and not checker.problems:
            checker.problem(0, None, "no events in the file")
        if checker.problems:  # in file order (a row's parse problems are found before its chunk's checks)
            raise FeedbackImportError(sorted(checker.problems, key=lambda p: p.line or 0))
    return FeedbackImport(file=path.name, scale=scale_label(*scale), read=read, new=new,
                          already=read - new - checker.repeated, repeated=checker.repeated)  # fmt: skip


def feedback_models(engine: Engine) -> list[str]:
    """Every model with production feedback."""
    with read_session(engine) as session:
        return repo.feedback_models(session)


@cycle_collection_paused()
def monitor(
    engine: Engine,
    *,
    window: str = "1d",
    models: Sequence[str] | None = None,
    canaries: Sequence[tuple[str, str]] = (),
) -> MonitorResult:
    """The production monitor over the stored feedback (of ``models`` and the canaries' models; all when
    None). Raises ReportError when there is no feedback to monitor."""
    wanted = None if models is None else list(dict.fromkeys([*models, *(m for pair in canaries for m in pair)]))
    with read_session(engine) as session:
        frame = repo.feedback_frame(session, wanted)
    if not len(frame):
        which = f" for {', '.join(wanted)}" if wanted else ""
        raise ReportError(f"No production feedback{which} yet; import some with `blind-review import-feedback FILE`.")
    result = build_monitor(frame, window, canaries)
    for change in result.changes:
        if change.kind == "canary" and change.flagged:  # once per change: a monitor read again sends nothing new
            emit(
                engine,
                "monitor.canary",
                {"model": change.model, "against": change.against, "scenario": change.scenario, "metric": change.metric,
                 "window": change.window, "before": change.before, "after": change.after,
                 "p_adjusted": change.p_adjusted, "sentence": change_sentence(change)},
                dedup_key=f"canary:{change.model}:{change.against}:{change.scenario}:{change.metric}:{change.window}",
            )  # fmt: skip
    return result


@cycle_collection_paused()
def panel_and_production(engine: Engine, report: Report, *, dimension: str | None = None) -> PanelProduction:
    """Whether production feedback agrees with the panel of ``report`` (its overall ranking and pairs), for
    the models of the batch that have production feedback."""
    models = sorted({r.model for r in report.overall.ranking})
    with read_session(engine) as session:
        frame = repo.feedback_frame(session, models)
    return panel_vs_production(report.overall.ranking, report.overall.pairs, frame, dimension=dimension)


def write_monitor(result: MonitorResult, fmt: str, out: Path) -> Path:
    """Render ``result`` as ``fmt`` into ``out``; raises ReportError if it can't."""
    from reviewer_app.batches.output_files import write_rendered
    from reviewer_app.reporting.monitor import FORMATS, render_monitor

    return write_rendered(lambda: render_monitor(result, fmt), fmt, FORMATS, out)

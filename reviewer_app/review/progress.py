"""Progress for leads: done, remaining and median seconds per item, by batch, scenario and reviewer.

"Done" counts submitted items and "can't judge" skips (both finish an assignment); "remaining" counts
pending assignments, planned or claimed. Median seconds are over submitted items only, from the moment
the item was first shown to the first submit.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from statistics import median

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import FINISHED_STATUSES, AssignmentStatus
from reviewer_app.domain.views import QueueEntry
from storage.engine import read_session
from storage.repositories.review import progress as repo


@dataclass(frozen=True)
class ProgressRow:
    group: str  # a scenario or reviewer name; "All" for the batch total
    done: int
    skipped: int
    remaining: int
    median_seconds: float | None

    @property
    def assigned(self) -> int:
        return self.done + self.remaining

    @property
    def share_done(self) -> float:
        return self.done / self.assigned if self.assigned else 0.0


@dataclass(frozen=True)
class BatchProgressReport:
    batch_id: int
    total: ProgressRow
    by_scenario: list[ProgressRow]
    by_reviewer: list[ProgressRow]


def _summarise(group: str, rows: list[tuple[str, float | None]]) -> ProgressRow:
    done = sum(1 for status, _ in rows if status in FINISHED_STATUSES)
    skipped = sum(1 for status, _ in rows if status == AssignmentStatus.SKIPPED)
    seconds = [s for status, s in rows if status == AssignmentStatus.DONE and s is not None]
    return ProgressRow(group, done, skipped, len(rows) - done, median(seconds) if seconds else None)


# The last few batches' progress, by data revision (:func:`storage.repositories.review.progress.progress_revision`):
# the lead's page asks on every visit, and reading a big batch's assignments takes seconds (300,000: 1.3 s to
# read, 2.5 s in all) where its revision takes milliseconds.
_CACHE: OrderedDict[tuple[object, ...], BatchProgressReport] = OrderedDict()
_CACHE_SIZE = 16
_LOCK = threading.Lock()


def batch_progress(engine: Engine, batch_id: int) -> BatchProgressReport:
    """Progress of one batch in total, per scenario and per reviewer (sorted by name); computed again only
    when an assignment of the batch (or a person's name) changed since the last time."""
    with read_session(engine) as session:
        revision = (engine.url.render_as_string(hide_password=True), *repo.progress_revision(session, batch_id))
        with _LOCK:
            if revision in _CACHE:
                _CACHE.move_to_end(revision)
                return _CACHE[revision]
        rows = repo.batch_progress_rows(session, batch_id)
    report = _batch_progress(batch_id, rows)
    with _LOCK:
        _CACHE[revision] = report
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return report


def _batch_progress(batch_id: int, rows: list[tuple[str, str, AssignmentStatus, float | None]]) -> BatchProgressReport:
    by_scenario: dict[str, list[tuple[str, float | None]]] = defaultdict(list)
    by_reviewer: dict[str, list[tuple[str, float | None]]] = defaultdict(list)
    for scenario, reviewer, status, seconds in rows:
        by_scenario[scenario].append((status, seconds))
        by_reviewer[reviewer].append((status, seconds))
    return BatchProgressReport(
        batch_id=batch_id,
        total=_summarise("All", [(st, sec) for _s, _r, st, sec in rows]),
        by_scenario=[_summarise(k, v) for k, v in sorted(by_scenario.items())],
        by_reviewer=[_summarise(k, v) for k, v in sorted(by_reviewer.items())],
    )


def recent_finished(engine: Engine, batch_id: int, reviewer_id: int, limit: int = 50) -> list[QueueEntry]:
    """The reviewer's latest finished items (newest first), for going back to revise an answer.

    Bounded: a reviewer of a big batch has thousands of items, and the page must not carry them all."""
    with read_session(engine) as session:
        return [
            QueueEntry(i, label, position, AssignmentStatus(status))
            for i, label, position, status in repo.finished_assignments(session, batch_id, reviewer_id, limit)
        ]

"""Reports kept per batch and data revision, for the lead's results page.

A report of a big batch takes seconds (300,000 ratings) to tens of seconds (3 million); the page is drawn
again on every widget change and every visit. A time-limited cache was both stale (a new rating hidden for
minutes) and wasteful (recomputed after minutes although nothing changed). Here a report is kept under the
batch's data revision (``storage.repositories.revisions.batch_revision``: one cheap query), its bootstrap
rounds and its composite weights: a new or revised rating, or other weights, give a new key; an unchanged
batch is served from memory. A few reports at most are kept (least recently used first out), so memory does
not grow with every revision a busy batch goes through.

Plain Python so that tests call it without Streamlit; the page holds one :class:`ReportCache` per process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import TypeAlias

from sqlalchemy.engine import Engine

from reviewer_app.analysis.report import DEFAULT_ROUNDS
from reviewer_app.domain.report import Report
from reviewer_app.errors import NotFoundError
from reviewer_app.results.batch_reports import batch_report
from storage.engine import read_session
from storage.repositories.results.revisions import batch_revision

_Weights: TypeAlias = tuple[tuple[str, float], ...]
_Key: TypeAlias = tuple[Hashable, int, _Weights, bool]  # (data revision, rounds, weights, rulings used)

DEFAULT_SIZE = 8  # reports kept; a big batch's report is a few MB


class ReportCache:
    """The last ``size`` reports built, by (batch, data revision, rounds, weights).

    ``builds`` counts the reports computed (not served from memory). Safe to share between the threads
    Streamlit runs sessions in: builds run one at a time, so two leads opening the same batch wait for one
    computation, not two.
    """

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError("a report cache holds at least one report")
        self.size = size
        self.builds = 0
        self._reports: OrderedDict[_Key, Report] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._reports)

    def report(
        self,
        engine: Engine,
        batch_id: int,
        *,
        rounds: int = DEFAULT_ROUNDS,
        weights: dict[str, float] | None = None,
        adjudicated: bool = False,
    ) -> Report:
        """The report of batch ``batch_id`` as :func:`batch_report` computes it now (``adjudicated``: ranked
        with the rulings), from memory when the batch's data have not changed since it was built. Raises what
        ``batch_report`` raises."""
        with read_session(engine) as session:
            revision = batch_revision(session, batch_id)
        if revision is None:
            raise NotFoundError(f"no batch with id {batch_id}; it may have been deleted")
        wanted = _weights_key(weights)
        key: _Key = (revision, rounds, wanted, adjudicated)
        with self._lock:
            found = self._find(key, revision, rounds, wanted)
            if found is not None:
                return found
            report = batch_report(engine, batch_id=batch_id, rounds=rounds, weights=weights, adjudicated=adjudicated)
            self.builds += 1
            self._remember(key, report)
            return report

    def _find(self, key: _Key, revision: Hashable, rounds: int, wanted: _Weights) -> Report | None:
        """A kept report for ``key``, or one of the same data whose composite used exactly the weights asked
        for (the page asks with no weights, then with the ones that report used: the same report)."""
        report = self._reports.get(key)
        if report is None and wanted:
            for (rev, rnd, _, ruled), candidate in self._reports.items():
                same = rev == revision and rnd == rounds and ruled == key[3]
                if same and _weights_key(candidate.overall.composite.weights) == wanted:
                    report = candidate
                    break
        if report is not None:
            self._remember(key, report)
        return report

    def _remember(self, key: _Key, report: Report) -> None:
        """Keep ``report`` under ``key`` as the most recently used, dropping the least recently used past
        ``size``."""
        self._reports[key] = report
        self._reports.move_to_end(key)
        while len(self._reports) > self.size:
            self._reports.popitem(last=False)


def _weights_key(weights: dict[str, float] | None) -> _Weights:
    return tuple(sorted((s, float(w)) for s, w in (weights or {}).items()))

"""The identity-leak list of a batch in full: every output the load's scan found naming a model or vendor.

The load summary shows the first twenty; this is where the admin reads all of them, on the Admin page and
with ``blind-review leaks BATCH``. The list names models, so :func:`leaks_for` checks that the person asking
is an admin here, in the service, and not only on the page.
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass
from typing import TextIO

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import BatchValidationError, NotFoundError, Problem
from reviewer_app.people.people import require
from storage.engine import read_session
from storage.repositories.batches import admin as repo
from storage.repositories.batches import batches as batch_repo

FORMATS = ("csv", "jsonl")
FIELDS = ("scenario", "sample_id", "model", "repeat", "words", "handling")


@dataclass(frozen=True)
class LeakEntry:
    """One flagged output: where it is, the words that matched, and what the load did with it."""

    scenario: str
    sample_id: str
    model: str
    repeat: int
    words: str
    handling: str  # "masked" (reviewers see [model name]), "excluded" (not reviewed) or "flagged" (as written)


def batch_leaks(engine: Engine, batch: str) -> list[LeakEntry]:
    """Every flagged output of the batch named ``batch`` (or with that id), by scenario, sample and model.

    For the command line, whose user runs the server; pages call :func:`leaks_for`. Raises
    :class:`NotFoundError` for an unknown batch."""
    found = find_batch(engine, batch)
    assert found.id is not None
    return _entries(engine, found.id)


def leaks_for(engine: Engine, person: Person | None, batch_id: int) -> list[LeakEntry]:
    """:func:`batch_leaks` for a signed-in person: only an admin may read it (it names models).

    Raises :class:`AuthError` for anyone else and :class:`NotFoundError` for an unknown batch."""
    require(person, Role.ADMIN)
    with read_session(engine) as session:
        if batch_repo.get_batch(session, batch_id) is None:
            raise NotFoundError("That batch no longer exists.")
    return _entries(engine, batch_id)


def _entries(engine: Engine, batch_id: int) -> list[LeakEntry]:
    with read_session(engine) as session:
        rows = repo.leak_rows(session, batch_id)
    return [
        LeakEntry(
            r.scenario,
            r.sample_id,
            r.model,
            r.repeat,
            r.words,
            "excluded" if r.excluded else "masked" if r.masked else "flagged",
        )
        for r in rows
    ]


def write_leaks(entries: list[LeakEntry], fmt: str, stream: TextIO) -> None:
    """Write the list as CSV (cells a spreadsheet would run as formulas neutralised: outputs are model text)
    or JSONL (values exactly as stored). Raises :class:`BatchValidationError` for another ``fmt``."""
    if fmt == "csv":
        writer = csv.DictWriter(stream, fieldnames=list(FIELDS), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: neutralise_cell(v) for k, v in asdict(e).items()} for e in entries)
    elif fmt == "jsonl":
        for e in entries:
            stream.write(json.dumps(asdict(e), ensure_ascii=False) + "\n")
    else:
        raise BatchValidationError([Problem.argument("format", f"must be csv or jsonl, not {fmt!r}")])

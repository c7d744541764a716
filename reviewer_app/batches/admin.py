"""Batch housekeeping for admins: the batches table with outputs per model, archiving, deleting, the titles
reviewers see, and what the Assign form shows before anything is planned.

A batch loaded by mistake can be *archived* (closed, out of every list, every row kept, restorable) or
*deleted* (the batch with its ratings, assignments, items, outputs, samples and scenarios, in one
transaction, and then the stored images no other batch shows). Deleting asks for the batch's name typed
out, here in the service, so no front end can skip it.

Functions that change a batch take ``by``: the signed-in person on a page (only an admin may), or None from
the command line, whose user runs the server.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.batches.images import image_path
from reviewer_app.batches.leakscan import LeakScanner
from reviewer_app.batches.titles import batch_title_in, name_leaks_in, name_scanner_in, scenario_titles_in
from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import ConflictError, NotFoundError, Problem, ValidationError
from reviewer_app.people.people import require
from storage.engine import read_session, write_session
from storage.models import Batch, utcnow
from storage.repositories.batches import admin as repo
from storage.repositories.batches import batches as batch_repo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchRow:
    """One line of the batches table: the batch, its counts and how many outputs each model has."""

    batch: Batch
    counts: batch_repo.BatchCounts
    per_model: dict[str, int] = field(default_factory=dict)
    title: str = ""  # what reviewers see for the batch's name (services.titles)
    follow_up_of: str | None = None  # the baseline's name when the batch is a follow-up (load-batch --follow-up)

    @property
    def models_text(self) -> str:
        """``model outputs`` pairs, so a lopsided batch (one model with 805, the other missing) shows at once."""
        return ", ".join(f"{m} {n}" for m, n in self.per_model.items()) or "none"


def batch_table(engine: Engine, *, archived: bool = False) -> list[BatchRow]:
    """The batches that are not archived (or, with ``archived=True``, those that are), oldest first."""
    with read_session(engine) as session:
        return _rows(session, [b for b in repo.batches(session, archived=archived) if b.id is not None])


def batch_row(engine: Engine, name: str) -> BatchRow:
    """One batch's line of the table (archived or not); NotFoundError for an unknown name."""
    batch = find_batch(engine, name)
    with read_session(engine) as session:
        rows = _rows(session, [batch])
    if not rows:
        raise NotFoundError(f"no batch named {name!r}")
    return rows[0]


def _rows(session: Session, batches: list[Batch]) -> list[BatchRow]:
    per_model = repo.outputs_per_model(session, [b.id for b in batches if b.id is not None])
    baselines = batch_repo.batch_names(session, [b.baseline_batch_id for b in batches if b.baseline_batch_id])
    return [
        BatchRow(
            b,
            batch_repo.batch_counts(session, b.id),
            per_model.get(b.id, {}),
            batch_title_in(session, b),
            baselines.get(b.baseline_batch_id) if b.baseline_batch_id is not None else None,
        )
        for b in batches
        if b.id is not None
    ]


def outputs_per_model(engine: Engine, batch_id: int) -> dict[str, int]:
    """{model: outputs loaded} for one batch, by model name."""
    with read_session(engine) as session:
        return repo.outputs_per_model(session, [batch_id]).get(batch_id, {})


def _allowed(by: Person | None) -> None:
    if by is not None:
        require(by, Role.ADMIN)


def archive_batch(engine: Engine, name: str, *, by: Person | None = None) -> Batch:
    """Archive a batch: it is closed (no new or revised ratings) and leaves every list, keeping all its rows.

    Raises :class:`NotFoundError`, :class:`AuthError` (``by`` is not an admin), :class:`ConflictError` when
    it is archived already."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    with write_session(engine) as session:
        locked = repo.lock_batch(session, batch.id)
        if locked is None:
            raise NotFoundError(f"batch {name!r} no longer exists")
        if locked.archived_at is not None:
            raise ConflictError(f"batch {batch.name!r} is archived already")
        repo.set_archived(session, batch.id, utcnow())
    log.info("batch %r (id %d) archived", batch.name, batch.id)
    return find_batch(engine, name)


def restore_batch(engine: Engine, name: str, *, by: Person | None = None) -> Batch:
    """Bring an archived batch back into the lists, closed: an admin opens it again when it should take ratings.

    Raises :class:`NotFoundError`, :class:`AuthError`, :class:`ConflictError` when it is not archived."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    with write_session(engine) as session:
        locked = repo.lock_batch(session, batch.id)
        if locked is None:
            raise NotFoundError(f"batch {name!r} no longer exists")
        if locked.archived_at is None:
            raise ConflictError(f"batch {batch.name!r} is not archived")
        repo.set_archived(session, batch.id, None)
    log.info("batch %r (id %d) restored", batch.name, batch.id)
    return find_batch(engine, name)


@dataclass(frozen=True)
class DeleteSummary:
    batch_name: str
    batch_id: int
    rows: dict[str, int]  # table -> rows deleted
    images: int  # stored image files removed (those no other batch shows)

    def lines(self) -> list[str]:
        r = self.rows
        return [
            f"Deleted batch {self.batch_name!r} (id {self.batch_id}) with {r.get('rating', 0)} rating(s), "
            f"{r.get('assignment', 0)} assignment(s), {r.get('item', 0)} item(s), {r.get('output', 0)} output(s), "
            f"{r.get('sample', 0)} sample(s), {r.get('scenario', 0)} scenario(s) and {self.images} stored image(s)."
        ]


class DeleteConfirmationError(ValidationError):
    """The typed confirmation does not match the batch's name."""

    what = "confirmation"


def delete_batch(engine: Engine, name: str, *, confirm: str, by: Person | None = None) -> DeleteSummary:
    """Delete a batch and everything that belongs to it, for good; ``confirm`` must be the batch's name.

    The rows go in one transaction (the batch row is locked first, so a submit in flight finishes before and
    any later one finds no batch); the stored images no other batch shows are removed after the commit.
    Raises :class:`DeleteConfirmationError` (field ``confirm``) when ``confirm`` is not the name,
    :class:`NotFoundError`, :class:`AuthError` (``by`` is not an admin), :class:`ConflictError` when the batch
    is a follow-up's baseline."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    if confirm.strip() != batch.name:
        raise DeleteConfirmationError(
            [Problem.argument("confirm", f"type the batch's name, {batch.name!r}, to delete it")]
        )
    with write_session(engine) as session:
        if repo.lock_batch(session, batch.id) is None:
            raise NotFoundError(f"batch {batch.name!r} no longer exists")
        follow_ups = batch_repo.follow_ups_of(session, batch.id)
        if follow_ups:  # their anchor items show this batch's outputs
            raise ConflictError(
                f"batch {batch.name!r} is the baseline of the follow-up batch(es) {', '.join(map(repr, follow_ups))}, "
                "whose anchor items show its outputs; delete those first (or archive this one instead)"
            )
        images = repo.image_names(session, batch_id=batch.id, others=False)
        images -= repo.image_names(session, batch_id=batch.id, others=True)
        rows = repo.delete_batch(session, batch.id)
    removed = 0
    for stored in sorted(images):
        try:
            image_path(stored).unlink()
            removed += 1
        except (FileNotFoundError, NotFoundError):
            pass
    log.info("batch %r (id %d) deleted: %s, %d image(s)", batch.name, batch.id, rows, removed)
    return DeleteSummary(batch.name, batch.id, rows, removed)


@dataclass(frozen=True)
class LoadPreview:
    """What an Assign would roughly hand out, shown before the admin confirms it."""

    batch: str
    free_slots: int  # slots no one holds: items x k minus the first showings held
    items: int
    overlap: int
    current: dict[str, int]  # person -> unfinished showings they hold in the batch now
    per_person: int  # about this many new showings each (repeats for self-consistency come on top)

    def rows(self, chosen: list[str]) -> list[dict[str, object]]:
        return [{"person": p, "unfinished now": self.current.get(p, 0), "new (about)": self.per_person} for p in chosen]


def assign_defaults(engine: Engine, batch_name: str) -> list[str]:
    """The people an admin planned this batch for before (their last choice), or nobody: never every
    reviewer by default on the page (that once handed 845 items to each demo person)."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    with read_session(engine) as session:
        return repo.planned_people(session, batch.id)


def preview_assign(engine: Engine, batch_name: str, chosen: list[str]) -> LoadPreview:
    """How many new showings each of ``chosen`` would get from an Assign now (an estimate: the plan itself
    balances loads to within one and adds repeats), and what each holds already."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    k = batch_rubric(batch).overlap
    with read_session(engine) as session:
        items = batch_repo.batch_counts(session, batch.id).items
        free = max(0, items * k - repo.held_slots(session, batch.id))
        current = repo.load_per_person(session, batch.id)
    each = min(items, math.ceil(free / len(chosen))) if chosen else 0
    return LoadPreview(batch.name, free, items, k, current, each)


@dataclass(frozen=True)
class TitleRow:
    """A name reviewers would see (the batch's or a scenario's), what they see instead, and why."""

    kind: str  # "batch" or "scenario"
    name: str  # the real name, as leads and reports show it
    shown: str  # what reviewers see
    why: str
    display_name: str | None  # the title an admin set, if any


TITLE_MAX_CHARS = 80


class TitleError(ValidationError):
    """A title an admin typed that cannot be shown to reviewers (it names a model, is too long, ...)."""

    what = "titles"


def batch_titles(engine: Engine, name: str) -> list[TitleRow]:
    """The titles reviewers see for batch ``name`` and each of its scenarios, with the reason for each.

    Names real names: for admins and the command line (the page checks the role)."""
    batch = find_batch(engine, name)
    with read_session(engine) as session:
        leaks = name_leaks_in(session, batch)
        shown = batch_title_in(session, batch)
        rows = [TitleRow("batch", batch.name, shown, _why(batch.display_name, leaks.batch), batch.display_name)]
        rows += [
            TitleRow("scenario", s.name, s.shown, _why(s.display_name, s.leaks), s.display_name)
            for s in scenario_titles_in(session, batch)
        ]
    return rows


def _why(display_name: str | None, leaked: tuple[str, ...]) -> str:
    if display_name:
        return "title set by an admin"
    if leaked:
        return f"neutral: the name names a model or vendor ({', '.join(leaked)})"
    return "the name itself"


def set_titles(
    engine: Engine,
    name: str,
    *,
    display_name: str | None = None,
    scenarios: Mapping[str, str] | None = None,
    by: Person | None = None,
) -> list[TitleRow]:
    """Set the titles reviewers see for batch ``name`` (``display_name``) and its scenarios (``scenarios``:
    {scenario name: title}); an empty title clears one (reviewers then see the name, or the neutral title
    when the name names a model), None leaves the batch's as it is. Returns :func:`batch_titles`.

    Every title is scanned like the names are, and refused when it names one of the batch's models or a
    vendor: :class:`TitleError` (fields ``display_name`` and ``scenario``) with nothing changed; also for
    a title over :data:`TITLE_MAX_CHARS` characters, on more than one line, or for an unknown scenario.
    :class:`NotFoundError`, :class:`AuthError` (``by`` is not an admin)."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    wanted = dict(scenarios or {})
    problems: list[Problem] = []
    with read_session(engine) as session:
        scanner = name_scanner_in(session, batch)
        known = [s.name for s in scenario_titles_in(session, batch)]
    batch_title = None if display_name is None else _checked_title(display_name, "display_name", "", scanner, problems)
    titles: dict[str, str | None] = {}
    for scenario, title in wanted.items():
        if scenario not in known:
            problems.append(
                Problem.argument(
                    "scenario", f"batch {batch.name!r} has no scenario {scenario!r} (it has: {', '.join(known)})"
                )
            )
            continue
        titles[scenario] = _checked_title(title, "scenario", f"{scenario!r}: ", scanner, problems)
    if problems:
        raise TitleError(problems)
    with write_session(engine) as session:
        if display_name is not None:
            repo.set_batch_display_name(session, batch.id, batch_title)
        repo.set_scenario_display_names(session, batch.id, titles)
    log.info("titles of batch %r (id %d) set: batch %r, scenarios %r", batch.name, batch.id, batch_title, titles)
    return batch_titles(engine, name)


def _checked_title(title: str, field: str, prefix: str, scanner: LeakScanner, problems: list[Problem]) -> str | None:
    """The title to store (None: cleared); adds a problem to ``problems`` when reviewers may not see it (the
    caller then refuses them all)."""
    text = title.strip()
    if not text:
        return None
    words = scanner.scan_name(text)
    if words:
        problems.append(
            Problem.argument(
                field,
                f"{prefix}the title {text!r} names a model or vendor ({', '.join(words)}), which would unblind "
                "reviewers; choose a title without it",
            )
        )
    elif "\n" in text or "\r" in text:
        problems.append(Problem.argument(field, f"{prefix}a title is one line"))
    elif len(text) > TITLE_MAX_CHARS:
        problems.append(
            Problem.argument(field, f"{prefix}a title has at most {TITLE_MAX_CHARS} characters, not {len(text)}")
        )
    return text

"""The titles reviewers see for a batch and its scenarios, and the scan that keeps model names out of them.

A batch's name and its scenario names reach reviewers (the batch picker, "Scenario: ..." above each item),
and names are often made of model names: a batch "alpaca-claude-vicuna", AlpacaEval's "vicuna" dataset as
a scenario beside a vicuna-13b candidate. Every name is scanned with the batch's model names
(:func:`reviewer_app.batches.leakscan.name_scanner_for`), and reviewers see, in this order:

1. the title an admin set (``display_name``; scanned as well, and refused when it names a model);
2. the name itself, when it names no model;
3. a neutral title: "Batch <id>", or "Scenario <n>" with n the scenario's place among the batch's scenario
   names in sorted order (fixed at load: the same on every page, for every reviewer).

Leads, reports, exports and the command line keep the real names. The data is never refused for a name:
the load warns (:func:`warning_lines`) and reviewers get the neutral title.

Which names leak is worked out when a page needs it, from the stored model names, not stored itself: batches
loaded before the titles existed are covered as they are, and an improved word list covers old batches too.
The result is kept per process, keyed by the batch's id, name and content hash (the content fixes its
models, scenarios and rubric), so a page pays the scan once per batch; the titles an admin set are read
from the database on every page, so a change shows at the next click.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlmodel import Session

from reviewer_app.batches.leakscan import LeakScanner, name_scanner_for
from reviewer_app.domain.rubric import Rubric
from storage.models import Batch
from storage.repositories.batches import batches as repo


@dataclass(frozen=True)
class NameLeaks:
    """The words a batch's name and each of its scenario names leak (only the names that leak are keys)."""

    batch: tuple[str, ...] = ()
    scenarios: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.batch or self.scenarios)


def find_name_leaks(
    batch_name: str, scenario_names: Iterable[str], model_names: Iterable[str], extra_words: Iterable[str] = ()
) -> NameLeaks:
    """Scan a batch's name and its scenario names for the batch's model names (and the rubric's
    ``leak_words``, and the default list's coined names)."""
    return _leaks(name_scanner_for(model_names, extra_words), batch_name, scenario_names)


def _leaks(scanner: LeakScanner, batch_name: str, scenario_names: Iterable[str]) -> NameLeaks:
    scenarios = {name: tuple(words) for name in scenario_names if (words := scanner.scan_name(name))}
    return NameLeaks(tuple(scanner.scan_name(batch_name)), scenarios)


def neutral_batch_title(batch_id: int) -> str:
    return f"Batch {batch_id}"


def neutral_scenario_title(scenario_names: Iterable[str], name: str) -> str:
    """ "Scenario <n>": n is the scenario's 1-based place among the batch's scenario names, sorted."""
    return f"Scenario {sorted(scenario_names).index(name) + 1}"


def warning_lines(
    leaks: NameLeaks, batch_id: int, batch_name: str, scenario_names: Iterable[str], *, where: str | None = None
) -> list[str]:
    """What a load summary says about names that name a model: what reviewers see instead, and where to set
    a title (``where``; the command by default). Worded like the outputs' leak lines; none when no name
    leaks."""
    if not leaks:
        return []
    out = []
    if leaks.batch:
        out.append(
            f"  the batch's name names a model or vendor ({', '.join(leaks.batch)}): reviewers see it as "
            f"{neutral_batch_title(batch_id)!r} (leads and reports keep the name)"
        )
    if leaks.scenarios:
        names = sorted(scenario_names)
        out.append(
            f"  {len(leaks.scenarios)} scenario name(s) name a model or vendor, shown to reviewers under a neutral "
            "title (leads and reports keep the names):"
        )
        for name, words in sorted(leaks.scenarios.items()):
            out.append(f"    {name!r} ({', '.join(words)}): shown as {neutral_scenario_title(names, name)!r}")
    where = where or f"`blind-review set-titles {batch_name}` (see its --help)"
    out.append(f"  to give reviewers other titles: {where}")
    return out


# (batch id, name, content hash) -> (the scanner of the batch's names, what its names leak)
_CACHE: dict[tuple[int, str, str], tuple[LeakScanner, NameLeaks]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 256


def _scanned(session: Session, batch: Batch) -> tuple[LeakScanner, NameLeaks]:
    assert batch.id is not None
    key = (batch.id, batch.name, batch.content_hash)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    models = repo.model_names(session, batch.id)
    extra = Rubric.from_json(batch.rubric_json).leak_words
    scanner = name_scanner_for(models, extra)
    leaks = _leaks(scanner, batch.name, [name for name, _title in repo.scenario_names(session, batch.id)])
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()  # a server sees a handful of batches; this only bounds a pathological one
        _CACHE[key] = (scanner, leaks)
    return scanner, leaks


def name_scanner_in(session: Session, batch: Batch) -> LeakScanner:
    """The scanner for titles of this batch (an admin's title is refused when it names a model)."""
    return _scanned(session, batch)[0]


def name_leaks_in(session: Session, batch: Batch) -> NameLeaks:
    """What the batch's name and its scenario names leak (cached per process; see the module docstring)."""
    return _scanned(session, batch)[1]


def batch_title_in(session: Session, batch: Batch) -> str:
    """The title reviewers see for ``batch``: the admin's title, else its name unless that names a model,
    else "Batch <id>"."""
    assert batch.id is not None
    if batch.display_name:
        return batch.display_name
    return neutral_batch_title(batch.id) if name_leaks_in(session, batch).batch else batch.name


@dataclass(frozen=True)
class ScenarioTitle:
    name: str  # the real name (leads only)
    shown: str  # what reviewers see
    display_name: str | None  # the admin's title, if set
    leaks: tuple[str, ...]  # the words the real name leaks


def scenario_titles_in(session: Session, batch: Batch) -> list[ScenarioTitle]:
    """Every scenario of ``batch`` with the title reviewers see, by name."""
    assert batch.id is not None
    rows = repo.scenario_names(session, batch.id)
    leaks = name_leaks_in(session, batch).scenarios
    names = [name for name, _title in rows]
    out = []
    for name, title in rows:
        words = leaks.get(name, ())
        shown = title or (neutral_scenario_title(names, name) if words else name)
        out.append(ScenarioTitle(name, shown, title, words))
    return out


def scenario_title_in(session: Session, batch: Batch, name: str) -> str:
    """The title reviewers see for the scenario ``name`` of ``batch``."""
    for row in scenario_titles_in(session, batch):
        if row.name == name:
            return row.shown
    raise LookupError(f"batch {batch.id} has no scenario {name!r}")  # a scenario of one of its items: a bug

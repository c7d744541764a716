"""Loading a batch (check everything, then write everything in one transaction) and batch housekeeping."""

from __future__ import annotations

import functools
import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from sqlalchemy.engine import Engine

from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import BatchValidationError, IdentityLeakError, NotFoundError, Problem
from reviewer_app.services.ingest import IMAGE_TYPES, OutputRecord, content_hash, read_batch_files
from reviewer_app.services.leakscan import scanner_for
from reviewer_app.services.rubric import load_rubric, parse_rubric_text
from reviewer_app.settings import data_dir
from storage.engine import read_session, write_session
from storage.models import Batch
from storage.repositories import batches as repo

ON_LEAK = ("flag", "exclude", "fail")


@dataclass
class Leak:
    sample_id: str
    model: str
    repeat: int
    words: list[str]
    file: str
    line: int | None


@dataclass
class LoadSummary:
    batch_name: str
    batch_id: int
    already_loaded: bool
    mode: str
    scenarios: dict[str, int] = field(default_factory=dict)  # scenario -> samples
    models: list[str] = field(default_factory=list)
    outputs: int = 0
    items: int = 0
    images: int = 0
    leaks: list[Leak] = field(default_factory=list)
    excluded: int = 0
    seed: int = 0

    def lines(self) -> list[str]:
        if self.already_loaded:
            return [
                f"Already loaded: this content is batch {self.batch_name!r} (id {self.batch_id}); nothing was written."
            ]
        out = [
            f"Loaded batch {self.batch_name!r} (id {self.batch_id}, {self.mode} mode, seed {self.seed}):",
            f"  {sum(self.scenarios.values())} samples in {len(self.scenarios)} scenario(s): "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.scenarios.items())),
            f"  {self.outputs} outputs from {len(self.models)} models, {self.items} review items, "
            f"{self.images} image(s)",
        ]
        if self.leaks:
            verb = "excluded from review" if self.excluded else "flagged (still reviewed; see --on-leak)"
            out.append(f"  {len(self.leaks)} output(s) name a model or vendor, {verb}:")
            for leak in self.leaks[:20]:
                out.append(f"    sample {leak.sample_id} / {leak.model}: {', '.join(leak.words)}")
            if len(self.leaks) > 20:
                out.append(f"    ... and {len(self.leaks) - 20} more (export-ratings and the admin page list all)")
        else:
            out.append("  identity-leak scan: no output names a model or vendor")
        return out


def load_batch(
    engine: Engine,
    paths: list[Path],
    rubric_path: Path | None = None,
    *,
    name: str,
    on_leak: str = "flag",
    rubric_text: str | None = None,
    progress: bool = False,
) -> LoadSummary:
    """Check batch files and a rubric, then write the batch atomically; a second load of the same content
    is a no-op. Raises :class:`BatchValidationError`, :class:`RubricError` or :class:`IdentityLeakError`
    (``on_leak="fail"``) with nothing written."""
    if on_leak not in ON_LEAK:
        raise BatchValidationError(
            [Problem("--on-leak", None, None, f"must be flag, exclude or fail, not {on_leak!r}")]
        )
    if not name.strip():
        raise BatchValidationError([Problem("--name", None, None, "a batch needs a non-empty name")])
    if rubric_text is None:
        if rubric_path is None:
            raise BatchValidationError([Problem("--rubric", None, None, "a rubric file is required")])
        rubric, rubric_text = load_rubric(rubric_path)
        rubric_source = str(rubric_path)
    else:
        rubric_source = str(rubric_path or "rubric.toml")
        rubric = parse_rubric_text(rubric_text, source=rubric_source)
    digest = content_hash(paths, rubric_text)
    with read_session(engine) as session:
        same = repo.get_batch_by_hash(session, digest) if digest else None
        if same is not None:
            assert same.id is not None
            return LoadSummary(batch_name=same.name, batch_id=same.id, already_loaded=True, mode=same.mode)
    records = read_batch_files(paths, progress=progress)
    _check_against_rubric(records, rubric, rubric_source)
    assert digest is not None  # every file was readable, or read_batch_files raised
    with read_session(engine) as session:
        if repo.get_batch_by_name(session, name) is not None:
            raise BatchValidationError(
                [
                    Problem(
                        "--name",
                        None,
                        None,
                        f"a batch named {name!r} already exists with different content; choose another --name",
                    )
                ]
            )

    models = sorted({r.model for r in records})
    scanner = scanner_for(models, rubric.leak_words)
    leaks: list[Leak] = []
    leak_words: dict[int, str] = {}
    for idx, rec in enumerate(records):
        words = scanner.scan(rec.output)
        if words:
            leaks.append(Leak(rec.sample_id, rec.model, rec.repeat, words, rec.file, rec.line))
            leak_words[idx] = ", ".join(words)
    if leaks and on_leak == "fail":
        shown = "; ".join(
            f"{lk.file}{':' + str(lk.line) if lk.line else ''} sample {lk.sample_id} / {lk.model}: "
            f"{', '.join(lk.words)}"
            for lk in leaks[:10]
        )
        raise IdentityLeakError(
            f"{len(leaks)} output(s) name a model or vendor ({shown}"
            f"{' ...' if len(leaks) > 10 else ''}); nothing was written. Edit those outputs, "
            "or load with --on-leak flag or --on-leak exclude."
        )

    seed = rubric.seed if rubric.seed is not None else random.SystemRandom().randrange(2**31)
    images = _store_images(records)
    samples: dict[str, dict[str, object]] = {}
    for rec in records:
        samples.setdefault(
            rec.sample_id,
            {
                "key": rec.sample_id,
                "scenario": rec.scenario,
                "prompt_json": _json(rec.prompt),
                "reference": rec.reference,
                "criteria": rec.criteria,
                "images_json": json.dumps([i.stored_name for i in rec.images]),
            },
        )
    outputs = [
        {
            "sample_key": rec.sample_id,
            "model": rec.model,
            "repeat": rec.repeat,
            "text": rec.output,
            "metadata_json": _json(rec.metadata),
            "leak_words": leak_words.get(i, ""),
            "excluded": on_leak == "exclude" and i in leak_words,
        }
        for i, rec in enumerate(records)
    ]
    gold = [
        (
            g.sample_id,
            g.models if rubric.mode == "rating" else tuple(sorted(g.models)),
            json.dumps(_canonical_gold(g.models, g.expected), sort_keys=True),
        )
        for g in rubric.gold
    ]
    scenario_names = sorted({r.scenario for r in records})
    batch = Batch(
        name=name,
        content_hash=digest,
        mode=rubric.mode,
        overlap=rubric.overlap,
        seed=seed,
        rubric_toml=rubric_text,
        rubric_json=rubric.to_json(),
        source_files=json.dumps([str(p) for p in paths]),
    )
    new = repo.NewBatch(
        batch=batch,
        scenarios=scenario_names,
        samples=list(samples.values()),
        outputs=outputs,
        pairwise=rubric.mode == "pairwise",
        gold=gold,
    )
    with write_session(engine) as session:
        # A concurrent load of the same content may have won the race; the unique name catches it too.
        if repo.get_batch_by_hash(session, digest) is not None or repo.get_batch_by_name(session, name) is not None:
            raise BatchValidationError(
                [
                    Problem(
                        "--name",
                        None,
                        None,
                        f"a batch named {name!r} or with this content "
                        "was loaded at the same moment; run the command again",
                    )
                ]
            )
        batch_id = repo.insert_batch(session, new)
        counts = repo.batch_counts(session, batch_id)
    per_scenario: dict[str, int] = {}
    for s in samples.values():
        per_scenario[str(s["scenario"])] = per_scenario.get(str(s["scenario"]), 0) + 1
    return LoadSummary(
        batch_name=name,
        batch_id=batch_id,
        already_loaded=False,
        mode=rubric.mode,
        scenarios=per_scenario,
        models=models,
        outputs=len(outputs),
        items=counts.items,
        images=len(images),
        leaks=leaks,
        excluded=sum(1 for o in outputs if o["excluded"]),
        seed=seed,
    )


def _json(value: object) -> str:
    """Compact JSON text (orjson: the load writes 100,000 of these)."""
    return orjson.dumps(value).decode()


def _canonical_gold(models: tuple[str, ...], expected: dict[str, str]) -> dict[str, str]:
    """Pairwise gold answers are written for ``models`` in the order given; items store pairs sorted by name,
    so a gold answer for (b, a) is flipped to the canonical (a, b). Stored as a/b/tie/both_bad."""
    if len(models) < 2:
        return expected
    flip = list(models) != sorted(models)
    out = {}
    for dim, value in expected.items():
        canon = {"left": "a", "right": "b"}.get(value, value)
        if flip and canon in ("a", "b"):
            canon = "b" if canon == "a" else "a"
        out[dim] = canon
    return out


def _check_against_rubric(records: list[OutputRecord], rubric: Rubric, source: str) -> None:
    problems: list[Problem] = []
    scenarios = {r.scenario for r in records}
    for name in sorted(set(rubric.scenario_dimensions) | set(rubric.scenario_weights)):
        if name not in scenarios:
            problems.append(
                Problem(
                    source,
                    None,
                    f"scenarios.{name}",
                    f"no sample of the batch is in scenario {name!r} (the batch has: {', '.join(sorted(scenarios))})",
                )
            )
    keys = {(r.sample_id, r.model) for r in records}
    samples = {r.sample_id for r in records}
    for g in rubric.gold:
        if g.sample_id not in samples:
            problems.append(Problem(source, None, "gold", f"sample {g.sample_id!r} is not in the batch"))
            continue
        for m in g.models:
            if (g.sample_id, m) not in keys:
                problems.append(Problem(source, None, "gold", f"sample {g.sample_id!r} has no output of model {m!r}"))
    models = {r.model for r in records}
    if rubric.mode == "pairwise" and len(models) < 2:
        problems.append(Problem(source, None, "mode", "pairwise mode needs outputs of at least two models"))
    if problems:
        raise BatchValidationError(problems)


def _store_images(records: list[OutputRecord]) -> set[str]:
    """Copy images into the data directory by content hash (idempotent; the name says nothing of the file)."""
    folder = data_dir() / "images"
    stored: set[str] = set()
    for rec in records:
        for img in rec.images:
            if img.stored_name in stored:
                continue
            target = folder / img.stored_name
            if not target.exists():
                folder.mkdir(parents=True, exist_ok=True)
                tmp = target.with_suffix(".tmp")
                shutil.copyfile(img.source, tmp)
                tmp.replace(target)
            stored.add(img.stored_name)
    return stored


def image_path(stored_name: str) -> Path:
    """Where a stored image lives (names are content hashes; nothing else is accepted)."""
    digest, _, ext = stored_name.partition(".")
    # The name is a hex digest and a known extension ("png" is not hex, so the two are checked apart).
    if not digest or not all(c in "0123456789abcdef" for c in digest) or ext not in IMAGE_TYPES.values():
        raise NotFoundError("no such image")
    return data_dir() / "images" / stored_name


def find_batch(engine: Engine, name: str) -> Batch:
    """The batch named ``name``; :class:`NotFoundError` listing the known names otherwise."""
    with read_session(engine) as session:
        batch = repo.get_batch_by_name(session, name)
        if batch is None and name.isdigit():
            batch = repo.get_batch(session, int(name))
        if batch is None:
            known = ", ".join(b.name for b in repo.list_batches(session)) or "none yet"
            raise NotFoundError(f"no batch named {name!r} (known batches: {known}); see `blind-review list-batches`")
        return batch


def list_batches(engine: Engine) -> list[tuple[Batch, repo.BatchCounts]]:
    with read_session(engine) as session:
        return [(b, repo.batch_counts(session, b.id)) for b in repo.list_batches(session) if b.id is not None]


def set_batch_open(engine: Engine, name: str, is_open: bool) -> Batch:
    """Open or close a batch; a closed batch keeps its ratings but takes no new or revised ones."""
    batch = find_batch(engine, name)
    assert batch.id is not None
    with write_session(engine) as session:
        repo.set_batch_status(session, batch.id, "open" if is_open else "closed")
    return find_batch(engine, name)


def batch_rubric(batch: Batch) -> Rubric:
    """The batch's rubric, parsed once per process: every page view and submit needs it, and a batch's
    rubric never changes once loaded."""
    return _parse_rubric_json(batch.rubric_json)


@functools.lru_cache(maxsize=256)
def _parse_rubric_json(text: str) -> Rubric:
    # Keyed by the stored text itself, so a rebuilt database (same batch id, other rubric) is never served
    # a stale parse.
    return Rubric.from_json(text)

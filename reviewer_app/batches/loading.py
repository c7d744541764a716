"""Loading a batch: check everything, then write everything in one transaction.

:func:`load_batch` runs in two steps: *check* the arguments, the rubric and the files (nothing is written
if any of it is wrong; the files are read a record at a time, the checked records set aside in a temporary
file, and only small keys kept: :mod:`reviewer_app.batches.checked_batch`), then *write*: take the records back
one by one, scan each output for model names, and insert the rows a chunk at a time
(:mod:`reviewer_app.batches.load_rows`), all in one transaction. Memory thus follows the largest record and
the chunk, not the file (a 154 MB file had needed 1.2 GB). The batch's name and its scenario names are
scanned too: one that names a model is loaded all the same, with a warning in the summary
(:mod:`reviewer_app.batches.load_summary`), and reviewers see a neutral title instead
(:mod:`reviewer_app.batches.titles`). Problems with an argument are raised worded by the parameter's name
(``Problem.argument("on_leak", ...)``); the CLI names it by its flag and the Admin page by its widget. Finding,
listing and opening batches once loaded is :mod:`reviewer_app.batches.catalog`.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from reviewer_app.batches.audience import batch_audience
from reviewer_app.batches.audience import reviewer_ids as audience_reviewer_ids
from reviewer_app.batches.checked_batch import CheckedBatch, check_batch_files
from reviewer_app.batches.content_hash import content_hash, quick_content_hash
from reviewer_app.batches.follow_up import DEFAULT_ANCHOR_SHARE, Baseline, read_baseline
from reviewer_app.batches.images import store_images
from reviewer_app.batches.load_rows import LoadRows
from reviewer_app.batches.load_summary import Leak, LoadSummary
from reviewer_app.batches.rubric_file import load_rubric, parse_rubric_text
from reviewer_app.batches.titles import find_name_leaks
from reviewer_app.domain.enums import BatchStatus, Mode, OnLeak, PairwiseChoice
from reviewer_app.domain.keyed_random import new_secret, secret_bytes
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import BatchValidationError, ConflictError, IdentityLeakError, Problem
from reviewer_app.webhooks import emit
from storage.engine import read_session, write_session
from storage.models import Batch, utcnow
from storage.repositories.batches import admin as batch_admin_repo
from storage.repositories.batches import batches as repo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _RubricInput:
    rubric: Rubric
    text: str  # stored with the batch, and part of the content hash
    source: str  # how problems name the rubric file


def load_batch(
    engine: Engine,
    paths: list[Path],
    rubric_path: Path | None = None,
    *,
    name: str,
    on_leak: OnLeak | str = OnLeak.MASK,
    rubric_text: str | None = None,
    progress: bool = False,
    follow_up: str | None = None,
    anchor_share: float = DEFAULT_ANCHOR_SHARE,
    public_secret: str | None = None,
    open_now: bool = False,
    reviewers: Sequence[str] = (),
) -> LoadSummary:
    """Check batch files and a rubric, then write the batch atomically; a second load of the same content
    is a no-op.

    The batch is loaded closed, so that nobody claims an item before the admin has chosen its reviewers or
    made a plan (``assign``); ``open_now`` opens it at once. ``reviewers`` names the batch's own reviewers
    (:mod:`reviewer_app.batches.audience`: the only people it is shown to; none: every reviewer); an unknown
    name is refused before anything is read.

    The batch's secret (behind everything reviewers see: ``domain.keyed_random``) is drawn fresh from
    :mod:`secrets`. Only the demo passes ``public_secret``, a secret everyone can know, so that its batches
    look the same in every demo; no command or page takes one.

    ``follow_up`` names a baseline batch: the new batch then takes the baseline's rubric (a rubric given as
    well must be the same) and its samples, refuses records of samples the baseline lacks, and shows
    ``anchor_share`` of each scenario's samples' baseline outputs again as anchor items (see
    :func:`pick_anchor_samples`); anchors count for no model's score.

    The rubric is read from ``rubric_path``, or taken from ``rubric_text`` (an upload) with ``rubric_path``
    only naming it in messages. ``on_leak`` is ``mask`` (default: outputs that name a model are reviewed with
    the names replaced by "[model name]"), ``flag`` (reviewed as written), ``exclude`` or ``fail``. Raises
    :class:`BatchValidationError` (an argument problem is located by the parameter's name: ``paths``,
    ``name``, ``on_leak``, ``rubric``), :class:`RubricError`, :class:`IdentityLeakError`
    (``on_leak="fail"``) or :class:`ConflictError` (the same content loaded by another load at the same
    moment) with nothing written.
    """
    # Check: the arguments, the rubric, the files against themselves and against the rubric.
    policy = _check_arguments(paths, name, on_leak, rubric_path, rubric_text, follow_up, anchor_share)
    with read_session(engine) as session:
        reviewer_ids = audience_reviewer_ids(session, reviewers)
    base = None if follow_up is None else read_baseline(engine, follow_up, anchor_share, rubric_path, rubric_text)
    rubric_in = (
        _read_rubric(rubric_path, rubric_text)
        if base is None
        else _RubricInput(base.rubric, base.rubric_text, f"the rubric of batch {base.name!r}")
    )
    # A follow-up's content is its files, its baseline and its anchor share; an ordinary batch hashes as before.
    hashed = rubric_in.text if base is None else f"{rubric_in.text}\x00follow-up:{base.content_hash}:{anchor_share!r}"
    digest, images_possible = quick_content_hash(paths, hashed)
    if digest is not None and not images_possible:  # recognised before parsing: a reload is instant
        loaded = _already_loaded(engine, digest)
        if loaded is not None:
            return loaded
    with check_batch_files(paths, progress=progress) as checked:  # the checked records wait in a temporary file
        if images_possible:  # the images are part of the content: changed image bytes make a new batch
            digest = content_hash(paths, hashed, checked.image_digests())
            loaded = None if digest is None else _already_loaded(engine, digest)
            if loaded is not None:
                return loaded
        _check_against_rubric(checked, rubric_in.rubric, rubric_in.source, gold=base is None)
        seed = _batch_seed(rubric_in.rubric)
        secret = public_secret or new_secret()  # behind what reviewers see (labels, sides, orders): not the seed
        if base is not None:
            base.check(checked)
            base.pick(checked, secret_bytes(secret))
        checked.forget_samples()  # the write needs none of the per-sample keys: not kept beside its own
        assert digest is not None  # every file was readable, or check_batch_files raised
        _check_name_free(engine, name)

        # Images are copied in by content hash (harmless if the write then fails); then the write: one transaction.
        images = store_images(checked.all_images())
        rows = LoadRows(checked, rubric_in.rubric, policy, progress=progress, base=base)
        new = _new_batch(
            rubric_in,
            name=name,
            digest=digest,
            paths=paths,
            models=checked.models,
            rows=rows,
            seed=seed,
            secret=secret,
            base=base,
            open_now=open_now,
            reviewer_ids=reviewer_ids,
        )
        batch_id, items = _write_batch(engine, new, name, digest, rows)
        # Names are never refused: the summary warns, and reviewers see neutral titles (services.titles).
        shown_models = sorted({*checked.models, *(base.models if base is not None else [])})
        name_leaks = find_name_leaks(name, checked.scenarios, shown_models, rubric_in.rubric.leak_words)
        if name_leaks:  # the summary says so in its own words: logged for operators, not printed over it
            log.info(
                "batch %r (id %d): names that name a model are shown to reviewers under neutral titles: %s",
                name,
                batch_id,
                ", ".join([*(["the batch's name"] if name_leaks.batch else []), *map(repr, name_leaks.scenarios)]),
            )
        log.info(
            "loaded batch %r (id %d): %d samples, %d outputs from %d models, %d items, %d images, %d leaks (%s)",
            name,
            batch_id,
            sum(checked.scenarios.values()),
            checked.outputs,
            len(checked.models),
            items,
            len(images),
            len(rows.leaks),
            policy,
        )
        emit(
            engine,
            "load.finished",
            {"batch": name, "batch_id": batch_id, "mode": str(rubric_in.rubric.mode), "scenarios": checked.scenarios,
             "models": sorted(checked.models), "outputs": checked.outputs, "items": items, "baseline":
             None if base is None else base.name},
            dedup_key=f"load:{batch_id}:{digest}",
            batch_id=batch_id,
        )  # fmt: skip
        return LoadSummary(
            batch_name=name,
            batch_id=batch_id,
            already_loaded=False,
            mode=rubric_in.rubric.mode,
            scenarios=checked.scenarios,
            models=checked.models,
            outputs=checked.outputs,
            items=items,
            images=len(images),
            leaks=rows.leaks,
            excluded=rows.excluded,
            seed=new.batch.seed,
            on_leak=policy,
            per_model=_outputs_per_model(engine, batch_id),
            name_leaks=name_leaks,
            baseline=None if base is None else base.name,
            anchor_share=anchor_share if base is not None else 0.0,
            anchor_samples=0 if base is None else base.anchor_samples,
            anchor_items=0 if base is None else len(base.anchors),
            generated=rows.generation.runs() is not None,
            checks={name: (p, n) for name, (p, n) in rows.check_counts.items()},
            audience=batch_audience(engine, name),
            adaptive_share=(
                rubric_in.rubric.allocation.uniform_share if rubric_in.rubric.allocation.adaptive else None
            ),
        )


def _outputs_per_model(engine: Engine, batch_id: int) -> dict[str, int]:
    """Counted from the rows written, so a lopsided batch (one model's file dropped) shows in the summary."""
    with read_session(engine) as session:
        return batch_admin_repo.outputs_per_model(session, [batch_id]).get(batch_id, {})


def _check_arguments(
    paths: list[Path],
    name: str,
    on_leak: OnLeak | str,
    rubric_path: Path | None,
    rubric_text: str | None,
    follow_up: str | None,
    anchor_share: float,
) -> OnLeak:
    problems: list[Problem] = []
    if not paths:
        problems.append(Problem.argument("paths", "no batch files given"))
    if not name.strip():
        problems.append(Problem.argument("name", "a batch needs a non-empty name"))
    try:
        policy = OnLeak(on_leak)
    except ValueError:
        choices = [str(p) for p in OnLeak]
        problems.append(
            Problem.argument("on_leak", f"must be {', '.join(choices[:-1])} or {choices[-1]}, not {on_leak!r}")
        )
        policy = OnLeak.MASK
    if rubric_path is None and rubric_text is None and follow_up is None:
        problems.append(Problem.argument("rubric", "a rubric file is required"))
    if not (isinstance(anchor_share, int | float) and 0 <= anchor_share <= 1):
        problems.append(
            Problem.argument("anchor_share", f"must be a share from 0 to 1 (e.g. 0.2), not {anchor_share!r}")
        )
    if problems:
        raise BatchValidationError(problems)
    return policy


def _read_rubric(rubric_path: Path | None, rubric_text: str | None) -> _RubricInput:
    if rubric_text is None:
        assert rubric_path is not None  # _check_arguments asked for one of the two
        rubric, text = load_rubric(rubric_path)
        return _RubricInput(rubric, text, str(rubric_path))
    source = str(rubric_path or "rubric.toml")
    return _RubricInput(parse_rubric_text(rubric_text, source=source), rubric_text, source)


def _already_loaded(engine: Engine, digest: str) -> LoadSummary | None:
    with read_session(engine) as session:
        same = repo.get_batch_by_hash(session, digest)
    if same is None:
        return None
    assert same.id is not None
    log.info("batch content already loaded as %r (id %d); nothing written", same.name, same.id)
    return LoadSummary(batch_name=same.name, batch_id=same.id, already_loaded=True, mode=Mode(same.mode))


def _check_name_free(engine: Engine, name: str) -> None:
    with read_session(engine) as session:
        taken = repo.get_batch_by_name(session, name) is not None
    if taken:
        raise BatchValidationError(
            [
                Problem.argument(
                    "name", f"a batch named {name!r} already exists with different content; choose another name"
                )
            ]
        )


def _leak_error(leaks: list[Leak]) -> IdentityLeakError:
    shown = "; ".join(
        f"{lk.file}{':' + str(lk.line) if lk.line else ''} sample {lk.sample_id} / {lk.model}: {', '.join(lk.words)}"
        for lk in leaks[:10]
    )
    return IdentityLeakError(
        f"{len(leaks)} output(s) name a model or vendor ({shown}"
        f"{' ...' if len(leaks) > 10 else ''}); nothing was written. Edit those outputs, "
        "or load with --on-leak mask, flag or exclude."
    )


def _batch_seed(rubric: Rubric) -> int:
    return rubric.seed if rubric.seed is not None else random.SystemRandom().randrange(2**31)


def _new_batch(
    rubric_in: _RubricInput,
    *,
    name: str,
    digest: str,
    paths: list[Path],
    models: list[str],
    rows: LoadRows,
    seed: int,
    secret: str,
    base: Baseline | None,
    open_now: bool,
    reviewer_ids: list[int],
) -> repo.NewBatch:
    rubric = rubric_in.rubric
    gold = [
        (
            g.sample_id,
            g.models if rubric.mode == Mode.RATING else tuple(sorted(g.models)),
            json.dumps(_canonical_gold(g.models, g.expected), sort_keys=True),
        )
        for g in rubric.gold
        if base is None  # the baseline's gold answers are about the baseline's models' outputs
    ]
    batch = Batch(
        name=name,
        content_hash=digest,
        mode=rubric.mode,
        overlap=rubric.overlap,
        seed=seed,
        secret=secret,
        rubric_toml=rubric_in.text,
        rubric_json=rubric.to_json(),
        source_files=json.dumps([str(p) for p in paths]),
        baseline_batch_id=None if base is None else base.batch_id,
        anchor_share=None if base is None else base.share,
        status=BatchStatus.OPEN if open_now else BatchStatus.CLOSED,
        opened_at=utcnow() if open_now else None,
    )
    return repo.NewBatch(
        batch=batch,
        scenarios=sorted(rows.checked.scenarios),
        models=models,
        chunks=rows.chunks(),
        pairwise=rubric.mode == Mode.PAIRWISE,
        gold=gold,
        anchors=[] if base is None else base.anchors,
        reviewer_ids=reviewer_ids,
        hold_back=rubric.allocation.adaptive,
    )


def _write_batch(engine: Engine, new: repo.NewBatch, name: str, digest: str, rows: LoadRows) -> tuple[int, int]:
    """Insert the batch; returns its id and its number of review items. Raises :class:`IdentityLeakError`
    (``--on-leak fail``), rolling the transaction back, once the scan of the rows found a leak.

    A load of the same content (or under the same name) that committed since the checks is refused with
    the same message on both databases: SQLite's write lock makes this load wait and then see it here;
    PostgreSQL makes it wait on the unique index and then raise, and the message is worded after the
    rollback."""
    try:
        with write_session(engine) as session:
            _refuse_if_loaded_meanwhile(session, name, digest)
            batch_id = repo.insert_batch(session, new)
            if rows.leaks and rows.policy is OnLeak.FAIL:
                raise _leak_error(rows.leaks)
            generation = rows.generation.to_json()
            if generation is not None:
                repo.set_generation(session, batch_id, generation)
            return batch_id, repo.batch_counts(session, batch_id).items
    except IntegrityError:
        with read_session(engine) as session:
            _refuse_if_loaded_meanwhile(session, name, digest)
        raise


def _refuse_if_loaded_meanwhile(session: Session, name: str, digest: str) -> None:
    same = repo.get_batch_by_hash(session, digest)
    if same is not None:
        raise ConflictError(
            f"this content was loaded as batch {same.name!r} (id {same.id}) by another load at the same moment; "
            "nothing was written by this one (see `blind-review list-batches`)"
        )
    if repo.get_batch_by_name(session, name) is not None:
        raise BatchValidationError(
            [
                Problem.argument(
                    "name", f"a batch named {name!r} was loaded by another load at the same moment; choose another name"
                )
            ]
        )


def _canonical_gold(models: tuple[str, ...], expected: dict[str, str]) -> dict[str, str]:
    """Pairwise gold answers are written for ``models`` in the order given; items store pairs sorted by name,
    so a gold answer for (b, a) is flipped to the canonical (a, b). Stored as a/b/tie/both_bad."""
    if len(models) < 2:
        return expected
    flip = list(models) != sorted(models)
    shown_to_canonical: dict[str, str] = {PairwiseChoice.LEFT: "a", PairwiseChoice.RIGHT: "b"}
    out = {}
    for dim, value in expected.items():
        canon = shown_to_canonical.get(value, value)
        if flip and canon in ("a", "b"):
            canon = "b" if canon == "a" else "a"
        out[dim] = canon
    return out


def _check_against_rubric(checked: CheckedBatch, rubric: Rubric, source: str, *, gold: bool = True) -> None:
    problems: list[Problem] = []
    scenarios = set(checked.scenarios)
    for name in sorted(set(rubric.scenario_dimensions) | set(rubric.scenario_weights) | set(rubric.scenario_checks)):
        if name not in scenarios:
            problems.append(
                Problem(
                    source,
                    None,
                    f"scenarios.{name}",
                    f"no sample of the batch is in scenario {name!r} (the batch has: {', '.join(sorted(scenarios))})",
                )
            )
    for g in rubric.gold if gold else ():
        answered = checked.models_of(g.sample_id)
        if answered is None:
            problems.append(Problem(source, None, "gold", f"sample {g.sample_id!r} is not in the batch"))
            continue
        for m in g.models:
            if m not in answered:
                problems.append(Problem(source, None, "gold", f"sample {g.sample_id!r} has no output of model {m!r}"))
    if rubric.mode == Mode.PAIRWISE and len(checked.models) < 2:
        problems.append(Problem(source, None, "mode", "pairwise mode needs outputs of at least two models"))
    if problems:
        raise BatchValidationError(problems)

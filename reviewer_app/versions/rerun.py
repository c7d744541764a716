"""``blind-review rerun``: ask a new or updated model the samples of an earlier batch, with that batch's
generation parameters, into a file ``load-batch --follow-up`` takes.

The baseline must have been made by ``generate`` (``load-batch`` then kept its parameters on the batch:
:mod:`reviewer_app.generation.recorded`). Its samples are written back out, as stored, to a samples file
beside ``--out`` (``OUT.samples/samples.jsonl``, with the stored images in ``OUT.samples/images``), and
``generate`` runs on it with the recorded temperature, top_p, max_tokens, seed and repeats: so a rerun resumes
like ``generate`` (the same command skips what is written and retries what failed). When the baseline's
models were run with different parameters, ``params_of`` names the model whose to take (by default the one
with the new model's name, if there is one).

Images are sent as the baseline stored them: an image larger than the display size
(``ingest.DISPLAY_MAX_SIDE``) was stored downscaled, and the new model gets that copy.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.batches.images import image_path
from reviewer_app.errors import GenerationError
from reviewer_app.generation.recorded import ModelRun, runs_from_json
from storage.engine import read_session
from storage.repositories.batches import batches as repo

if TYPE_CHECKING:
    from reviewer_app.generation.runner import GenerationReport
    from reviewer_app.generation.specs import ModelSpec, RetryPolicy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerunPlan:
    """What a rerun asks: the baseline's run it copies, and the samples file written for it."""

    baseline: str
    run: ModelRun
    samples_path: Path
    samples: int


def plan_rerun(
    engine: Engine, baseline: str, out: Path, models: list[str], *, params_of: str | None = None
) -> RerunPlan:
    """Choose the baseline's parameters and write its samples out for ``generate``. Raises NotFoundError
    (no such batch) or GenerationError (no recorded parameters, or several and no way to choose)."""
    batch = find_batch(engine, baseline)
    assert batch.id is not None
    runs = runs_from_json(batch.generation_json)
    if not runs:
        raise GenerationError(
            f"batch {batch.name!r} has no recorded generation parameters: its outputs were not all made by one "
            "`blind-review generate` run (or it was loaded before they were kept); run `generate` with the "
            "parameters you want instead"
        )
    run = _choose(batch.name, runs, models, params_of)
    with read_session(engine) as session:
        samples = repo.baseline_samples(session, batch.id)
    folder = out.with_name(out.name + ".samples")
    images = folder / "images"
    records = []
    for key, sample in samples.items():
        record: dict[str, object] = {
            "sample_id": key,
            "scenario": sample.scenario,
            "prompt": json.loads(sample.prompt_json),
        }
        if sample.reference is not None:
            record["reference"] = sample.reference
        if sample.criteria is not None:
            record["criteria"] = sample.criteria
        if sample.checks_json is not None:
            record["checks"] = json.loads(sample.checks_json)
        names = json.loads(sample.images_json)
        if names:
            images.mkdir(parents=True, exist_ok=True)
            for name in names:
                target = images / name
                if not target.exists():
                    shutil.copyfile(image_path(name), target)
            record["images"] = [f"images/{n}" for n in names]
        records.append(record)
    folder.mkdir(parents=True, exist_ok=True)
    samples_path = folder / "samples.jsonl"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if not samples_path.exists() or samples_path.read_text(encoding="utf-8") != text:
        samples_path.write_text(text, encoding="utf-8")  # unchanged on a resume: the same file, the same hash
    return RerunPlan(batch.name, run, samples_path, len(records))


def _choose(name: str, runs: dict[str, ModelRun], models: list[str], params_of: str | None) -> ModelRun:
    def same(run: ModelRun) -> tuple[object, ...]:
        return (run.temperature, run.top_p, run.max_tokens, run.seed, run.repeats)

    if params_of is not None:
        if params_of not in runs:
            raise GenerationError(
                f"--params-of {params_of!r}: batch {name!r} has no model of that name (it has {', '.join(runs)})"
            )
        return runs[params_of]
    distinct = {same(r) for r in runs.values()}
    if len(distinct) == 1:
        return next(iter(runs.values()))
    named = [runs[m] for m in models if m in runs]
    if len({same(r) for r in named}) == 1 and len(named) == len(models):
        return named[0]
    raise GenerationError(
        f"batch {name!r} was generated with different parameters per model ({', '.join(runs)}); "
        "say whose to use with --params-of MODEL"
    )


def rerun_batch(
    engine: Engine,
    baseline: str,
    out: Path,
    models: list[ModelSpec],
    *,
    params_of: str | None = None,
    concurrency: int = 8,
    policy: RetryPolicy | None = None,
    progress: bool = True,
) -> tuple[RerunPlan, GenerationReport]:
    """Generate ``models``' answers to the samples of batch ``baseline`` with its recorded parameters into
    ``out`` (resumable as ``generate`` is), ready for ``load-batch out --follow-up baseline``. Raises what
    :func:`plan_rerun` and ``generate_batch`` raise."""
    from reviewer_app.generation.runner import generate_batch
    from reviewer_app.generation.specs import SamplingParams

    plan = plan_rerun(engine, baseline, out, [m.name for m in models], params_of=params_of)
    run = plan.run
    params = SamplingParams(run.temperature, run.top_p, run.max_tokens, run.seed)
    log.info("rerun of %r: %d samples x %d repeat(s), %s", plan.baseline, plan.samples, run.repeats, run.as_dict())
    report = generate_batch(
        plan.samples_path,
        out,
        models,
        params=params,
        repeats=run.repeats,
        concurrency=concurrency,
        policy=policy,
        progress=progress,
    )
    return plan, report

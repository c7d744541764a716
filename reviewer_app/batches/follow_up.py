"""Follow-up batches (``load-batch --follow-up BASELINE``): a new round on the baseline's samples, with anchors.

A follow-up takes its baseline's rubric and samples: its records must answer samples the baseline has, with
the same scenario, prompt, reference and criteria (every other record is refused at its file and line), and
its samples show the baseline's images. A share of each scenario's samples (``--anchor-share``, default 0.2)
is shown again with the baseline's own outputs, as *anchor items*: review items of the follow-up whose outputs
are the baseline's rows themselves (same text, same masking, same images), mixed into the pool like any other
item and drawn for reviewers the same way. The panel's scores of them now, against the baseline round's,
measure how the panel moved (``reviewer_app.versions.compare``); they count for no model's score, and the
batch's own report leaves them out. Pairwise: an anchor item is one of the baseline's pairs shown again.

Which samples are anchors (:func:`pick_anchor_samples`): within each scenario, the follow-up's samples are
ordered by a keyed hash of the scenario and the sample id under the batch's secret, and the first
``round(share x samples)`` are taken (at least one when the share is above 0), so each scenario gets its
share, the choice is fixed by the secret stored with the batch (not by its seed, which a reviewer could
guess), and it does not depend on the files' order.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.checked_batch import CheckedBatch
from reviewer_app.batches.images import ImageRef
from reviewer_app.batches.rubric_file import load_rubric, parse_rubric_text
from reviewer_app.domain.keyed_random import keyed_digest
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import BatchValidationError, Problem
from reviewer_app.settings import data_dir
from storage.engine import read_session
from storage.repositories.batches import batches as repo

DEFAULT_ANCHOR_SHARE = 0.2


def pick_anchor_samples(samples: Mapping[str, Sequence[str]], share: float, key: bytes) -> dict[str, list[str]]:
    """Scenario -> its anchor samples (sorted), ``share`` of each scenario's ``samples`` (see the module
    docstring): round half up, at least one per scenario when ``share`` > 0, none when it is 0.

    Drawn with the follow-up's secret ``key``, not its seed: a reviewer who could compute which samples carry
    anchors would know which prompts show an earlier round's answers again."""
    picked: dict[str, list[str]] = {}
    for scenario, keys in sorted(samples.items()):
        if share <= 0 or not keys:
            continue
        n = min(len(keys), max(1, math.floor(share * len(keys) + 0.5)))
        order = sorted(keys, key=lambda k: keyed_digest(key, "anchor", scenario, k))
        picked[scenario] = sorted(order[:n])
    return picked


@dataclass
class Baseline:
    """The baseline of a follow-up being loaded: what the checks, the anchors and the write need of it."""

    engine: Engine
    name: str
    batch_id: int
    content_hash: str
    share: float
    rubric: Rubric
    rubric_text: str
    models: list[str]  # the baseline's models: anchors show their outputs
    samples: dict[str, repo.BaselineSample]
    anchors: list[tuple[str, int, int | None]] = field(default_factory=list)  # filled by pick()
    anchor_samples: int = 0

    def check(self, checked: CheckedBatch) -> None:
        """Refuse records of samples the baseline lacks, or that answer another prompt; BatchValidationError."""
        known = {
            k: (
                s.scenario,
                json.loads(s.prompt_json),
                s.reference,
                s.criteria,
                None if s.checks_json is None else json.loads(s.checks_json),
            )
            for k, s in self.samples.items()
        }
        problems = checked.baseline_problems(known, self.name)
        if problems:
            raise BatchValidationError(problems)

    def pick(self, checked: CheckedBatch, key: bytes) -> None:
        """Choose the anchor samples among the follow-up's (with its secret ``key``) and take the baseline's
        items on them."""
        chosen = pick_anchor_samples(checked.sample_keys(), self.share, key)
        keys = {k for ks in chosen.values() for k in ks}
        self.anchor_samples = len(keys)
        if not keys:
            return
        with read_session(self.engine) as session:
            items = repo.anchorable_items(session, self.batch_id)
        self.anchors = [(key, a, b) for key, a, b, _model in items if key in keys]

    def images_for(self, sample_id: str, images: list[ImageRef], file: str, line: int | None) -> str:
        """The baseline's images of a sample (JSON, as stored); BatchValidationError if the record names others."""
        stored = self.samples[sample_id].images_json
        if images and not _same_images(images, json.loads(stored)):
            raise BatchValidationError(
                [
                    Problem(
                        file,
                        line,
                        "images",
                        f"sample {sample_id!r} shows other images than in the baseline batch {self.name!r}; a "
                        "follow-up answers the same samples (leave images out to use the baseline's)",
                    )
                ]
            )
        return stored


def _same_images(images: list[ImageRef], stored: list[str]) -> bool:
    """Whether a record's images are the baseline sample's: the same files, or the display-size copies the
    baseline stored of them (what ``rerun`` sends a new model when an image was larger than the display)."""
    if len(images) != len(stored):
        return False
    for image, name in zip(images, stored, strict=True):
        if image.stored_name == name:
            continue
        kept = data_dir() / "images" / name
        if not kept.is_file() or hashlib.sha256(kept.read_bytes()).hexdigest() != image.digest:
            return False
    return True


def read_baseline(
    engine: Engine, name: str, share: float, rubric_path: Path | None, rubric_text: str | None
) -> Baseline:
    """The baseline batch ``name`` (an id works too) for a follow-up; BatchValidationError (argument
    ``follow_up``) when there is none, (argument ``rubric``) when a rubric is given and is not the baseline's."""
    with read_session(engine) as session:
        row = repo.get_batch_by_name(session, name)
        if row is None and name.isdigit():
            row = repo.get_batch(session, int(name))
        if row is None:
            known = ", ".join(b.name for b in repo.list_batches(session)) or "none yet"
            raise BatchValidationError(
                [Problem.argument("follow_up", f"no batch named {name!r} to follow up (known batches: {known})")]
            )
        assert row.id is not None
        models = repo.model_names(session, row.id)
        samples = repo.baseline_samples(session, row.id)
    rubric = Rubric.from_json(row.rubric_json)
    if rubric_path is not None or rubric_text is not None:
        if rubric_text is not None:
            given = parse_rubric_text(rubric_text, source=str(rubric_path or "rubric.toml"))
        else:
            assert rubric_path is not None
            given = load_rubric(rubric_path)[0]
        if given.to_json() != rubric.to_json():
            raise BatchValidationError(
                [
                    Problem.argument(
                        "rubric",
                        f"is not the rubric of the baseline batch {row.name!r}; a follow-up is reviewed under its "
                        "baseline's rubric (leave the rubric out to take it)",
                    )
                ]
            )
    return Baseline(
        engine=engine,
        name=row.name,
        batch_id=row.id,
        content_hash=row.content_hash,
        share=float(share),
        rubric=rubric,
        rubric_text=row.rubric_toml,
        models=models,
        samples=samples,
    )

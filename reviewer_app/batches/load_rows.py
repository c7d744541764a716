"""The rows of a load's write: each checked record taken back, scanned for model names, checked, chunked.

Once every file was checked, :func:`reviewer_app.batches.loading.load_batch` writes the batch in one
transaction from :class:`LoadRows`, which takes the records back from the check's temporary file
(:func:`reviewer_app.batches.checked_batch.iter_records`) and hands the write samples and outputs a chunk at a
time, so that memory follows the largest record and the chunk, not the file. On the way each output is
scanned for model and vendor names (:mod:`reviewer_app.batches.leakscan`) and masked, excluded or refused as
``on_leak`` says, and goes through its automatic checks (:mod:`reviewer_app.domain.checks`). A module of its
own: what a row is made of is apart from the steps of the load around it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

from reviewer_app.batches.checked_batch import CheckedBatch, iter_records
from reviewer_app.batches.follow_up import Baseline
from reviewer_app.batches.leakscan import mask, scanner_for
from reviewer_app.batches.load_summary import Leak
from reviewer_app.domain.checks import Check, parse_checks, run_checks
from reviewer_app.domain.enums import OnLeak
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import BatchValidationError, Problem
from reviewer_app.generation.recorded import GenerationLog
from storage.repositories.batches import batches as repo

# A chunk of the write: this many outputs, or this many characters of text, whichever comes first.
CHUNK_OUTPUTS = 5_000
CHUNK_CHARS = 16_000_000


class LoadRows:
    """The rows of a checked batch, taken back from the check's temporary file and handed to the write a
    chunk at a time.

    Each output is scanned for model and vendor names on the way (the scan needs every model name of the
    batch, known only once the files were checked); ``leaks`` and ``excluded`` are complete once the chunks
    are. With ``--on-leak fail`` no row is handed on after the first leak, but the scan reads on, so the
    error lists every leak; the write then raises, and its transaction rolls back.

    Each output also goes through its automatic checks (its scenario's in the rubric and its sample's own,
    :mod:`domain.checks`), on the text as the model wrote it; a sample's check named like one of its
    scenario's is a problem raised once every row was read (the write then rolls back)."""

    def __init__(
        self, checked: CheckedBatch, rubric: Rubric, policy: OnLeak, *, progress: bool, base: Baseline | None = None
    ) -> None:
        self.checked = checked
        self.rubric = rubric
        self.policy = policy
        self.progress = progress
        self.base = base
        self.leaks: list[Leak] = []
        self.excluded = 0
        self.generation = GenerationLog()
        self.check_counts: dict[str, list[int]] = {}  # check name -> [passed, run]
        self._parsed: dict[int, tuple[list[dict[str, Any]], tuple[Check, ...], str]] = {}

    def _own_checks(self, checks: list[dict[str, Any]] | None) -> tuple[tuple[Check, ...], str | None]:
        """A sample's own checks, parsed, and as the JSON stored with it. ``iter_records`` hands every record
        with the same list the same list object, so each distinct list is parsed and encoded once."""
        if checks is None:
            return (), None
        known = self._parsed.get(id(checks))
        if known is None or known[0] is not checks:
            known = self._parsed[id(checks)] = (checks, parse_checks(checks), orjson.dumps(checks).decode())
        return known[1], known[2]

    def chunks(self) -> Iterator[repo.BatchChunk]:
        base = self.base
        # A follow-up shows the baseline's models' outputs too (anchors): an output naming one of them leaks.
        models = self.checked.models if base is None else sorted({*self.checked.models, *base.models})
        scanner = scanner_for(models, self.rubric.leak_words)
        exclude = self.policy is OnLeak.EXCLUDE
        masked = self.policy is OnLeak.MASK
        fail = self.policy is OnLeak.FAIL
        seen: set[str] = set()
        samples: list[dict[str, Any]] = []
        outputs: list[dict[str, Any]] = []
        chars = 0
        by_scenario = {
            name: parse_checks(list(defs), where=f"scenarios.{name}.checks")
            for name, defs in self.rubric.scenario_checks.items()
        }
        checks_of: dict[str, tuple[Check, ...]] = {}  # sample -> its checks, for the samples that have any
        check_problems: list[Problem] = []
        for rec in iter_records(self.checked, progress=self.progress):
            matches = scanner.find(rec.output)
            words: list[str] = []
            if matches:
                words = list(dict.fromkeys(m.word for m in matches))
                self.leaks.append(Leak(rec.sample_id, rec.model, rec.repeat, words, rec.file, rec.line, matches))
            self.generation.add(rec.model, rec.repeat, rec.metadata)
            if fail and self.leaks:
                continue  # nothing of this batch will be written
            if rec.sample_id not in seen:
                seen.add(rec.sample_id)
                own, checks_json = self._own_checks(rec.checks)
                clash = {c.name for c in own} & {c.name for c in by_scenario.get(rec.scenario, ())}
                if clash:
                    check_problems.append(
                        Problem(
                            rec.file,
                            rec.line,
                            "checks",
                            f"check name(s) {', '.join(map(repr, sorted(clash)))} of sample {rec.sample_id!r} are "
                            f"also checks the rubric gives scenario {rec.scenario!r}; give the sample's checks "
                            'other "name"s (or drop them from the sample)',
                        )
                    )
                # A clash fails the load once every row was read; meanwhile the sample keeps only the rubric's.
                every = (*by_scenario.get(rec.scenario, ()), *(() if clash else own))
                if every:
                    checks_of[rec.sample_id] = every
                prompt_json = _json(rec.prompt)
                chars += len(prompt_json)
                images_json = json.dumps([i.stored_name for i in rec.images])
                if base is not None:  # the baseline's images: anchors and new outputs answer the same sample
                    images_json = base.images_for(rec.sample_id, rec.images, rec.file, rec.line)
                samples.append(
                    {
                        "key": rec.sample_id,
                        "scenario": rec.scenario,
                        "prompt_json": prompt_json,
                        "reference": rec.reference,
                        "criteria": rec.criteria,
                        "images_json": images_json,
                        "checks_json": checks_json,
                    }
                )
            excluded = exclude and bool(matches)
            self.excluded += excluded
            shown = mask(rec.output, matches) if masked and matches else None
            chars += len(rec.output) + (len(shown) if shown is not None else 0)
            checks = checks_of.get(rec.sample_id)
            results = run_checks(checks, rec.output) if checks else None
            for check_name, passed, _ in results or ():
                counts = self.check_counts.setdefault(check_name, [0, 0])
                counts[0] += passed
                counts[1] += 1
            outputs.append(
                {
                    "sample_key": rec.sample_id,
                    "model": rec.model,
                    "repeat": rec.repeat,
                    "text": rec.output,
                    "metadata_json": _json(rec.metadata),
                    "leak_words": ", ".join(words),
                    "excluded": excluded,
                    "shown_text": shown,
                    "check_results": None if results is None else orjson.dumps(results).decode(),
                }
            )
            if len(outputs) >= CHUNK_OUTPUTS or chars >= CHUNK_CHARS:
                yield repo.BatchChunk(samples, outputs)
                samples, outputs, chars = [], [], 0
        if outputs:
            yield repo.BatchChunk(samples, outputs)
        if check_problems:
            raise BatchValidationError(check_problems)


def _json(value: object) -> str:
    """Compact JSON text (orjson: the load writes 100,000 of these)."""
    return orjson.dumps(value).decode()

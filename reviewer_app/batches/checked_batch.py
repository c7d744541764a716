r"""A batch's files, checked in one pass that keeps small keys only, and their records handed back for the write.

A load reads the files twice, a record at a time, and never holds them: :func:`check_batch_files` checks
every record (with the readers of :mod:`reviewer_app.batches.ingest`) and keeps small keys (ids, prompt
digests, where each output was first seen) for the checks across records; :func:`iter_records` then hands the
write the same records again. A 154 MB file had needed 1.2 GB when it was read, decoded and parsed whole.
:class:`CheckedBatch` is what the check keeps in between, and what the follow-up checks read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from tqdm import tqdm

from reviewer_app.batches.check_pass import CheckPass, Spill, checks_key, extras_digest, value_digest
from reviewer_app.batches.images import ImageRef
from reviewer_app.batches.ingest import check_alpaca, check_file
from reviewer_app.batches.records import OutputRecord
from reviewer_app.errors import BatchValidationError, Problem

PROGRESS_MIN_RECORDS = 5_000


@dataclass
class CheckedBatch:
    """What the check pass keeps of a batch in memory: counts and small keys per sample, never the texts,
    so that memory grows with the number of samples, not with the bytes of the files. The checked records
    themselves wait in a temporary file (:func:`iter_records` reads them back for the write); close the
    batch, or use it as a context manager, to delete it.

    ``images`` maps the position of a record (in :func:`iter_records` order) to its checked images, for the
    records that have any."""

    outputs: int
    models: list[str]
    scenarios: dict[str, int]  # scenario -> samples, in order of first appearance
    images: dict[int, list[ImageRef]]
    _samples: dict[str, tuple[str, bytes, bytes | None, dict[Any, int]]]
    _spill: Spill
    _files: list[str] = field(default_factory=list)  # where-seen keys index this (see ``CheckPass``)

    def models_of(self, sample_id: str) -> set[str] | None:
        """The models with an output for ``sample_id``; None if the batch has no such sample."""
        sample = self._samples.get(sample_id)
        return None if sample is None else {m if type(m) is str else m[0] for m in sample[3]}

    def sample_keys(self) -> dict[str, list[str]]:
        """Scenario -> the batch's sample ids in it, sorted."""
        out: dict[str, list[str]] = {}
        for key, sample in self._samples.items():
            out.setdefault(sample[0], []).append(key)
        return {scenario: sorted(keys) for scenario, keys in out.items()}

    def baseline_problems(
        self, baseline: Mapping[str, tuple[str, Any, str | None, str | None, Any]], name: str
    ) -> list[Problem]:
        """Problems of a follow-up batch against its baseline ``name``: every record of a sample the baseline
        lacks (one problem per record, at its file and line), and every sample whose scenario, prompt,
        reference, criteria or checks differ from the baseline's (at its first record). ``baseline`` maps the
        baseline's sample ids to (scenario, prompt, reference, criteria, checks)."""
        problems: list[Problem] = []
        for key, (scenario, digest, extras, seen) in self._samples.items():
            known = baseline.get(key)
            wheres = sorted(seen.values(), key=lambda w: (w & 0xFFFF, w >> 16))
            if known is None:
                for where in wheres:
                    file, line = self._where(where)
                    problems.append(
                        Problem(
                            file,
                            line,
                            "sample_id",
                            f"{key!r} is not a sample of the baseline batch {name!r}; a follow-up answers the "
                            "baseline's samples only (take them from `blind-review rerun`, or leave this record out)",
                        )
                    )
                continue
            file, line = self._where(wheres[0])
            b_scenario, b_prompt, b_reference, b_criteria, b_checks = known
            b_extras = extras_digest(b_reference, b_criteria, None if b_checks is None else checks_key(b_checks))
            if scenario != b_scenario:
                what, field_name = f"is in scenario {scenario!r} here but {b_scenario!r} in the baseline", "scenario"
            elif digest != value_digest(b_prompt):
                what, field_name = "has a different prompt from the baseline's", "prompt"
            elif extras != b_extras:
                what, field_name = "has a different reference, criteria or checks from the baseline's", "reference"
            else:
                continue
            problems.append(
                Problem(
                    file,
                    line,
                    field_name,
                    f"sample {key!r} {what} {name!r}; a follow-up must answer the same samples",
                )
            )
        return sorted(problems, key=lambda p: (p.file, p.line or 0))

    def _where(self, where_seen: int) -> tuple[str, int | None]:
        return self._files[where_seen & 0xFFFF], (where_seen >> 16) or None

    def forget_samples(self) -> None:
        """Drop the per-sample keys (:meth:`models_of` then knows no sample): the write needs none of them."""
        self._samples = {}

    def image_digests(self) -> set[str]:
        return {img.digest for refs in self.images.values() for img in refs}

    def all_images(self) -> Iterator[ImageRef]:
        for refs in self.images.values():
            yield from refs

    def close(self) -> None:
        self._spill.close()

    def __enter__(self) -> CheckedBatch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def read_batch_files(paths: list[Path], *, progress: bool = False) -> list[OutputRecord]:
    """Parse and check every file; raise :class:`BatchValidationError` listing all problems found.

    All records in memory at once: for small batches and tests. A load uses :func:`check_batch_files` and
    :func:`iter_records`, which never hold more than a block of records."""
    with check_batch_files(paths, progress=progress) as checked:
        return list(iter_records(checked))


def check_batch_files(paths: list[Path], *, progress: bool = False) -> CheckedBatch:
    """Parse and check every file, one record at a time, keeping small keys only; raise
    :class:`BatchValidationError` listing every problem found (as ``file:line: field: what is wrong``).

    The problems come in the order they always have: each file's parse and field problems in the order the
    files were given (AlpacaEval lists after the others, whose records they follow), then outputs over the
    size limit, then records that contradict each other (the same output twice, one sample with two
    prompts)."""
    if not paths:
        raise BatchValidationError([Problem("(command line)", None, None, "no batch files given")])
    check = CheckPass()
    try:
        alpaca: list[tuple[Path, list[Any]]] = []
        for path in paths:
            parsed = check_file(path, check, progress=progress)
            if parsed is not None:
                alpaca.append((path, parsed))
        if alpaca:
            check_alpaca(alpaca, check)
        problems = check.problems + check.size_problems + check.consistency_problems
        if problems:
            raise BatchValidationError(problems)
    except BaseException:
        check.spill.close()
        raise
    return CheckedBatch(
        outputs=check.outputs,
        models=check.models(),
        scenarios=check.per_scenario,
        images=check.images,
        _samples=check.samples,
        _spill=check.spill,
        _files=check.files,
    )


def iter_records(checked: CheckedBatch, *, progress: bool = False) -> Iterator[OutputRecord]:
    """The checked records, in the order they were checked (AlpacaEval lists last), one at a time."""
    records: Iterable[tuple[Any, ...]] = checked._spill.records()
    if progress and checked.outputs > PROGRESS_MIN_RECORDS:
        records = tqdm(records, desc="writing", unit=" outputs", total=checked.outputs)
    images = checked.images
    lists: dict[str, list[dict[str, Any]]] = {}  # a list of checks is shared by every record that has it
    for index, record in enumerate(records):
        sample_id, scenario, prompt, model, repeat, output, ref, crit, meta, file, line, key = record
        checks = None if key is None else lists.get(key)
        if key is not None and checks is None:
            checks = lists[key] = orjson.loads(key)
        yield OutputRecord(
            sample_id=sample_id,
            scenario=scenario,
            prompt=prompt,
            model=model,
            output=output,
            file=file,
            line=line,
            reference=ref,
            criteria=crit,
            images=images.get(index, []),
            metadata=meta,
            repeat=repeat,
            checks=checks,
        )

"""The check pass's running state: what a load keeps of a batch while its files are read.

Every record the readers (:mod:`reviewer_app.batches.ingest`) accept is taken in by a :class:`CheckPass`,
set aside in a temporary file (:class:`Spill`) for the write, and leaves behind only small keys per sample:
its scenario, digests of its prompt and of its reference, criteria and checks, and where each of its outputs
was first seen. The checks across records are made with those keys as the records go by: an output over the
size limit, the same output twice, one sample with two prompts (or scenarios, or references). A module of its
own because the readers fill it and :func:`reviewer_app.batches.checked_batch.check_batch_files`, which runs
the readers, keeps what it found.
"""

from __future__ import annotations

import hashlib
import marshal
import tempfile
from collections.abc import Iterator
from typing import Any

import orjson

from reviewer_app.batches.images import ImageRef
from reviewer_app.batches.records import OutputRecord
from reviewer_app.errors import Problem
from reviewer_app.settings import max_output_bytes


class Spill:
    """Checked records, written as they are checked and read back once for the write: a temporary file of
    ``marshal`` blocks. Reading them back costs about what parsing the JSON again would (both mostly make the
    strings), but the batch files are then read only once: a file changed meanwhile cannot slip in
    unchecked, and CSV and AlpacaEval records come back like JSONL ones."""

    BLOCK_RECORDS = 1_000
    BLOCK_CHARS = 8_000_000

    def __init__(self) -> None:
        self._fh = tempfile.TemporaryFile(prefix="blind-review-load-")
        self._block: list[tuple[Any, ...]] = []
        self._chars = 0

    def add(self, record: tuple[Any, ...], chars: int) -> None:
        self._block.append(record)
        self._chars += chars
        if len(self._block) >= self.BLOCK_RECORDS or self._chars >= self.BLOCK_CHARS:
            self._flush()

    def _flush(self) -> None:
        if self._block:
            data = marshal.dumps(self._block)
            self._fh.write(len(data).to_bytes(8, "little") + data)
            self._block, self._chars = [], 0

    def records(self) -> Iterator[tuple[Any, ...]]:
        # Each block is read whole and then unmarshalled: marshal.load on the file reads it in small pieces.
        self._flush()
        self._fh.seek(0)
        while size := self._fh.read(8):
            yield from marshal.loads(self._fh.read(int.from_bytes(size, "little")))

    def close(self) -> None:
        self._fh.close()


class CheckPass:
    """The check pass's running state: problems in their three groups, and per sample only what the checks
    across records need: its scenario, digests of its prompt and of its reference and criteria, and for each
    of its outputs (model and repeat) where it was first seen, packed into an int. Model and scenario names
    are kept once each. About 200 bytes per output, where the output itself is typically a few kilobytes."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.size_problems: list[Problem] = []
        self.consistency_problems: list[Problem] = []
        self.limit = max_output_bytes()  # first: a bad setting raises before the temporary file is opened
        self.spill = Spill()
        self.outputs = 0
        self.per_scenario: dict[str, int] = {}
        self.images: dict[int, list[ImageRef]] = {}
        # sample_id -> (scenario, prompt digest, extras digest, {model or (model, repeat): where first seen})
        self.samples: dict[str, tuple[str, bytes, bytes | None, dict[Any, int]]] = {}
        self._names: dict[str, str] = {}  # one string object per model and scenario name
        self._check_keys: dict[str, str] = {}  # one string object per distinct list of checks
        self.files: list[str] = []  # where-seen keys index this
        self._last_prompt: Any = None
        self._last_digest = b""

    def record(self, rec: OutputRecord) -> None:
        """Take in a checked record (its texts are not kept)."""
        source_index = rec.metadata.get("source_index") if rec.line is None else None
        self._take(
            rec.sample_id,
            rec.model,
            rec.repeat,
            rec.scenario,
            rec.prompt,
            rec.reference,
            rec.criteria,
            rec.output,
            rec.file,
            rec.line,
            rec.images,
            source_index,
            rec.metadata,
            rec.checks,
        )

    def fields(self, obj: dict[str, Any], name: str, lineno: int) -> None:
        """:meth:`record` for a record whose fields all passed ``record_passes`` (no images), without making
        the record: the check pass sees every record of the batch."""
        sample_id, scenario, model, repeat = obj["sample_id"], obj["scenario"], obj["model"], obj.get("repeat")
        get = obj.get
        self._take(
            sample_id if type(sample_id) is str else str(sample_id),
            model if type(model) is str else str(model),
            0 if repeat is None else repeat,
            scenario if type(scenario) is str else str(scenario),
            obj["prompt"],
            get("reference"),
            get("criteria"),
            obj["output"],
            name,
            lineno,
            [],
            None,
            _metadata(get("metadata")),
            get("checks"),
        )

    def _take(
        self,
        sample_id: str,
        model: str,
        repeat: int,
        scenario: str,
        prompt: Any,
        reference: str | None,
        criteria: str | None,
        output: str,
        file: str,
        line: int | None,
        images: list[ImageRef],
        source_index: Any,
        metadata: dict[str, Any],
        checks: list[dict[str, Any]] | None,
    ) -> None:
        # A sample's checks travel as their canonical JSON, one string object per distinct list: marshal then
        # writes each once per block instead of a list of dicts per record (0.8 s per 100,000 records).
        key = None if checks is None else self._check_keys.setdefault(k := checks_key(checks), k)
        self.spill.add(
            (sample_id, scenario, prompt, model, repeat, output, reference, criteria, metadata, file, line, key),
            len(output),
        )
        index = self.outputs
        self.outputs += 1
        if images:
            self.images[index] = images
        if len(output) * 4 > self.limit:  # UTF-8 takes at most 4 bytes a character
            size = len(output.encode())
            if size > self.limit:
                # AlpacaEval files have no line per output; name the list position instead.
                field_name = "output" if line is not None else f"[{source_index}].output"
                self.size_problems.append(
                    Problem(
                        file,
                        line,
                        field_name,
                        f"is {size / 1e6:.1f} MB, over the {self.limit / 1e6:.0f} MB limit "
                        "(BLIND_REVIEW_MAX_OUTPUT_MB); no reviewer can judge that in a browser — check the "
                        "generation for a runaway output",
                    )
                )
        names = self._names
        model = names.setdefault(model, model)
        sample = self.samples.get(sample_id)
        output_key: Any = model if repeat == 0 else (model, repeat)
        if sample is not None:
            first = sample[3].get(output_key)
            if first is not None:
                f_file, f_line = self.files[first & 0xFFFF], first >> 16
                where = f"{f_file}:{f_line}" if f_line else f_file
                self.consistency_problems.append(
                    Problem(
                        file,
                        line,
                        "sample_id",
                        f"({sample_id!r}, {model!r}"
                        f"{', repeat ' + str(repeat) if repeat else ''}) appears twice (first at "
                        f'{where}); give repeated generations a distinct "repeat" number',
                    )
                )
                return
        if not self.files or self.files[-1] != file:
            self.files.append(file)
        where_seen = (line or 0) << 16 | (len(self.files) - 1)
        # The outputs of a sample usually follow one another: compare with the last prompt (cheap) before
        # digesting it.
        if prompt != self._last_prompt or type(prompt) is not type(self._last_prompt):
            self._last_prompt, self._last_digest = prompt, value_digest(prompt)
        digest = self._last_digest
        extras = extras_digest(reference, criteria, key)
        if sample is None:
            scenario = names.setdefault(scenario, scenario)
            self.samples[sample_id] = (
                scenario,
                digest,
                extras,
                {model if repeat == 0 else (model, repeat): where_seen},
            )
            self.per_scenario[scenario] = self.per_scenario.get(scenario, 0) + 1
            return
        sample[3][output_key] = where_seen
        first_scenario, first_digest, first_extras, _ = sample
        if first_scenario != scenario:
            self.consistency_problems.append(
                Problem(
                    file,
                    line,
                    "scenario",
                    f"sample {sample_id!r} is in scenario {first_scenario!r} elsewhere but {scenario!r} here",
                )
            )
        elif first_digest != digest:
            self.consistency_problems.append(
                Problem(
                    file,
                    line,
                    "prompt",
                    f"sample {sample_id!r} has a different prompt "
                    "elsewhere; every output of a sample must answer the same prompt",
                )
            )
        elif first_extras != extras:
            self.consistency_problems.append(
                Problem(
                    file,
                    line,
                    "reference",
                    f"sample {sample_id!r} has a different reference, criteria or checks elsewhere; every "
                    "output of a sample must carry the same ones",
                )
            )

    def models(self) -> list[str]:
        return sorted({m if type(m) is str else m[0] for s in self.samples.values() for m in s[3]})


def _metadata(value: Any) -> dict[str, Any]:
    return {} if value is None else value  # checked: an object, or absent


def value_digest(value: Any) -> bytes:
    """A digest that is equal exactly when two prompts (or references) compare equal: the JSON of the value
    with object keys sorted, as chat messages with the same fields in another order are the same message."""
    if type(value) is str:
        return hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16, person=b"text").digest()
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


def checks_key(checks: Any) -> str:
    """A list of checks as canonical JSON (keys sorted): equal exactly when the lists are."""
    return orjson.dumps(checks, option=orjson.OPT_SORT_KEYS).decode()


def extras_digest(reference: str | None, criteria: str | None, checks_key: str | None) -> bytes | None:
    """What must be the same on every output of a sample besides its prompt (None when it has none of them);
    a sample without checks digests as it did before checks existed."""
    if reference is None and criteria is None and checks_key is None:
        return None
    return value_digest([reference, criteria] if checks_key is None else [reference, criteria, checks_key])

"""The record every batch file format is read into: one output of one model for one sample.

A module of its own because every step of a load shares it: the readers make records
(:mod:`reviewer_app.batches.ingest`), the check pass takes them in (:mod:`reviewer_app.batches.check_pass`),
and the write gets them back (:func:`reviewer_app.batches.checked_batch.iter_records`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewer_app.batches.images import ImageRef


@dataclass
class OutputRecord:
    sample_id: str
    scenario: str
    prompt: str | list[dict[str, str]]
    model: str
    output: str
    file: str
    line: int | None
    reference: str | None = None
    criteria: str | None = None
    images: list[ImageRef] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    repeat: int = 0
    checks: list[dict[str, Any]] | None = None  # the sample's automatic checks, as written (checked)

    def where(self) -> tuple[str, int | None]:
        return self.file, self.line

"""How a batch's outputs were made, read back from what ``generate`` wrote into each output's metadata.

``generate`` stores with every output the API model it asked, the fixed sampling parameters (temperature,
top_p, max_tokens, and the seed as ``seed + repeat``), the repeat and, since issue 10, the SHA-256 of the
samples file. ``load-batch`` collects them per model (:class:`GenerationLog`) and keeps them on the batch
(``Batch.generation_json``), so that ``rerun`` can ask a new model the same samples with the same parameters.
Keys are never in the metadata, so they are never here either.

A model counts as generated only when every one of its outputs carries the parameters and they agree (the
seed once the repeat is taken off); a batch has a log only when every model does. Anything else (outputs
from elsewhere, a file put together by hand from two runs) gives no log: a rerun could not reproduce it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PARAMETERS = ("temperature", "top_p", "max_tokens")


@dataclass(frozen=True)
class ModelRun:
    """One model's run: what ``generate`` was given for it."""

    api_model: str
    temperature: float
    top_p: float
    max_tokens: int
    seed: int | None  # the --seed given (each repeat r was sent seed + r); None: no seed
    repeats: int
    samples_sha256: str | None = None  # of the samples file, when generate recorded it

    def as_dict(self) -> dict[str, Any]:
        return {
            "api_model": self.api_model,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "repeats": self.repeats,
            "samples_sha256": self.samples_sha256,
        }


def _run_key(metadata: dict[str, Any], repeat: int) -> tuple[Any, ...] | None:
    """The parameters of one output that must agree across a model's outputs; None if any is missing."""
    api_model = metadata.get("api_model")
    if not isinstance(api_model, str) or "generated_at" not in metadata:
        return None
    values = [metadata.get(k) for k in PARAMETERS]
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        return None
    seed = metadata.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        return None
    sha = metadata.get("samples_sha256")
    return (api_model, *values, None if seed is None else seed - repeat, sha if isinstance(sha, str) else None)


@dataclass
class GenerationLog:
    """Collects the runs of a batch's models, one output at a time (see the module docstring)."""

    _runs: dict[str, tuple[Any, ...] | None] = field(default_factory=dict)
    _repeats: dict[str, int] = field(default_factory=dict)

    def add(self, model: str, repeat: int, metadata: dict[str, Any]) -> None:
        key = _run_key(metadata, repeat)
        if model in self._runs and self._runs[model] != key:
            key = None  # two runs, or an output from elsewhere: not reproducible as one run
        self._runs[model] = key
        self._repeats[model] = max(self._repeats.get(model, 0), repeat + 1)

    def runs(self) -> dict[str, ModelRun] | None:
        """Every model's run, or None when some model's outputs were not all made by one ``generate`` run."""
        if not self._runs or any(key is None for key in self._runs.values()):
            return None
        out = {}
        for model, key in sorted(self._runs.items()):
            assert key is not None
            api_model, temperature, top_p, max_tokens, seed, sha = key
            out[model] = ModelRun(api_model, temperature, top_p, int(max_tokens), seed, self._repeats[model], sha)
        return out

    def to_json(self) -> str | None:
        """What ``Batch.generation_json`` stores (None: no log)."""
        runs = self.runs()
        if runs is None:
            return None
        return json.dumps({"models": {m: r.as_dict() for m, r in runs.items()}}, sort_keys=True)


def runs_from_json(text: str | None) -> dict[str, ModelRun] | None:
    """The runs stored by :meth:`GenerationLog.to_json` (None: the batch has no log)."""
    if not text:
        return None
    models = json.loads(text).get("models") or {}
    return {name: ModelRun(**values) for name, values in models.items()}

"""``blind-review import-traces``: a tracing tool's export turned into the files the tool reads, in a folder:
``requests.jsonl`` (every traced request, for ``build-eval-set``) and ``answers-<model>.jsonl`` per model (the
logged answers as a batch file, for ``load-batch``, with the sample ids an eval set built from the same
requests gives them, so logged answers can be reviewed beside candidates generated for that eval set).

An answer whose prompt carries images is left out of the batch files (they would need the images as files:
build the eval set and ``generate`` instead) and counted; the same prompt answered again by a model becomes a
repeat of that sample (``repeat`` 1, 2, ...); every answer keeps its trace id, latency and token counts in its
metadata. Both files are written whole or not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer_app.errors import Problem, ValidationError
from reviewer_app.generation.eval_set import prompt_key
from reviewer_app.generation.samples_file import write_jsonl_atomic
from reviewer_app.generation.traces import answers_by_model, read_traces

__all__ = ["TraceImport", "import_traces"]


@dataclass(frozen=True)
class TraceImport:
    """What an import wrote, and what it left out."""

    requests: Path
    traces: int
    skipped: dict[str, int]
    answers: dict[str, Path] = field(default_factory=dict)  # model -> its batch file
    per_model: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)  # why answers were left out of the batch files

    def lines(self) -> list[str]:
        out = [f"Read {self.traces} trace(s); wrote {self.requests} (build-eval-set reads it)."]
        out += [f"  left out {n}: {why}" for why, n in sorted(self.skipped.items())]
        for model, path in self.answers.items():
            out.append(f"  {model}: {self.per_model[model]} logged answer(s) in {path} (load-batch reads it)")
        out += [f"  answers left out of the batch files, {n}: {why}" for why, n in sorted(self.left_out.items())]
        return out


def _file_name(model: str) -> str:
    return "answers-" + (re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "model") + ".jsonl"


def import_traces(
    path: Path,
    source: str,
    out: Path,
    *,
    requests: Path | None = None,
    scenario_field: str | None = None,
    model: str | None = None,
) -> TraceImport:
    """Read ``path`` (see :func:`.traces.read_traces`) and write the folder ``out``; ``model`` names every answer's
    model (for traces that do not say it, or to rename). Raises ValidationError with every unusable line."""
    read = read_traces(path, source, scenario_field=scenario_field, requests=requests)
    if model:
        read.traces[:] = [replace(t, model=model) for t in read.traces]
    problems: list[Problem] = []
    rows_by_model: dict[str, list[dict[str, Any]]] = {}
    left_out: dict[str, int] = {}
    scenario_of: dict[str, str] = {}
    for name, traces in answers_by_model(read.traces).items():
        seen: dict[str, int] = {}
        rows = []
        for t in traces:
            if any(
                isinstance(part, dict) and part.get("type") == "image_url"
                for m in t.messages
                if isinstance(m.get("content"), list)
                for part in m["content"]
            ):
                left_out["the prompt has images"] = left_out.get("the prompt has images", 0) + 1
                continue
            keyed = prompt_key(t.messages)
            if isinstance(keyed, str):
                problems.append(Problem(path.name, t.line, "messages", keyed))
                continue
            prompt, sample_id = keyed
            repeat = seen.get(sample_id, -1) + 1
            seen[sample_id] = repeat
            scenario = scenario_of.setdefault(sample_id, t.scenario)
            rows.append({"sample_id": sample_id, "scenario": scenario, "prompt": prompt, "model": name,
                         "output": t.output, "repeat": repeat, "metadata": t.metadata})  # fmt: skip
        if rows:
            rows_by_model[name] = rows
    no_model = sum(1 for t in read.traces if t.output is not None and not t.model)
    if no_model:
        left_out["no model named (give --model)"] = no_model
    if problems:
        raise ValidationError(problems, hint="Fix these lines and run again.")
    requests_path = out / "requests.jsonl"
    write_jsonl_atomic(
        requests_path,
        [
            {"trace_id": t.trace_id, "scenario": t.scenario, "model": t.model, "messages": t.messages}
            for t in read.traces
        ],
    )
    answers, per_model = {}, {}
    for name, rows in rows_by_model.items():
        target = out / _file_name(name)
        write_jsonl_atomic(target, rows)
        answers[name], per_model[name] = target, len(rows)
    return TraceImport(requests_path, len(read.traces), read.skipped, answers, per_model, left_out)

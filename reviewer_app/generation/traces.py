"""Traces in, without glue: OpenAI chat-completions logs and Batch API files, Langfuse and LangSmith exports,
read into the tool's own requests (for ``build-eval-set``) and a model's logged answers (batch files for
``load-batch``). Every line that cannot be used is reported at once, located (file, line, field), and nothing
is written.

Field mapping (README, "Importing traces"):

============  ==========================================  ==============================  =======================
source        prompt (chat messages)                      answer                          model
============  ==========================================  ==============================  =======================
openai        ``request.messages`` (or ``messages``)       ``response.choices[0].message   ``response.model``, else
              one JSONL line per logged call              .content`` (or ``output``)       ``request.model``
openai-batch  the input file's ``body.messages``, joined  the output file's ``response    ``response.body.model``
              on ``custom_id``                            .body.choices[0]...``            else ``body.model``
langfuse      a GENERATION's (or a trace's) ``input``:    ``output``: text, a message, or  ``model`` (generations)
              messages, ``{"messages": [...]}``, or text  ``{"choices": [...]}``
langsmith     an ``llm`` run's ``inputs.messages`` (a     ``outputs.generations[0][0]``    ``extra.invocation_params
              list, or a list of lists)                   (``text`` or ``message``)        .model`` / ``metadata
                                                                                           .ls_model_name``
============  ==========================================  ==============================  =======================

The scenario is ``--scenario-field`` (a dotted path into the source's record, e.g. ``metadata.scenario``), else the
source's own: ``metadata.scenario`` where present, else the trace's ``name`` (Langfuse, LangSmith), else "all".
Latency (``latency_ms``) and token counts go into each answer's metadata, the trace's id as ``trace_id``. An OpenAI
Batch output line with an ``error`` or a non-200 status has no answer: it is counted and left out, not an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reviewer_app.errors import GenerationError, Problem, ValidationError
from reviewer_app.generation.eval_set import json_lines, read_log_text

__all__ = ["TRACE_SOURCES", "Trace", "TraceRead", "read_traces"]

TRACE_SOURCES = ("openai", "openai-batch", "langfuse", "langsmith")


@dataclass(frozen=True)
class Trace:
    """One logged model call: where it was read, its prompt as chat messages (OpenAI form, content as text or
    content parts), the answer (None: the call has no usable answer), the model, scenario and metadata."""

    line: int
    trace_id: str
    messages: list[dict[str, Any]]
    output: str | None
    model: str | None
    scenario: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TraceRead:
    """The traces of a file, and what was left out and why (counts)."""

    traces: list[Trace]
    skipped: dict[str, int]


def _field(record: Any, dotted: str) -> Any:
    value = record
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _records(path: Path) -> list[tuple[int, Any]]:
    """(line, record): a JSON array (its items numbered from 1), an object with a list under ``data``/``traces``/
    ``observations``/``runs`` (Langfuse's and LangSmith's API pages), or JSONL (lines as numbered in the file)."""
    text = read_log_text(path, missing="no such file")
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip()):
        try:
            whole = json.loads(text)
        except ValueError as exc:
            if stripped.startswith("["):
                raise ValidationError([Problem(path.name, None, None, f"not valid JSON ({exc})")]) from None
        else:
            if isinstance(whole, dict):
                for key in ("data", "traces", "observations", "runs"):
                    if isinstance(whole.get(key), list):
                        whole = whole[key]
                        break
                else:
                    whole = [whole]
            return list(enumerate(whole, start=1))
    return json_lines(text)


def _as_messages(value: Any) -> list[dict[str, Any]] | None:
    """Chat messages from the shapes tracing tools log: a list of messages (or of lists: LangSmith batches one
    call's messages in an outer list), ``{"messages": [...]}``, LangChain's ``{"type": "human", "data": ...}``
    or ``{"role": ..., "content": ...}`` items, or a plain string (one user message)."""
    if isinstance(value, str) and value.strip():
        return [{"role": "user", "content": value}]
    if isinstance(value, dict):
        for key in ("messages", "input", "prompt"):
            if key in value:
                return _as_messages(value[key])
        return None
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return _as_messages(value[0])
    if not isinstance(value, list) or not value:
        return None
    roles = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "HumanMessage": "user",
             "AIMessage": "assistant", "SystemMessage": "system", "ToolMessage": "tool"}  # fmt: skip
    out = []
    for item in value:
        if not isinstance(item, dict):
            return None
        data: dict[str, Any] = item["data"] if isinstance(item.get("data"), dict) else item
        kwargs: dict[str, Any] = item["kwargs"] if isinstance(item.get("kwargs"), dict) else {}
        lc_class = (
            item["id"][-1] if isinstance(item.get("id"), list) and item["id"] else ""
        )  # LangChain's serialised form
        role = (data.get("role") or roles.get(str(data.get("type") or item.get("type") or "")) or kwargs.get("role")
                or roles.get(str(lc_class)))  # fmt: skip
        content = data.get("content", kwargs.get("content"))
        if not role or content is None:
            return None
        out.append({"role": str(role), "content": content})
    return out


def _text(value: Any) -> str | None:
    """An answer's text from a string, a message, content parts, or ``choices``/``generations``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and v.get("type") in ("text", "output_text") for v in value):
            return "".join(str(v.get("text", "")) for v in value)
        return _text(value[0]) if value else None
    if isinstance(value, dict):
        for key in ("choices", "generations", "message", "content", "text", "output", "completion"):
            if key in value and value[key] is not None:
                found = _text(value[key])
                if found is not None:
                    return found
        if isinstance(value.get("data"), dict):
            return _text(value["data"])
    return None


def _ms(start: Any, end: Any) -> float | None:
    try:
        a = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        b = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((b - a).total_seconds() * 1000, 1)


def _scenario(record: Any, scenario_field: str | None, *fallbacks: str) -> str | None:
    for path in (scenario_field,) if scenario_field else ("metadata.scenario", *fallbacks):
        value = _field(record, path)
        if isinstance(value, str | int) and str(value).strip():
            return str(value).strip()
    return None if scenario_field else "all"


def read_traces(
    path: Path, source: str, *, scenario_field: str | None = None, requests: Path | None = None
) -> TraceRead:
    """The traces of ``path`` exported by ``source`` (:data:`TRACE_SOURCES`); ``requests`` is an OpenAI Batch job's
    input file (its prompts), for an ``openai-batch`` output file. Raises ValidationError with every unusable
    line located, GenerationError for a missing file or an unknown source."""
    if source not in TRACE_SOURCES:
        raise GenerationError(f"--from must be one of {', '.join(TRACE_SOURCES)}, not {source!r}")
    if source == "openai-batch" and requests is None:
        raise GenerationError("--from openai-batch reads the output file; give the job's input file too (--requests)")
    records = _records(path)
    problems: list[Problem] = []
    skipped: dict[str, int] = {}
    traces: list[Trace] = []
    prompts: dict[str, tuple[list[dict[str, Any]], str | None, Any]] = {}
    if source == "openai-batch":
        assert requests is not None
        prompts = _batch_inputs(requests, problems)
    for number, record in records:
        if isinstance(record, ValueError):
            problems.append(Problem(path.name, number, None, str(record)))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(path.name, number, None, "must be a JSON object"))
            continue
        read = {"openai": _openai, "openai-batch": _openai_batch, "langfuse": _langfuse, "langsmith": _langsmith}[
            source
        ]
        got = read(number, record, scenario_field, prompts)
        if isinstance(got, Problem):
            problems.append(Problem(path.name, number, got.field, got.message))
        elif isinstance(got, str):
            skipped[got] = skipped.get(got, 0) + 1
        else:
            traces.append(got)
    if problems:
        raise ValidationError(
            problems, hint="Fix these lines (or choose another --from / --scenario-field) and run again."
        )
    return TraceRead(traces, skipped)


def _problem(field_name: str | None, message: str) -> Problem:
    return Problem("", None, field_name, message)


def _usage(usage: Any) -> dict[str, Any]:
    if not isinstance(usage, dict):
        return {}
    out = {}
    for ours, theirs in (("input_tokens", ("prompt_tokens", "input_tokens", "input")),
                         ("output_tokens", ("completion_tokens", "output_tokens", "output"))):  # fmt: skip
        for key in theirs:
            if isinstance(usage.get(key), int | float):
                out[ours] = usage[key]
                break
    return out


def _openai(number: int, record: dict[str, Any], scenario_field: str | None, _: Any) -> Trace | Problem | str:
    request: dict[str, Any] = record["request"] if isinstance(record.get("request"), dict) else record
    response: dict[str, Any] = record["response"] if isinstance(record.get("response"), dict) else record
    messages = _as_messages(request.get("messages"))
    if messages is None:
        return _problem("request.messages", "missing or not a list of chat messages (role and content each)")
    output = _text(response.get("choices")) if "choices" in response else _text(record.get("output"))
    model = response.get("model") or request.get("model")
    scenario = _scenario(record, scenario_field, "request.metadata.scenario")
    if scenario is None:
        return _problem(scenario_field, "missing scenario (named by --scenario-field)")
    meta = {
        "trace_id": str(response.get("id") or record.get("id") or f"line-{number}"),
        **_usage(response.get("usage")),
    }
    return Trace(number, meta["trace_id"], messages, output, str(model) if model else None, scenario, meta)


def _batch_inputs(path: Path, problems: list[Problem]) -> dict[str, tuple[list[dict[str, Any]], str | None, Any]]:
    out: dict[str, tuple[list[dict[str, Any]], str | None, Any]] = {}
    for number, record in _records(path):
        body = _field(record, "body") if isinstance(record, dict) else None
        custom = record.get("custom_id") if isinstance(record, dict) else None
        messages = _as_messages(_field(body, "messages")) if isinstance(body, dict) else None
        if not isinstance(custom, str) or messages is None:
            problems.append(Problem(path.name, number, "body.messages" if custom else "custom_id",
                                    "each request needs a custom_id and body.messages"))  # fmt: skip
            continue
        if custom in out:
            problems.append(Problem(path.name, number, "custom_id", f"{custom!r} appears twice in the input file"))
            continue
        out[custom] = (messages, _field(body, "model"), record)
    return out


def _openai_batch(
    number: int, record: dict[str, Any], scenario_field: str | None, prompts: Any
) -> Trace | Problem | str:
    custom = record.get("custom_id")
    if not isinstance(custom, str):
        return _problem("custom_id", "missing")
    if custom not in prompts:
        return _problem("custom_id", f"{custom!r} is not in the input file given with --requests")
    messages, model, request = prompts[custom]
    if record.get("error") or _field(record, "response.status_code") not in (200, None):
        return "failed in the batch (error or non-200 status)"
    body = _field(record, "response.body")
    if not isinstance(body, dict):
        return _problem("response.body", "missing: no completion on this line")
    scenario = _scenario({**record, "request": request}, scenario_field, "request.body.metadata.scenario")
    if scenario is None:
        return _problem(scenario_field, "missing scenario (named by --scenario-field)")
    meta = {"trace_id": custom, **_usage(body.get("usage"))}
    return Trace(number, custom, messages, _text(body.get("choices")), str(body.get("model") or model or "") or None,
                 scenario, meta)  # fmt: skip


def _langfuse(number: int, record: dict[str, Any], scenario_field: str | None, _: Any) -> Trace | Problem | str:
    kind = str(record.get("type") or "").upper()
    if kind and kind != "GENERATION":
        return f"Langfuse {kind.lower()} observations (not generations)"
    messages = _as_messages(record.get("input"))
    if messages is None:
        return _problem("input", 'missing or not chat messages, {"messages": [...]}, or text')
    scenario = _scenario(record, scenario_field, "name")
    if scenario is None:
        return _problem(scenario_field, "missing scenario (named by --scenario-field)")
    meta: dict[str, Any] = {"trace_id": str(record.get("traceId") or record.get("id") or f"line-{number}")}
    latency = _ms(record.get("startTime"), record.get("endTime"))
    if latency is not None:
        meta["latency_ms"] = latency
    meta.update(_usage(record.get("usageDetails") or record.get("usage")))
    model = record.get("model") or _field(record, "metadata.model")
    return Trace(number, meta["trace_id"], messages, _text(record.get("output")), str(model) if model else None,
                 scenario, meta)  # fmt: skip


def _langsmith(number: int, record: dict[str, Any], scenario_field: str | None, _: Any) -> Trace | Problem | str:
    if record.get("run_type") not in (None, "llm"):
        return f"LangSmith {record.get('run_type')} runs (not llm)"
    messages = _as_messages(
        _field(record, "inputs.messages") or _field(record, "inputs.prompts") or record.get("inputs")
    )
    if messages is None:
        return _problem("inputs.messages", "missing or not chat messages")
    scenario = _scenario(record, scenario_field, "extra.metadata.scenario", "name")
    if scenario is None:
        return _problem(scenario_field, "missing scenario (named by --scenario-field)")
    meta: dict[str, Any] = {"trace_id": str(record.get("id") or f"line-{number}")}
    latency = _ms(record.get("start_time"), record.get("end_time"))
    if latency is not None:
        meta["latency_ms"] = latency
    meta.update(_usage(_field(record, "outputs.llm_output.token_usage") or _field(record, "outputs.usage_metadata")))
    model = (_field(record, "extra.invocation_params.model") or _field(record, "extra.invocation_params.model_name")
             or _field(record, "extra.metadata.ls_model_name"))  # fmt: skip
    return Trace(number, meta["trace_id"], messages, _text(record.get("outputs")), str(model) if model else None,
                 scenario, meta)  # fmt: skip


def answers_by_model(traces: Iterable[Trace]) -> dict[str, list[Trace]]:
    """The traces with an answer, by model (in file order)."""
    out: dict[str, list[Trace]] = {}
    for t in traces:
        if t.output is not None and t.model:
            out.setdefault(t.model, []).append(t)
    return out

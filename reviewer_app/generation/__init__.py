"""Making outputs with models: eval sets from logs, the OpenAI-compatible client, generation runs. It needs
no database, so a batch's files can be made anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.generation.client import ChatClient, Completion, RequestFailed
    from reviewer_app.generation.eval_set import build_eval_set
    from reviewer_app.generation.recorded import GenerationLog, ModelRun, runs_from_json
    from reviewer_app.generation.runner import GenerationReport, generate_batch
    from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams, parse_model_spec, resolve_api_key
    from reviewer_app.generation.trace_files import import_traces
    from reviewer_app.generation.traces import TRACE_SOURCES

__all__ = [
    "TRACE_SOURCES",
    "ChatClient",
    "Completion",
    "GenerationLog",
    "GenerationReport",
    "ModelRun",
    "ModelSpec",
    "RequestFailed",
    "RetryPolicy",
    "SamplingParams",
    "build_eval_set",
    "generate_batch",
    "import_traces",
    "parse_model_spec",
    "resolve_api_key",
    "runs_from_json",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "TRACE_SOURCES": "reviewer_app.generation.traces",
    "import_traces": "reviewer_app.generation.trace_files",
    "ChatClient": "reviewer_app.generation.client",
    "Completion": "reviewer_app.generation.client",
    "RequestFailed": "reviewer_app.generation.client",
    "GenerationLog": "reviewer_app.generation.recorded",
    "GenerationReport": "reviewer_app.generation.runner",
    "ModelRun": "reviewer_app.generation.recorded",
    "ModelSpec": "reviewer_app.generation.specs",
    "RetryPolicy": "reviewer_app.generation.specs",
    "SamplingParams": "reviewer_app.generation.specs",
    "build_eval_set": "reviewer_app.generation.eval_set",
    "generate_batch": "reviewer_app.generation.runner",
    "parse_model_spec": "reviewer_app.generation.specs",
    "resolve_api_key": "reviewer_app.generation.specs",
    "runs_from_json": "reviewer_app.generation.recorded",
}


__getattr__ = lazy_names(__name__, _HOMES)

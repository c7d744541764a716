"""Making outputs with models: eval sets from logs, the OpenAI-compatible client, generation runs. It needs
no database, so a batch's files can be made anywhere.
"""

from reviewer_app.generation.client import ChatClient
from reviewer_app.generation.eval_set import build_eval_set
from reviewer_app.generation.recorded import GenerationLog, ModelRun, runs_from_json
from reviewer_app.generation.runner import GenerationReport, generate_batch
from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams, parse_model_spec

__all__ = [
    "ChatClient",
    "GenerationLog",
    "GenerationReport",
    "ModelRun",
    "ModelSpec",
    "RetryPolicy",
    "SamplingParams",
    "build_eval_set",
    "generate_batch",
    "parse_model_spec",
    "runs_from_json",
]

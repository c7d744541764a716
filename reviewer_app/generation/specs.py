"""What a generation run asks for: which model where (``--model``) and its key, the sampling, the retries.

Plain settings, parsed and checked before any request is sent (a spec or key that cannot be used raises
:class:`~reviewer_app.errors.GenerationError`), and stored with the outputs (:meth:`SamplingParams.as_metadata`)
so results can be compared. Apart from the client (``client``), which sends the requests, so that reading them
needs neither httpx nor aiohttp.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from typing import Any

from reviewer_app.errors import GenerationError

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_URL_START = re.compile(r"=(?=https?://)")


@dataclass(frozen=True)
class ModelSpec:
    """One candidate: ``name`` labels its outputs in the batch, ``api_model`` is what the server is asked
    for, ``api_key_env`` names the environment variable holding its key (the key itself is never kept)."""

    name: str
    base_url: str
    api_model: str
    api_key_env: str | None = None

    @property
    def endpoint(self) -> str:
        url = self.base_url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"


def parse_model_spec(text: str) -> ModelSpec:
    """Parse ``NAME=BASE_URL``, ``NAME=API_MODEL=BASE_URL`` and either with ``@ENV_VAR`` at the end.

    ``NAME`` is also sent as the API model unless ``API_MODEL`` is given (vLLM wants the served model id,
    e.g. ``llama=meta-llama/Llama-3.1-8B-Instruct=http://gpu:8000/v1``). Raises GenerationError.
    """
    found = _URL_START.search(text)
    if found is None:
        raise GenerationError(
            f"--model {text!r}: expected NAME=BASE_URL[@ENV_VAR] with an http(s) URL, "
            "e.g. --model gpt-4o=https://api.openai.com/v1@OPENAI_API_KEY"
        )
    left, url = text[: found.start()], text[found.end() :]
    name, _, api_model = left.partition("=")
    name, api_model = name.strip(), (api_model.strip() or name.strip())
    if not name:
        raise GenerationError(f"--model {text!r}: the model NAME before '=' is empty")
    key_env: str | None = None
    head, at, tail = url.rpartition("@")
    if at and _ENV_NAME.fullmatch(tail):
        url, key_env = head, tail
    if not re.match(r"https?://[^/\s]+", url):
        raise GenerationError(f"--model {name}: {url!r} is not an http(s) base URL like http://localhost:8000/v1")
    return ModelSpec(name=name, base_url=url, api_model=api_model, api_key_env=key_env)


def resolve_api_key(spec: ModelSpec) -> str | None:
    """Read the model's key from its environment variable; raise GenerationError if it is named but unset."""
    if spec.api_key_env is None:
        return None
    key = os.environ.get(spec.api_key_env, "").strip()
    if not key:
        raise GenerationError(
            f"--model {spec.name}: environment variable {spec.api_key_env} is not set or empty; "
            f"export it (keys are never read from arguments or files)"
        )
    return key


@dataclass(frozen=True)
class SamplingParams:
    """Fixed for every request of a run, and stored with every output so results can be compared."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 1024
    seed: int | None = None

    def as_metadata(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` after the first attempt; backoff doubles from ``backoff_s`` up to ``backoff_max_s``;
    ``timeout_s`` bounds one attempt from sending the request to the end of the stream."""

    retries: int = 4
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    timeout_s: float = 300.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max_s)
        # Full jitter: many workers hitting one rate limit must not retry in lockstep.
        return random.uniform(0, min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1)))

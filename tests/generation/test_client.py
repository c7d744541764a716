"""The streaming client against a real local server: timings, retries, failures, what is sent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reviewer_app.errors import GenerationError
from reviewer_app.generation.client import ChatClient, Completion, RequestFailed
from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams, parse_model_spec, resolve_api_key
from tests.support.fake_openai import Behaviour, FakeOpenAIServer, Rule

FAST = RetryPolicy(retries=3, backoff_s=0.01, backoff_max_s=0.05, timeout_s=5)
HELLO = [{"role": "user", "content": "hello there"}]


def spec_for(server: FakeOpenAIServer, name: str = "m") -> ModelSpec:
    return parse_model_spec(f"{name}=http://127.0.0.1:{server.port}/v1")


def complete(
    server: FakeOpenAIServer,
    messages: list[dict[str, Any]] = HELLO,
    *,
    policy: RetryPolicy = FAST,
    params: SamplingParams | None = None,
    api_key: str | None = None,
    response_format: dict[str, Any] | None = None,
    times: int = 1,
) -> Completion:
    async def go() -> Completion:
        async with ChatClient(spec_for(server), params or SamplingParams(), policy, api_key=api_key) as client:
            for _ in range(times - 1):
                await client.complete(messages, response_format=response_format)
            return await client.complete(messages, response_format=response_format)

    return asyncio.run(go())


def test_ttft_and_latency_are_measured_and_ordered(server: FakeOpenAIServer) -> None:
    # Bounds the server's own sleeps guarantee, whatever the load on the machine; how close TTFT comes to
    # the injected delay (the client's overhead) is for scripts/bench_generate.py to measure.
    server.set_behaviour(Behaviour(first_token_delay_ms=200, token_delay_ms=20, tokens=6))
    for done in [complete(server) for _ in range(3)]:
        assert done.ttft_ms >= 200  # the empty role chunk sent at once must not count as a token
        assert done.latency_ms > done.ttft_ms
        assert done.output_tokens == 6 and done.output_tokens_source == "usage"
        assert done.finish_reason == "stop" and done.attempts == 1


def test_ttft_under_concurrency_is_measured_for_every_request(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=100, tokens=4))

    async def go() -> list[Completion]:
        async with ChatClient(spec_for(server), SamplingParams(), FAST, api_key=None, concurrency=16) as client:
            return await asyncio.gather(*(client.complete([{"role": "user", "content": f"q {i}"}]) for i in range(48)))

    results = asyncio.run(go())
    assert sorted(d.output.split()[0] for d in results) == sorted(f"m:q-{i}" for i in range(48))
    assert all(d.ttft_ms >= 100 and d.latency_ms >= d.ttft_ms and d.attempts == 1 for d in results)
    assert len({r.connection for r in server.completions()}) <= 16  # at most --concurrency in flight


def test_429_then_success_honours_retry_after(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(rules=[Rule(status=429, times=2, retry_after=0.1)]))
    done = complete(server, policy=RetryPolicy(retries=3, backoff_s=5, timeout_s=5))  # 5 s backoff unused
    assert done.attempts == 3
    requests = server.completions()
    assert len(requests) == 3
    assert requests[2].received_at - requests[1].received_at >= 0.09


def test_500_forever_fails_with_a_reason_after_all_retries(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(rules=[Rule(status=500, message="model crashed")]))
    with pytest.raises(RequestFailed) as failed:
        complete(server)
    assert failed.value.attempts == 4
    assert "HTTP 500" in failed.value.reason and "model crashed" in failed.value.reason
    assert "gave up after 4 attempts" in failed.value.reason
    assert len(server.completions()) == 4


def test_stream_dropped_midway_is_retried(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(tokens=8, rules=[Rule(drop_after_tokens=3, times=1)]))
    done = complete(server)
    assert done.attempts == 2
    assert done.output.split() == ["m:hello-there", "tok1", "tok2", "tok3", "tok4", "tok5", "tok6", "tok7"]


def test_stream_always_dropped_fails_as_dropped(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(rules=[Rule(drop_after_tokens=2)]))
    with pytest.raises(RequestFailed) as failed:
        complete(server, policy=RetryPolicy(retries=1, backoff_s=0.01, timeout_s=5))
    assert failed.value.attempts == 2
    assert "dropped" in failed.value.reason or "ended before" in failed.value.reason


def test_timeout_bounds_each_attempt(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=3000))
    with pytest.raises(RequestFailed) as failed:
        complete(server, policy=RetryPolicy(retries=0, timeout_s=0.3))
    assert "timed out" in failed.value.reason and failed.value.attempts == 1


def test_client_errors_are_not_retried_and_never_echo_the_key(server: FakeOpenAIServer) -> None:
    key = "sk-test-4f9c2d7e1a"
    server.set_behaviour(Behaviour(rules=[Rule(status=401, message=f"Incorrect API key provided: {key}")]))
    with pytest.raises(RequestFailed) as failed:
        complete(server, api_key=key)
    assert failed.value.attempts == 1
    assert key not in failed.value.reason and "Incorrect API key provided: ***" in failed.value.reason
    assert server.completions()[0].headers["authorization"] == f"Bearer {key}"


def test_sends_fixed_sampling_parameters_and_asks_for_usage(server: FakeOpenAIServer) -> None:
    complete(server, params=SamplingParams(temperature=0.7, top_p=0.9, max_tokens=3, seed=11))
    body = server.completions()[0].body
    assert body is not None
    assert body["model"] == "m" and body["messages"] == HELLO and body["stream"] is True
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.7, 0.9, 3, 11)
    assert body["stream_options"] == {"include_usage": True}
    assert "authorization" not in server.completions()[0].headers


def test_finish_reason_length_when_max_tokens_cuts_the_answer(server: FakeOpenAIServer) -> None:
    done = complete(server, params=SamplingParams(max_tokens=3))
    assert done.finish_reason == "length" and done.output_tokens == 3


def test_server_without_stream_options_falls_back_to_counting_chunks(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(tokens=5, reject_stream_options=True))
    done = complete(server)
    assert done.output_tokens == 5 and done.output_tokens_source == "chunks"
    bodies = [r.body for r in server.completions()]
    assert bodies[0] is not None and bodies[-1] is not None
    assert "stream_options" in bodies[0] and "stream_options" not in bodies[-1]


def test_response_format_is_sent_and_dropped_for_a_server_that_refuses_it(server: FakeOpenAIServer) -> None:
    wanted = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": {"type": "object"}}}
    complete(server, response_format=wanted)
    first = server.completions()[0].body
    assert first is not None and first["response_format"] == wanted
    server.set_behaviour(Behaviour(tokens=5, reject_response_format=True))
    done = complete(server, response_format=wanted, times=2)
    assert done.output_tokens == 5
    bodies = [r.body or {} for r in server.completions()[1:]]
    # refused once, asked again without it, and the same client does not send it again
    assert ["response_format" in b for b in bodies] == [True, False, False]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpt=http://h:1/v1", ModelSpec("gpt", "http://h:1/v1", "gpt", None)),
        (
            "gpt-4o=https://api.x.com/v1@OPENAI_API_KEY",
            ModelSpec("gpt-4o", "https://api.x.com/v1", "gpt-4o", "OPENAI_API_KEY"),
        ),
        (
            "q=qwen2.5:7b=http://localhost:11434/v1",
            ModelSpec("q", "http://localhost:11434/v1", "qwen2.5:7b", None),
        ),
        (
            "l=meta-llama/L-3=http://u@gpu:8000/v1@K",
            ModelSpec("l", "http://u@gpu:8000/v1", "meta-llama/L-3", "K"),
        ),
    ],
)
def test_parse_model_spec(text: str, expected: ModelSpec) -> None:
    assert parse_model_spec(text) == expected


@pytest.mark.parametrize("text", ["gpt", "gpt=localhost:8000", "=http://h/v1", "gpt=http:///v1"])
def test_parse_model_spec_rejects_bad_specs(text: str) -> None:
    with pytest.raises(GenerationError, match="--model"):
        parse_model_spec(text)


def test_missing_key_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BR_TEST_KEY", raising=False)
    with pytest.raises(GenerationError, match="BR_TEST_KEY is not set"):
        resolve_api_key(parse_model_spec("m=http://h/v1@BR_TEST_KEY"))
    monkeypatch.setenv("BR_TEST_KEY", "sk-1")
    assert resolve_api_key(parse_model_spec("m=http://h/v1@BR_TEST_KEY")) == "sk-1"

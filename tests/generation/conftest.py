"""A real OpenAI-compatible server on 127.0.0.1 for the generation tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_openai import Behaviour, FakeOpenAIServer, running_server


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with running_server(Behaviour()) as srv:
        yield srv

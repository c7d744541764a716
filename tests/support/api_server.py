"""The REST API on a real server on loopback (uvicorn in a thread, on a free port), over a test's engine, and
API tokens for the three roles (a reviewer's made the only way one can exist: a lead's token, then the lead
made reviewer)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import col
from starlette.applications import Starlette

from reviewer_app.api import API_PREFIX, api_route
from reviewer_app.domain.enums import Role
from reviewer_app.people.api_tokens import issue_api_token
from reviewer_app.people.people import add_reviewer
from storage.engine import write_session
from storage.models import Reviewer
from tests.support.app_server import free_port


@contextmanager
def running_api(engine: Engine) -> Iterator[str]:
    """Serve the API over ``engine`` at ``http://127.0.0.1:PORT/api/v1`` (yielded), mounted as ``blind-review
    serve`` mounts it, until the block ends."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            Starlette(routes=[api_route(engine)]), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
        )
    )
    thread = threading.Thread(target=server.run, name="api-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server did not start within 20 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}{API_PREFIX}"
    finally:
        server.should_exit = True
        thread.join(10)


@dataclass(frozen=True)
class Tokens:
    admin: str
    lead: str
    reviewer: str


def role_tokens(engine: Engine) -> Tokens:
    """People ``ada`` (admin), ``lee`` (lead) and ``rex`` (a lead with a token, made reviewer since) and their
    tokens."""
    add_reviewer(engine, "ada", "admin")
    add_reviewer(engine, "lee", "lead")
    add_reviewer(engine, "rex", "lead")
    tokens = Tokens(
        admin=issue_api_token(engine, "ada")[1],
        lead=issue_api_token(engine, "lee")[1],
        reviewer=issue_api_token(engine, "rex")[1],
    )
    with write_session(engine) as session:
        session.execute(update(Reviewer).where(col(Reviewer.name) == "rex").values(role=Role.REVIEWER))
    return tokens

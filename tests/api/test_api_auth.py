"""Who may call what: no token or a bad one is 401; a reviewer's token is 403 on every operation the OpenAPI
document lists (the API is unblinded, so reviewers get nothing); a lead reads but does not manage; and no
operation serves review items."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.api import create_api
from reviewer_app.people.api_tokens import revoke_api_tokens
from tests.support.api_server import role_tokens, running_api

ADMIN_ONLY = {
    ("post", "/batches"),
    ("post", "/batches/{batch}/open"),
    ("post", "/batches/{batch}/close"),
    ("post", "/batches/{batch}/archive"),
    ("post", "/batches/{batch}/restore"),
    ("delete", "/batches/{batch}"),
    ("put", "/batches/{batch}/titles"),
    ("patch", "/batches/{batch}/reviewers"),
    ("post", "/batches/{batch}/assign"),
    ("post", "/batches/{batch}/ratings"),
    ("get", "/people"),
    ("post", "/people"),
    ("post", "/people/{name}/link"),
    ("post", "/people/{name}/revoke"),
    ("post", "/batches/{batch}/allocation/refresh"),
    ("get", "/webhooks"),
    ("post", "/webhooks"),
    ("delete", "/webhooks/{webhook_id}"),
    ("post", "/webhooks/{webhook_id}/test"),
    ("get", "/webhooks/deliveries"),
    ("post", "/batches/{batch}/judge-runs"),
}


def _operations(engine: Engine) -> list[tuple[str, str]]:
    doc = create_api(engine).openapi()
    return [(method, path) for path, item in doc["paths"].items() for method in item]


def _call(client: httpx.Client, method: str, path: str) -> httpx.Response:
    """The operation with made-up arguments: auth is checked before anything else is looked at."""
    concrete = re.sub(r"\{[^}]+\}", "1", path)
    kwargs: dict[str, Any] = {}
    if method in ("post", "put", "patch"):
        kwargs["json"] = {}
    return client.request(method.upper(), concrete.lstrip("/"), **kwargs)


def test_every_operation_refuses_a_reviewer_and_the_unsigned(engine: Engine) -> None:
    tokens = role_tokens(engine)
    operations = _operations(engine)
    assert len(operations) >= 20  # the whole API, not an empty list
    with running_api(engine) as url:
        for token, status in ((tokens.reviewer, 403), (None, 401), ("br_not-a-token", 401)):
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            with httpx.Client(base_url=url + "/", headers=headers) as client:
                for method, path in operations:
                    answer = _call(client, method, path)
                    assert answer.status_code == status, (token, method, path, answer.text)
                    assert answer.headers["content-type"] == "application/problem+json"
                    body = answer.json()
                    assert body["status"] == status and body["detail"]
                    if status == 403:
                        assert "reviewers" in body["detail"]  # says why, not just "no"
                    else:
                        assert answer.headers["www-authenticate"] == "Bearer"


def test_a_lead_reads_but_does_not_manage(engine: Engine) -> None:
    tokens = role_tokens(engine)
    with (
        running_api(engine) as url,
        httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.lead}"}) as client,
    ):
        for method, path in _operations(engine):
            answer = _call(client, method, path)
            if (method, path) in ADMIN_ONLY:
                assert answer.status_code == 403, (method, path)
                assert "admin" in answer.json()["detail"]
            else:
                assert answer.status_code != 403, (method, path, answer.text)
        assert client.get("me").json() == {"name": "lee", "role": "lead"}


def test_a_revoked_token_stops_at_once(engine: Engine) -> None:
    tokens = role_tokens(engine)
    with running_api(engine) as url:
        headers = {"Authorization": f"Bearer {tokens.admin}"}
        assert httpx.get(f"{url}/me", headers=headers).status_code == 200
        revoke_api_tokens(engine, "ada")
        answer = httpx.get(f"{url}/me", headers=headers)
        assert answer.status_code == 401
        assert "revoked" in answer.json()["detail"]


def test_no_operation_serves_review_items(engine: Engine) -> None:
    """The reviewer's side (claims, items, labels, drafts, sign-in) has no endpoint: nothing in the document
    names it, so no token of any role can reach review items through the API."""
    doc = create_api(engine).openapi()
    text = " ".join(doc["paths"]).lower()
    for word in ("item", "claim", "label", "draft", "queue", "signin", "sign-in", "session", "review/"):
        assert word not in text, word


@pytest.mark.parametrize("path", ["/batches", "/people"])
def test_lists_are_paged(engine: Engine, path: str) -> None:
    doc = create_api(engine).openapi()
    names = {p["name"] for p in doc["paths"][path]["get"]["parameters"]}
    assert {"limit", "offset"} <= names

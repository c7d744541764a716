"""API tokens on both databases: shown once and stored as a hash, for leads and admins only, a label per
pipeline, expiry, revocation (of a token, of all, and with the person), the person's role at each use, and the
command line."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import text, update
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.cli.main import main
from reviewer_app.domain.enums import Role
from reviewer_app.errors import AuthError, ConflictError, NotFoundError, ValidationError
from reviewer_app.people.api_tokens import (
    TOKEN_PREFIX,
    authenticate_api_token,
    issue_api_token,
    list_api_tokens,
    revoke_api_tokens,
)
from reviewer_app.people.people import add_reviewer, revoke
from storage.engine import read_session, write_session
from storage.models import ApiToken, Reviewer, utcnow


def test_a_token_is_shown_once_stored_as_a_hash_and_signs_its_person_in(engine: Engine) -> None:
    add_reviewer(engine, "lee", "lead")
    info, token = issue_api_token(engine, "lee", label="ci", days=30)
    assert token.startswith(TOKEN_PREFIX) and len(token) > 40
    assert info.label == "ci" and info.expires_at is not None
    with read_session(engine) as s:
        stored = [str(r) for r in s.execute(text("SELECT token_hash FROM api_token")).scalars()]
    assert stored == [hashlib.sha256(token.encode()).hexdigest()]  # the token itself is nowhere
    person = authenticate_api_token(engine, token)
    assert (person.name, person.role) == ("lee", Role.LEAD)
    assert list_api_tokens(engine, "lee")[0].last_used_at is not None
    with pytest.raises(AuthError, match="not valid"):
        authenticate_api_token(engine, token[:-1] + ("A" if token[-1] != "A" else "B"))
    with pytest.raises(AuthError, match="Bearer"):
        authenticate_api_token(engine, None)


def test_only_leads_and_admins_get_tokens_and_labels_do_not_repeat(engine: Engine) -> None:
    add_reviewer(engine, "rita")
    add_reviewer(engine, "ada", "admin")
    with pytest.raises(ValidationError, match="only leads and admins"):
        issue_api_token(engine, "rita")
    with pytest.raises(NotFoundError):
        issue_api_token(engine, "nobody")
    issue_api_token(engine, "ada", label="nightly")
    with pytest.raises(ConflictError, match="already has a token labelled 'nightly'"):
        issue_api_token(engine, "ada", label="nightly")
    with pytest.raises(ValidationError, match="days"):
        issue_api_token(engine, "ada", label="other", days=0)
    issue_api_token(engine, "ada", label="other")  # another pipeline's
    assert sorted(t.label for t in list_api_tokens(engine, "ada")) == ["nightly", "other"]


def test_expired_revoked_and_revoked_people_are_refused_and_the_role_is_read_at_each_use(engine: Engine) -> None:
    add_reviewer(engine, "lee", "lead")
    add_reviewer(engine, "ada", "admin")
    _, expiring = issue_api_token(engine, "lee", label="short", days=1)
    _, other = issue_api_token(engine, "lee", label="long")
    with write_session(engine) as s:
        s.execute(update(ApiToken).where(col(ApiToken.label) == "short").values(expires_at=utcnow() - timedelta(1)))
    with pytest.raises(AuthError):
        authenticate_api_token(engine, expiring)
    assert authenticate_api_token(engine, other).name == "lee"
    # The role at the moment of the request: a lead made reviewer is a reviewer to the API (which refuses them).
    with write_session(engine) as s:
        s.execute(update(Reviewer).where(col(Reviewer.name) == "lee").values(role=Role.REVIEWER))
    assert authenticate_api_token(engine, other).role == Role.REVIEWER
    with write_session(engine) as s:
        s.execute(update(Reviewer).where(col(Reviewer.name) == "lee").values(role=Role.LEAD))
    assert revoke_api_tokens(engine, "lee", label="long") == 1
    with pytest.raises(AuthError):
        authenticate_api_token(engine, other)
    _, again = issue_api_token(engine, "lee", label="long")  # the label is free again
    revoke(engine, "lee")  # revoking the person revokes their tokens
    with pytest.raises(AuthError):
        authenticate_api_token(engine, again)
    assert all(t.revoked_at is not None for t in list_api_tokens(engine, "lee") if t.label != "short")


def test_the_command_prints_the_token_once_lists_and_revokes(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    add_reviewer(engine, "lee", "lead")
    assert main(["api-token", "lee", "--label", "ci", "--days", "90"]) == 0
    out = capsys.readouterr().out
    token = out.strip().splitlines()[-1]
    assert token.startswith(TOKEN_PREFIX) and "shown once" in out
    assert authenticate_api_token(engine, token).name == "lee"
    assert main(["api-token", "lee", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "lee / ci: live" in listed and token not in listed
    assert main(["api-token", "lee", "--revoke", "--label", "ci"]) == 0
    assert "Revoked 1 API token(s) labelled 'ci'" in capsys.readouterr().out
    assert main(["api-token", "rita-not-here"]) != 0
    assert "no person named 'rita-not-here'" in capsys.readouterr().err

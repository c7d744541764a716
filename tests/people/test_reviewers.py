"""People: a name is taken once, roles are checked, the last active admin stays, sign-ins are logged safely."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.errors import AuthError, ConflictError, ValidationError
from reviewer_app.people.people import add_reviewer, authenticate, list_people, new_link, revoke


def token_of(link: str) -> str:
    return link.split("token=")[-1]


def test_the_last_active_admin_cannot_be_revoked(engine: Engine) -> None:
    _, link = add_reviewer(engine, "root", Role.ADMIN)
    with pytest.raises(ConflictError, match="cannot revoke 'root': they are the last active admin"):
        revoke(engine, "root")
    assert authenticate(engine, token_of(link)).name == "root"  # nothing changed


def test_an_admin_can_be_revoked_while_another_stays(engine: Engine) -> None:
    _, first = add_reviewer(engine, "root", Role.ADMIN)
    add_reviewer(engine, "deputy", Role.ADMIN)
    assert revoke(engine, "root") == 0
    with pytest.raises(AuthError):
        authenticate(engine, token_of(first))
    # The revoked admin does not count as the other admin any more.
    with pytest.raises(ConflictError, match="last active admin"):
        revoke(engine, "deputy")
    assert [p.name for p in list_people(engine, Role.ADMIN)] == ["deputy"]


def test_a_new_link_makes_a_revoked_admin_count_again(engine: Engine) -> None:
    add_reviewer(engine, "root", Role.ADMIN)
    add_reviewer(engine, "deputy", Role.ADMIN)
    revoke(engine, "root")
    new_link(engine, "root")
    assert revoke(engine, "deputy") == 0


def test_reviewers_and_leads_are_revoked_whatever_the_admins(engine: Engine) -> None:
    add_reviewer(engine, "root", Role.ADMIN)
    _, link = add_reviewer(engine, "rita")
    add_reviewer(engine, "leo", Role.LEAD)
    revoke(engine, "rita")
    revoke(engine, "leo")
    with pytest.raises(AuthError):
        authenticate(engine, token_of(link))
    assert [p.name for p in list_people(engine)] == ["root"]


def test_a_taken_name_is_a_conflict_and_a_bad_role_a_validation_error(engine: Engine) -> None:
    person, _ = add_reviewer(engine, "ann", "lead")
    assert person.role is Role.LEAD
    with pytest.raises(ConflictError, match="a person named 'ann' already exists"):
        add_reviewer(engine, "ann")
    with pytest.raises(ValidationError, match="A role must be reviewer, lead or admin, not 'boss'"):
        add_reviewer(engine, "bob", "boss")
    with pytest.raises(ValidationError, match="needs a name"):
        add_reviewer(engine, "  ")


def test_sign_in_failures_are_logged_without_the_token(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    _, link = add_reviewer(engine, "rita")
    token = token_of(link)
    revoke(engine, "rita")
    caplog.set_level(logging.INFO, logger="reviewer_app")
    with pytest.raises(AuthError):
        authenticate(engine, token)
    refused = [r for r in caplog.records if "sign-in refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert "sha256 " in refused[0].getMessage()
    assert token not in caplog.text and token[:8] not in caplog.text


def test_revocations_are_logged(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    _, link = add_reviewer(engine, "rita")
    caplog.set_level(logging.INFO, logger="reviewer_app")
    revoke(engine, "rita")
    assert "revoked 'rita'" in caplog.text and "0 unfinished item(s) released" in caplog.text
    assert token_of(link) not in caplog.text

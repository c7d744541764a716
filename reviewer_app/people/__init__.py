"""People, roles, sign-in links, browser sessions and API tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.people.api_tokens import (
        authenticate_api_token,
        issue_api_token,
        list_api_tokens,
        revoke_api_tokens,
    )
    from reviewer_app.people.people import (
        ROLES,
        SIGNED_OUT_HERE,
        add_reviewer,
        authenticate_session,
        get_person,
        hash_token,
        list_people,
        new_link,
        require,
        revoke,
        sign_in,
        sign_out,
    )

__all__ = [
    "ROLES",
    "SIGNED_OUT_HERE",
    "add_reviewer",
    "authenticate_api_token",
    "authenticate_session",
    "get_person",
    "hash_token",
    "issue_api_token",
    "list_api_tokens",
    "list_people",
    "new_link",
    "require",
    "revoke",
    "revoke_api_tokens",
    "sign_in",
    "sign_out",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "authenticate_api_token": "reviewer_app.people.api_tokens",
    "issue_api_token": "reviewer_app.people.api_tokens",
    "list_api_tokens": "reviewer_app.people.api_tokens",
    "revoke_api_tokens": "reviewer_app.people.api_tokens",
    "ROLES": "reviewer_app.people.people",
    "SIGNED_OUT_HERE": "reviewer_app.people.people",
    "add_reviewer": "reviewer_app.people.people",
    "authenticate_session": "reviewer_app.people.people",
    "get_person": "reviewer_app.people.people",
    "hash_token": "reviewer_app.people.people",
    "list_people": "reviewer_app.people.people",
    "new_link": "reviewer_app.people.people",
    "require": "reviewer_app.people.people",
    "revoke": "reviewer_app.people.people",
    "sign_in": "reviewer_app.people.people",
    "sign_out": "reviewer_app.people.people",
}


__getattr__ = lazy_names(__name__, _HOMES)

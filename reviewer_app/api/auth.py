"""Who calls: the bearer token's person, with their role read at each request, and what that role may do.

Roles as on the pages: a lead reads results (reports, exports, comparisons, the monitor) and sends production
feedback; an admin also loads and manages (batches, people, assignments, imported ratings, webhooks). A
reviewer may do nothing here: the API is unblinded by nature (model names, reports), so a reviewer's token (a
lead demoted after the token was made) gets 403 on every endpoint, and there is no endpoint that serves review
items at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError
from reviewer_app.people import authenticate_api_token

__all__ = ["Admin", "EngineDep", "Lead", "engine_of"]

_BEARER = HTTPBearer(auto_error=False, description="An API token: `blind-review api-token NAME` makes one.")


def engine_of(request: Request) -> Engine:
    """The engine the app was made with (:func:`reviewer_app.api.create_api`)."""
    engine: Engine = request.app.state.engine
    return engine


EngineDep = Annotated[Engine, Depends(engine_of)]


def _needs(role: Role) -> Callable[..., Person]:
    def person(
        engine: EngineDep, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]
    ) -> Person:
        who = authenticate_api_token(engine, None if credentials is None else credentials.credentials)
        if not who.can(role):
            raise AuthError(
                f"this needs a {role}'s token; {who.name!r} is a {who.role}"
                + (" and the API has nothing for reviewers (it shows model names)" if who.role == Role.REVIEWER else "")
            )
        return who

    return person


Lead = Annotated[Person, Depends(_needs(Role.LEAD))]
Admin = Annotated[Person, Depends(_needs(Role.ADMIN))]

"""People, roles, sign-in links and browser sessions."""

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
    "authenticate_session",
    "get_person",
    "hash_token",
    "list_people",
    "new_link",
    "require",
    "revoke",
    "sign_in",
    "sign_out",
]

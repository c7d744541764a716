"""People (admins): list, add (the sign-in link comes back once), a new link, revoke. And ``/me``: who a token
acts for, for a pipeline to check its token before it starts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from reviewer_app.api.auth import Admin, EngineDep, Lead
from reviewer_app.api.paging import PageQuery, page_of
from reviewer_app.domain.enums import Role
from reviewer_app.people import add_reviewer, get_person, list_people, new_link, revoke
from reviewer_app.wire import Me, NewLink, Page, PersonInfo, RevokeResult

router = APIRouter(tags=["people"])


@router.get("/me", summary="Who this token acts for")
def me(who: Lead) -> Me:
    return Me(name=who.name, role=str(who.role))


@router.get("/people", summary="List people")
def people(
    engine: EngineDep,
    _: Admin,
    page: PageQuery,
    role: Annotated[Role | None, Query(description="only this role")] = None,
) -> Page[PersonInfo]:
    """Active people by name."""
    return page_of([PersonInfo(name=p.name, role=str(p.role)) for p in list_people(engine, role)], page)


class NewPerson(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    role: Role = Role.REVIEWER


@router.post("/people", summary="Add a person", status_code=201)
def add_person(engine: EngineDep, _: Admin, person: NewPerson) -> NewLink:
    """Add a reviewer, lead or admin; their sign-in link is in the answer, the one time it exists."""
    added, link = add_reviewer(engine, person.name, person.role)
    return NewLink(name=added.name, role=str(added.role), link=link)


@router.post("/people/{name}/link", summary="A new sign-in link (the old one stops working)")
def link(engine: EngineDep, _: Admin, name: str) -> NewLink:
    made = new_link(engine, name)
    found = get_person(engine, name)
    return NewLink(name=found.name, role=str(found.role), link=made)


@router.post("/people/{name}/revoke", summary="Revoke a person's link (and API tokens)")
def revoke_person(engine: EngineDep, _: Admin, name: str) -> RevokeResult:
    return RevokeResult(name=name, released=revoke(engine, name))

"""Pagination of lists: ``limit`` (1-1000, default 100) and ``offset``; the answer says the total and the next
offset, so a client walks a list without guessing its end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, Query

from reviewer_app.wire import Page

__all__ = ["PageQuery", "Paging", "page_of"]

T = TypeVar("T")


@dataclass(frozen=True)
class Paging:
    limit: int
    offset: int


def _paging(
    limit: Annotated[int, Query(ge=1, le=1000, description="how many items (1-1000)")] = 100,
    offset: Annotated[int, Query(ge=0, description="how many to skip")] = 0,
) -> Paging:
    return Paging(limit, offset)


PageQuery = Annotated[Paging, Depends(_paging)]


def page_of(items: Sequence[T], paging: Paging) -> Page[T]:
    """The page of ``items`` that ``paging`` asks for."""
    end = paging.offset + paging.limit
    return Page[T](
        items=list(items[paging.offset : end]),
        total=len(items),
        limit=paging.limit,
        offset=paging.offset,
        next_offset=end if end < len(items) else None,
    )

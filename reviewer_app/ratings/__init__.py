"""Ratings files: the import (checked row by row) and the unblinded export."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewer_app.ratings.export import export_ratings
    from reviewer_app.ratings.files import import_ratings

__all__ = ["export_ratings", "import_ratings"]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {"export_ratings": "reviewer_app.ratings.export", "import_ratings": "reviewer_app.ratings.files"}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value

"""Ratings files: the import (checked row by row) and the unblinded export."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.ratings.export import export_ratings
    from reviewer_app.ratings.files import import_ratings

__all__ = ["export_ratings", "import_ratings"]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {"export_ratings": "reviewer_app.ratings.export", "import_ratings": "reviewer_app.ratings.files"}


__getattr__ = lazy_names(__name__, _HOMES)

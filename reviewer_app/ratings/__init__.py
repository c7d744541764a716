"""Ratings files: the import (checked row by row) and the unblinded export."""

from reviewer_app.ratings.export import export_ratings
from reviewer_app.ratings.files import import_ratings

__all__ = ["export_ratings", "import_ratings"]

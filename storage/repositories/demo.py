"""The one unblinding read the demo's seeding needs: which models an assignment shows, left and right, so its
scripted colleagues answer by the models' made-up qualities. For the demo and tests only: nothing served to a
reviewer reads it, and the reviewer's side never imports this module (``tests/test_import_graph.py``).
"""

from __future__ import annotations

from sqlmodel import Session

from storage.models import Assignment, Model
from storage.repositories.review.assignments import item_models


def shown_models(session: Session, assignment_id: int) -> tuple[str, str | None]:
    """The model names behind an assignment as displayed (left, right). Unblinding: for the demo's scripted
    colleagues and for tests only, never for anything served to a reviewer."""
    a = session.get(Assignment, assignment_id)
    assert a is not None
    ids = item_models(session, a.item_id)
    names = []
    for mid in ids:
        if mid is not None:
            model = session.get(Model, mid)
            assert model is not None
            names.append(model.name)
    if len(names) == 1:
        return names[0], None
    return (names[1], names[0]) if a.swapped else (names[0], names[1])

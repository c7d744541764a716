"""The one unblinding read the demo's seeding needs: which models an assignment shows, left and right, so its
scripted colleagues answer by the models' made-up qualities. For the demo and tests only: nothing served to a
reviewer reads it, and the reviewer's side never imports this module (``tests/test_import_graph.py``).
"""

from __future__ import annotations

from sqlalchemy import select as sa_select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from storage.models import Assignment, Item, Model, Output, Sample, Scenario
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


def judged_items(session: Session, batch_id: int) -> list[tuple[int, str, str, str, str | None, int, int]]:
    """Each item a judge rates (no anchors) as (item id, sample key, scenario, model a, model b or None, words of
    output a, of output b): what the demo's recorded judge answers by. Unblinding, like :func:`shown_models`."""
    out_a, out_b = aliased(Output), aliased(Output)
    model_a, model_b = aliased(Model), aliased(Model)
    rows = session.execute(
        sa_select(
            col(Item.id),
            col(Sample.key),
            col(Scenario.name),
            col(model_a.name),
            col(model_b.name),
            col(out_a.n_words),
            col(out_b.n_words),
        )
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .join(model_a, col(model_a.id) == col(out_a.model_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .outerjoin(model_b, col(model_b.id) == col(out_b.model_id))
        .where(col(Item.batch_id) == batch_id, col(Item.is_anchor).is_(False))
        .order_by(col(Item.id))
    ).all()
    return [(int(i), k, s, a, b, int(wa), int(wb or 0)) for i, k, s, a, b, wa, wb in rows if i is not None]

"""Queries behind a model's history: which batches hold outputs of a model (under any of its names).

Unblinded (model names): only the lead's History page and the command line use them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session, col, select

from storage.models import Batch, Model, Output


def batches_with_models(session: Session, names: Sequence[str]) -> list[tuple[Batch, list[str]]]:
    """The batches (not archived) with outputs of their own under any of ``names``, oldest load first, each
    with the names it has outputs under (sorted). A follow-up's anchor items show the baseline's outputs and
    are not its own, so they do not put a batch here."""
    if not names:
        return []
    stmt = (
        select(col(Output.batch_id), col(Model.name))
        .join(Model, col(Model.id) == col(Output.model_id))
        .where(col(Model.name).in_(list(names)))
        .distinct()
    )
    found: dict[int, set[str]] = {}
    for batch_id, name in session.exec(stmt):
        found.setdefault(int(batch_id), set()).add(str(name))
    if not found:
        return []
    batches = session.exec(
        select(Batch)
        .where(col(Batch.id).in_(list(found)), col(Batch.archived_at).is_(None))
        .order_by(col(Batch.created_at), col(Batch.id))
    )
    return [(b, sorted(found[int(b.id or 0)])) for b in batches]


def models_with_outputs(session: Session) -> list[str]:
    """The names of the models with outputs in some batch that is not archived, sorted."""
    stmt = (
        select(col(Model.name))
        .join(Output, col(Output.model_id) == col(Model.id))
        .join(Batch, col(Batch.id) == col(Output.batch_id))
        .where(col(Batch.archived_at).is_(None))
        .distinct()
        .order_by(col(Model.name))
    )
    return [str(n) for n in session.exec(stmt)]

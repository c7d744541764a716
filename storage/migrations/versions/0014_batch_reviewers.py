"""Batches loaded closed, and a batch's own reviewers.

``batch.opened_at``: when the batch was first opened for reviewing; None for a batch loaded and never opened
(loads are closed from now on). Every existing batch was open from its load, so it gets its ``created_at``.

``batch_reviewer``: the people of a batch (chosen at ``assign`` or on the Admin page). A batch with any is
shown to and claimed from by them only; existing batches have none, so they stay open to every reviewer, as
they were.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN on SQLite (batch mode would copy ``batch``, which every other table points to).
    op.add_column("batch", sa.Column("opened_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    op.execute("UPDATE batch SET opened_at = created_at")
    op.create_table(
        "batch_reviewer",
        sa.Column("batch_id", sa.Integer(), sa.ForeignKey("batch.id"), primary_key=True),
        sa.Column("reviewer_id", sa.Integer(), sa.ForeignKey("reviewer.id"), primary_key=True),
        sa.Column("added_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    )
    op.create_index("ix_batch_reviewer_reviewer_id", "batch_reviewer", ["reviewer_id"])


def downgrade() -> None:
    op.drop_index("ix_batch_reviewer_reviewer_id", table_name="batch_reviewer")
    op.drop_table("batch_reviewer")
    op.drop_column(
        "batch", "opened_at"
    )  # plain DROP COLUMN: batch mode would copy ``batch``, which every table points to

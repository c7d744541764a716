"""Adjudication (issue 32): an adjudicator's ruling on an item's disputed dimension, with its reason; one per item
and dimension (a new ruling replaces the old).

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    text = sqlmodel.sql.sqltypes.AutoString
    moment = sqlmodel.sql.sqltypes.UTCDateTime
    op.create_table(
        "ruling",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("batch_id", sa.Integer(), sa.ForeignKey("batch.id"), nullable=False),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("item.id"), nullable=False),
        sa.Column("dimension", text(), nullable=False),
        sa.Column("value", text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("adjudicator_id", sa.Integer(), sa.ForeignKey("reviewer.id"), nullable=False),
        sa.Column("created_at", moment(), nullable=False),
        sa.Column("updated_at", moment(), nullable=False),
        sa.UniqueConstraint("item_id", "dimension"),
    )
    for column in ("batch_id", "item_id", "adjudicator_id"):
        op.create_index(f"ix_ruling_{column}", "ruling", [column])


def downgrade() -> None:
    op.drop_table("ruling")

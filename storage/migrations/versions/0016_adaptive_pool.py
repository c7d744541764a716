"""Adaptive allocation in the pool (issue 30, section 2).

``item.held_back``: an item of a batch whose rubric allocates adaptively is held back from the pool until its
sample is released (a whole sample at a time, by ``review.allocation``); every other item is false, so the
pool of a uniform batch is what it was. The pool index ``ix_item_pool`` gains the column before the key, so a
claim's walk reads released items only, through the index, as before.

``pool_scenario``: per scenario of an adaptive batch, the state its last refresh computed from the ratings
(``results.allocation``): burn-in, open, settled or not settling, its complete samples, the samples to its
nearest decision and what a sample costs, the samples held back then and released since, and whether it is
closed to the pool.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ALTER TABLE, not a batch copy: SQLite would drop and rebuild ``item``, which assignments point to.
    op.add_column("item", sa.Column("held_back", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.drop_index("ix_item_pool", table_name="item")
    op.create_index("ix_item_pool", "item", ["batch_id", "is_gold", "is_open", "held_back", "pool_key"], unique=False)
    op.create_table(
        "pool_scenario",
        sa.Column("batch_id", sa.Integer(), sa.ForeignKey("batch.id"), primary_key=True),
        sa.Column("scenario_id", sa.Integer(), sa.ForeignKey("scenario.id"), primary_key=True),
        sa.Column("state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("complete", sa.Integer(), nullable=False),
        sa.Column("open_pairs", sa.Integer(), nullable=False),
        sa.Column("nearest", sa.Integer(), nullable=False),
        sa.Column("cost", sa.Integer(), nullable=False),
        sa.Column("held", sa.Integer(), nullable=False),
        sa.Column("released", sa.Integer(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("refreshed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pool_scenario")
    op.drop_index("ix_item_pool", table_name="item")
    op.create_index("ix_item_pool", "item", ["batch_id", "is_gold", "is_open", "pool_key"], unique=False)
    op.drop_column("item", "held_back")  # SQLite 3.35+ drops a column in place

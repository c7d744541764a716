"""Follow-up batches (``load-batch --follow-up``) with anchor items, and how a batch's outputs were made.

``batch.baseline_batch_id``: the batch a follow-up reuses the rubric and samples of (NULL: not a follow-up);
``batch.anchor_share``: the share of its samples shown again as anchors; ``batch.generation_json``: what
``generate`` recorded in each output's metadata (per model its API model id and sampling parameters, and the
repeats), for ``rerun``. ``item.is_anchor``: the item shows the baseline's own outputs again (its output ids
point into the baseline batch); anchors count for no model's score. Existing rows are ordinary batches and
items: NULL and false.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Not batch mode: on SQLite batch mode would copy ``batch`` (which every other table points to) to add
    # the foreign key. SQLite takes an inline REFERENCES on a column added with ALTER TABLE (alembic's
    # add_column would try an ALTER of a constraint instead); PostgreSQL gets the usual named constraint.
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE batch ADD COLUMN baseline_batch_id INTEGER REFERENCES batch (id)")
    else:
        op.add_column("batch", sa.Column("baseline_batch_id", sa.Integer(), nullable=True))
        op.create_foreign_key("batch_baseline_batch_id_fkey", "batch", "batch", ["baseline_batch_id"], ["id"])
    op.create_index(op.f("ix_batch_baseline_batch_id"), "batch", ["baseline_batch_id"], unique=False)
    op.add_column("batch", sa.Column("anchor_share", sa.Float(), nullable=True))
    op.add_column("batch", sa.Column("generation_json", sa.Text(), nullable=True))
    op.add_column("item", sa.Column("is_anchor", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite has it since 3.35), not batch mode: batch mode copies the table into a new
    # one, and SQLite's foreign keys (on, see storage.engine) refuse dropping a table other rows point to.
    op.drop_column("item", "is_anchor")
    op.drop_column("batch", "generation_json")
    op.drop_column("batch", "anchor_share")
    op.drop_index(op.f("ix_batch_baseline_batch_id"), table_name="batch")
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint("batch_baseline_batch_id_fkey", "batch", type_="foreignkey")
    op.drop_column("batch", "baseline_batch_id")

"""Masked output text for reviewers, and one batch per content hash.

``output.shown_text`` holds what reviewers see when a batch is loaded with ``--on-leak mask`` (the output
with the names it leaks replaced by "[model name]"); reports keep reading ``output.text``.
``batch.content_hash`` becomes unique, so two loads of the same content at the same moment cannot both
write a batch (PostgreSQL let both through). Batches that were duplicated before this revision keep their
rows: every copy after the first gets its hash suffixed with ``#duplicate-<id>``.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "UPDATE batch SET content_hash = content_hash || '#duplicate-' || CAST(id AS VARCHAR) "
        "WHERE id NOT IN (SELECT MIN(id) FROM batch GROUP BY content_hash)"
    )
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_batch_content_hash"))
        batch_op.create_index(batch_op.f("ix_batch_content_hash"), ["content_hash"], unique=True)
    with op.batch_alter_table("output", schema=None) as batch_op:
        batch_op.add_column(sa.Column("shown_text", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("output", schema=None) as batch_op:
        batch_op.drop_column("shown_text")
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_batch_content_hash"))
        batch_op.create_index(batch_op.f("ix_batch_content_hash"), ["content_hash"], unique=False)

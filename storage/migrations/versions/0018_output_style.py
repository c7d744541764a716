"""Output style counts (issue 32): each output's Markdown headers, list items, bold spans and fenced code
blocks, counted at load (``reviewer_app.domain.style``) for the report's style-controlled rankings; every output
already stored is counted here the same way, a chunk of texts at a time.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

from reviewer_app.domain.style import style_counts

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

COLUMNS = ("n_headers", "n_list_items", "n_bold", "n_code_blocks")
_CHUNK = 2000


def upgrade() -> None:
    # Plain ALTER TABLE (SQLite has DROP COLUMN since 3.35), as 0009 does: a batch copy of ``output`` would be
    # dropped under the foreign keys of every item and rating that point to it.
    for name in COLUMNS:
        op.add_column("output", sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
    conn = op.get_bind()
    last = 0
    while True:
        rows = conn.execute(
            sa.text("SELECT id, text FROM output WHERE id > :last ORDER BY id LIMIT :n"), {"last": last, "n": _CHUNK}
        ).all()
        if not rows:
            break
        updates = []
        for oid, text in rows:
            counts = style_counts(text)
            if any(counts):
                updates.append({"i": int(oid), **dict(zip(COLUMNS, counts, strict=True))})
        if updates:
            conn.execute(
                sa.text(
                    "UPDATE output SET n_headers = :n_headers, n_list_items = :n_list_items, n_bold = :n_bold, "
                    "n_code_blocks = :n_code_blocks WHERE id = :i"
                ),
                updates,
            )
        last = int(rows[-1][0])


def downgrade() -> None:
    for name in reversed(COLUMNS):
        op.drop_column("output", name)

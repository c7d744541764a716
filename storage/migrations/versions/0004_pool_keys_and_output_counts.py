"""A per-item pool key for flat next-item claims, and each output's length stored at load.

``item.pool_key``: a 31-bit key drawn from the batch's seed and the item id, indexed with the batch and the
gold flag, so a pool claim asks the database for the next few free items at a random point of that order
(``LIMIT``) instead of reading and sorting every free item (O(batch) per Next).

``output.n_chars`` / ``output.n_words``: the output's length in characters and whitespace-separated words,
counted once at load, so reports no longer read every output's full text only to measure it.

Existing rows are filled here with the same formulas the loader uses (written out, so that this revision
does not change if the application's code does).

Revision ID: 0004
Revises: 0003
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_CHUNK = 5000


def _pool_key(seed: int, item_id: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:pool-key:{item_id}".encode()).digest()[:4], "big") >> 1


def upgrade() -> None:
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pool_key", sa.Integer(), nullable=False, server_default="0"))
        batch_op.create_index("ix_item_pool", ["batch_id", "is_gold", "pool_key"], unique=False)
    with op.batch_alter_table("output", schema=None) as batch_op:
        batch_op.add_column(sa.Column("n_chars", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("n_words", sa.Integer(), nullable=False, server_default="0"))

    conn = op.get_bind()
    items = conn.execute(sa.text("SELECT item.id, batch.seed FROM item JOIN batch ON batch.id = item.batch_id"))
    updates = [{"k": _pool_key(int(seed), int(item_id)), "i": int(item_id)} for item_id, seed in items]
    for start in range(0, len(updates), _CHUNK):
        conn.execute(sa.text("UPDATE item SET pool_key = :k WHERE id = :i"), updates[start : start + _CHUNK])
    last = 0
    while True:  # outputs can be large: a chunk of texts at a time
        rows = conn.execute(
            sa.text("SELECT id, text FROM output WHERE id > :last ORDER BY id LIMIT :n"), {"last": last, "n": _CHUNK}
        ).all()
        if not rows:
            break
        conn.execute(
            sa.text("UPDATE output SET n_chars = :c, n_words = :w WHERE id = :i"),
            [{"c": len(text), "w": len(text.split()), "i": int(oid)} for oid, text in rows],
        )
        last = int(rows[-1][0])


def downgrade() -> None:
    with op.batch_alter_table("output", schema=None) as batch_op:
        batch_op.drop_column("n_words")
        batch_op.drop_column("n_chars")
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.drop_index("ix_item_pool")
        batch_op.drop_column("pool_key")

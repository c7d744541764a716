"""A per-batch secret behind everything a reviewer can observe.

``batch.secret``: 256 random bits (hex) from :mod:`secrets`, drawn here for every existing batch and at load
for new ones. Labels, queue orders, sides and pool claims are drawn from it (``reviewer_app.domain.
keyed_random``) instead of from the rubric's seed, which a reviewer could guess or brute-force (31 bits).

Existing batches: the items' pool keys are drawn again from the new secret, so that pool claims from now on
walk an order nobody can compute from the seed. Labels, sides and queue positions of assignments already
made stay as they are (reviewers may have seen them, and answers refer to them); new plans and claims use
the secret. The formula is written out here, so that this revision does not change if the application's
code does.

Revision ID: 0013
Revises: 0012
"""

import hashlib
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_CHUNK = 5000


def _pool_key(secret: bytes, item_id: int) -> int:
    context = b"blind-review/keyed/v1\x00" + repr(("pool-key", item_id)).encode()
    return int.from_bytes(hashlib.blake2b(context, key=secret, digest_size=32).digest(), "big") >> (256 - 31)


def upgrade() -> None:
    # Plain ADD COLUMN on SQLite (batch mode would copy ``batch``, which every other table points to).
    op.add_column("batch", sa.Column("secret", sa.String(), nullable=False, server_default=""))
    conn = op.get_bind()
    for (batch_id,) in conn.execute(sa.text("SELECT id FROM batch ORDER BY id")).all():
        secret = secrets.token_hex(32)
        conn.execute(sa.text("UPDATE batch SET secret = :s WHERE id = :i"), {"s": secret, "i": int(batch_id)})
        key = bytes.fromhex(secret)
        last = 0
        while True:
            ids = conn.execute(
                sa.text("SELECT id FROM item WHERE batch_id = :b AND id > :last ORDER BY id LIMIT :n"),
                {"b": int(batch_id), "last": last, "n": _CHUNK},
            ).all()
            if not ids:
                break
            conn.execute(
                sa.text("UPDATE item SET pool_key = :k WHERE id = :i"),
                [{"k": _pool_key(key, int(i)), "i": int(i)} for (i,) in ids],
            )
            last = int(ids[-1][0])
    if conn.dialect.name == "postgresql":
        op.alter_column("batch", "secret", server_default=None)


def downgrade() -> None:
    # The pool keys keep their secret-drawn values: any 31-bit key serves the pool walk.
    op.drop_column("batch", "secret")

"""When a batch was archived.

``batch.archived_at``: set when an admin archives a batch (one loaded by mistake, or one that is done
with). An archived batch is closed, leaves every list (the admin's and the lead's pages, the reviewer's
batch choice, ``list-batches`` without ``--archived``) and keeps all its rows; restoring sets it back to
NULL. Existing batches are not archived.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.add_column(sa.Column("archived_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.drop_column("archived_at")

"""Titles reviewers see instead of a batch's or a scenario's name.

``batch.display_name`` and ``scenario.display_name``: the title an admin set for reviewers (``blind-review
set-titles``, or the Admin page). NULL means the name itself, or a neutral "Batch <id>" / "Scenario <n>"
when the name names one of the batch's models; that is decided when a page is drawn, from the stored model
names (``reviewer_app.batches.titles``), so batches loaded before this revision are covered without
anything computed here. Leads and reports keep the real names. Existing rows get NULL.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("batch", schema=None) as batch_op:
        batch_op.add_column(sa.Column("display_name", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
    with op.batch_alter_table("scenario", schema=None) as batch_op:
        batch_op.add_column(sa.Column("display_name", sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite has it since 3.35), not batch mode: batch mode copies the table into a new
    # one, and SQLite's foreign keys (on, see storage.engine) refuse dropping a table other rows point to.
    op.drop_column("scenario", "display_name")
    op.drop_column("batch", "display_name")

"""Automatic checks on outputs (instruction following and format).

``sample.checks_json``: the sample's own checks (NULL: none; the rubric may add a scenario's);
``output.check_results``: the results, a JSON list of [name, passed, detail] (NULL: no checks). Existing
batches have no checks.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sample", sa.Column("checks_json", sa.Text(), nullable=True))
    op.add_column("output", sa.Column("check_results", sa.Text(), nullable=True))


def downgrade() -> None:
    # Plain DROP COLUMN (SQLite has it since 3.35), not batch mode: batch mode would copy the tables, and
    # SQLite's foreign keys refuse dropping a table other rows point to (see 0008).
    op.drop_column("output", "check_results")
    op.drop_column("sample", "checks_json")

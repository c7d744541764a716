"""API tokens (issue 31): a person's bearer tokens for the REST API, stored as SHA-256 hashes only, with a
label, an optional expiry, the moment they were revoked and last used.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_token",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("reviewer_id", sa.Integer(), sa.ForeignKey("reviewer.id"), nullable=False),
        sa.Column("label", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("revoked_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("last_used_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    )
    op.create_index("ix_api_token_reviewer_id", "api_token", ["reviewer_id"])
    op.create_index("ix_api_token_token_hash", "api_token", ["token_hash"], unique=True)


def downgrade() -> None:
    op.drop_table("api_token")

"""Per-browser sign-in sessions, and when each sign-in link was issued.

``signin_session``: a person's link is exchanged for one session per browser (only the token's SHA-256
is stored); signing out ends that session and refuses the link in that browser; the admin revoking a
person or replacing their link ends all of them. ``reviewer.link_issued_at`` dates the current link for
``BLIND_REVIEW_LINK_DAYS``; links made before this revision count from the person's ``created_at``.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signin_session",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("link_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("browser_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("last_seen_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("ended_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("ended_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.ForeignKeyConstraint(["reviewer_id"], ["reviewer.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("signin_session", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_signin_session_link_hash"), ["link_hash"], unique=False)
        batch_op.create_index(batch_op.f("ix_signin_session_reviewer_id"), ["reviewer_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_signin_session_token_hash"), ["token_hash"], unique=True)
    with op.batch_alter_table("reviewer", schema=None) as batch_op:
        batch_op.add_column(sa.Column("link_issued_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reviewer", schema=None) as batch_op:
        batch_op.drop_column("link_issued_at")
    with op.batch_alter_table("signin_session", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_signin_session_token_hash"))
        batch_op.drop_index(batch_op.f("ix_signin_session_reviewer_id"))
        batch_op.drop_index(batch_op.f("ix_signin_session_link_hash"))
    op.drop_table("signin_session")

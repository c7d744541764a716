"""Webhooks (issue 31): the URLs admins register (with the secret their deliveries are signed with), the durable
outbox of events (a UUID each, deduplicated by what happened), and one delivery row per event and hook with its
attempts, next attempt and last answer.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    text = sqlmodel.sql.sqltypes.AutoString
    moment = sqlmodel.sql.sqltypes.UTCDateTime
    op.create_table(
        "webhook",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.Column("secret", text(), nullable=False),
        sa.Column("label", text(), nullable=False),
        sa.Column("created_by", text(), nullable=True),
        sa.Column("created_at", moment(), nullable=False),
        sa.Column("disabled_at", moment(), nullable=True),
    )
    op.create_table(
        "webhook_event",
        sa.Column("id", text(), primary_key=True),
        sa.Column("kind", text(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=True),
        sa.Column("dedup_key", text(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", moment(), nullable=False),
    )
    op.create_index("ix_webhook_event_kind", "webhook_event", ["kind"])
    op.create_index("ix_webhook_event_dedup_key", "webhook_event", ["dedup_key"], unique=True)
    op.create_table(
        "webhook_delivery",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event_id", text(), sa.ForeignKey("webhook_event.id"), nullable=False),
        sa.Column("webhook_id", sa.Integer(), sa.ForeignKey("webhook.id"), nullable=False),
        sa.Column("status", text(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", moment(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_ms", sa.Float(), nullable=True),
        sa.Column("delivered_at", moment(), nullable=True),
        sa.Column("updated_at", moment(), nullable=False),
        sa.UniqueConstraint("event_id", "webhook_id"),
    )
    for column in ("event_id", "webhook_id", "status", "next_attempt_at"):
        op.create_index(f"ix_webhook_delivery_{column}", "webhook_delivery", [column])


def downgrade() -> None:
    op.drop_table("webhook_delivery")
    op.drop_table("webhook_event")
    op.drop_table("webhook")

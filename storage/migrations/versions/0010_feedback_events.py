"""Production feedback events (``blind-review import-feedback``), read by ``blind-review monitor``.

``feedback_event``: one row per feedback event from production: the model's name as the feedback file gives
it (no link to any batch: feedback models need not have been reviewed), the scenario if given, the time as
UTC milliseconds since the epoch (an integer, so both dialects store and compare it exactly and the monitor
reads a million of them without parsing text), the feedback on its declared scale (``scale_min``..``scale_max``;
-1..1 is thumbs), latency and time to first token, the file it came from and when it was imported.
``event_key`` makes re-imports idempotent: ``request:<request_id>`` when the row has one, else
``content:<digest of the row's content and its occurrence>``; ``content_digest`` tells a changed event with the
same request id from the same one sent again. No existing rows: the table is new.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import UTCDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feedback_event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_key", sa.String(), nullable=False),
        sa.Column("content_digest", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("scenario", sa.String(), nullable=True),
        sa.Column("ts_ms", sa.BigInteger(), nullable=False),
        sa.Column("feedback", sa.Float(), nullable=False),
        sa.Column("scale_min", sa.Float(), nullable=False),
        sa.Column("scale_max", sa.Float(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("ttft_ms", sa.Float(), nullable=True),
        sa.Column("source_file", sa.String(), nullable=False),
        sa.Column("imported_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_key"),
    )
    op.create_index("ix_feedback_event_model_ts_ms", "feedback_event", ["model", "ts_ms"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_feedback_event_model_ts_ms", table_name="feedback_event")
    op.drop_table("feedback_event")

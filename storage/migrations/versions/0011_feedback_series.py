"""Production feedback events point to a series (model, scenario, scale) instead of repeating its names.

``feedback_series``: one row per distinct (model, scenario, scale_min, scale_max) of the stored feedback, with
``scenario`` '' when the feedback gave none (so the unique constraint holds for it too: NULLs never collide).
``feedback_event.series_id`` replaces the event's ``model``, ``scenario``, ``scale_min`` and ``scale_max``,
and the (model, ts_ms) index becomes (series_id, ts_ms). The reason is the monitor's read: a million events as
numbers only take SQLite's driver 0.9 s instead of 2.4 s with two strings per row, which is what kept
``blind-review monitor`` over its 5 s on a million events.

Existing events are moved over: one series per distinct combination, each event given its series' id, then
the four columns dropped (SQLite copies the table for that; nothing points to it). The downgrade puts the
columns back from the series and drops the table.

No foreign key from ``series_id``: PostgreSQL checks one with a trigger per row, which made an import of a
million events 10 s (a quarter) slower. Only ``import-feedback`` writes events, with the ids it has just read
or added in the same transaction, and nothing deletes a series.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feedback_series",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("scenario", sa.String(), nullable=False),
        sa.Column("scale_min", sa.Float(), nullable=False),
        sa.Column("scale_max", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("model", "scenario", "scale_min", "scale_max"),
    )
    op.add_column("feedback_event", sa.Column("series_id", sa.Integer(), nullable=True))
    op.execute(
        "INSERT INTO feedback_series (model, scenario, scale_min, scale_max) "
        "SELECT model, COALESCE(scenario, ''), scale_min, scale_max FROM feedback_event "
        "GROUP BY model, COALESCE(scenario, ''), scale_min, scale_max ORDER BY min(id)"
    )
    op.execute(
        "UPDATE feedback_event SET series_id = (SELECT s.id FROM feedback_series s "
        "WHERE s.model = feedback_event.model AND s.scenario = COALESCE(feedback_event.scenario, '') "
        "AND s.scale_min = feedback_event.scale_min AND s.scale_max = feedback_event.scale_max)"
    )
    op.drop_index("ix_feedback_event_model_ts_ms", table_name="feedback_event")
    with op.batch_alter_table("feedback_event", schema=None) as batch_op:
        batch_op.drop_column("model")
        batch_op.drop_column("scenario")
        batch_op.drop_column("scale_min")
        batch_op.drop_column("scale_max")
        batch_op.alter_column("series_id", existing_type=sa.Integer(), nullable=False)
    op.create_index("ix_feedback_event_series_ts_ms", "feedback_event", ["series_id", "ts_ms"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_feedback_event_series_ts_ms", table_name="feedback_event")
    with op.batch_alter_table("feedback_event", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("scenario", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("scale_min", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("scale_max", sa.Float(), nullable=True))
    for column, value in (
        ("model", "s.model"),
        ("scenario", "NULLIF(s.scenario, '')"),
        ("scale_min", "s.scale_min"),
        ("scale_max", "s.scale_max"),
    ):
        op.execute(
            f"UPDATE feedback_event SET {column} = (SELECT {value} FROM feedback_series s "
            "WHERE s.id = feedback_event.series_id)"
        )
    with op.batch_alter_table("feedback_event", schema=None) as batch_op:
        batch_op.drop_column("series_id")
        batch_op.alter_column("model", existing_type=sa.String(), nullable=False)
        batch_op.alter_column("scale_min", existing_type=sa.Float(), nullable=False)
        batch_op.alter_column("scale_max", existing_type=sa.Float(), nullable=False)
    op.create_index("ix_feedback_event_model_ts_ms", "feedback_event", ["model", "ts_ms"], unique=False)
    op.drop_table("feedback_series")

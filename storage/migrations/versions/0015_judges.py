"""LLM judges and their judgements (issue 29).

``judge``: one judge model with one prompt template (a rerun with another template is another judge).
``judgement``: a judge's answer to one item in one order and repeat, with its raw reply, latency and tokens,
or why it failed. Judges are not reviewers: nothing existing changes, and no panel statistic reads these
tables.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("api_model", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("base_url", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("template_digest", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("template_text", sa.Text(), nullable=False),
        sa.Column("params_json", sa.Text(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.UniqueConstraint("name", "api_model", "template_digest"),
    )
    op.create_index("ix_judge_name", "judge", ["name"])
    op.create_table(
        "judgement",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("judge_id", sa.Integer(), sa.ForeignKey("judge.id"), nullable=False),
        sa.Column("batch_id", sa.Integer(), sa.ForeignKey("batch.id"), nullable=False),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("item.id"), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("swapped", sa.Boolean(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("answers_json", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("raw_response", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.UniqueConstraint("judge_id", "item_id", "repeat", "swapped"),
    )
    op.create_index("ix_judgement_judge_id", "judgement", ["judge_id"])
    op.create_index("ix_judgement_batch_id", "judgement", ["batch_id"])
    op.create_index("ix_judgement_item_id", "judgement", ["item_id"])


def downgrade() -> None:
    op.drop_table("judgement")
    op.drop_table("judge")

"""Reviewers' half-filled forms.

``review_draft``: one row per assignment with the answers chosen so far, the comment and the "can't judge"
box and reason, written as the reviewer fills the form and deleted when the answer is submitted, so a
refresh, a crash or a server restart brings the form back as it was. Only the reviewer's own input is
stored. The assignment's foreign key cascades (an assignment removed from a queue takes its draft along);
``batch_id`` lets a deleted batch take its drafts too. Existing assignments start without a draft.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_draft",
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=False),
        sa.Column("answers_json", sa.Text(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("cant_judge", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["assignment_id"], ["assignment.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["batch_id"], ["batch.id"]),
        sa.ForeignKeyConstraint(["reviewer_id"], ["reviewer.id"]),
        sa.PrimaryKeyConstraint("assignment_id"),
    )
    with op.batch_alter_table("review_draft", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_draft_batch_id"), ["batch_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_review_draft_reviewer_id"), ["reviewer_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("review_draft", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_review_draft_reviewer_id"))
        batch_op.drop_index(batch_op.f("ix_review_draft_batch_id"))
    op.drop_table("review_draft")

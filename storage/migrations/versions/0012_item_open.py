"""Whether an item can still take a reviewer: a flat Next when nothing is left.

``item.is_open``: false once the item holds as many done first showings as its batch's overlap (``k``), so no
pool claim can take it whatever else happens (a pending reservation only adds holders). The pool walk reads
the index ``ix_item_pool`` (now ``batch_id, is_gold, is_open, pool_key``) over open items only: a batch with
nothing left costs two empty index reads instead of a grouped pass over all its assignments (185 ms at
100,000 outputs on SQLite, O(batch)).

The database keeps the flag itself, so that no way of writing an assignment (a submit, "can't judge", an
import, a deleted reviewer, a deleted batch, a test's raw insert) can leave it wrong: a trigger counts the
item's done first showings again whenever an assignment that is or was one is written. SQLite: row triggers
(each a count over the item's few assignments by ``ix_assignment_item_id``). PostgreSQL: statement triggers
with transition tables, so a bulk import (COPY) recounts each touched item once per statement instead of
once per row. A batch's overlap is fixed when it is loaded; if that ever changes, its items' flags must be
counted again (``_RECOUNT`` below is the statement).

Existing rows are counted here.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# The open flag of the items ``{ids}`` (a subquery of item ids), counted from scratch.
_RECOUNT = """
UPDATE item SET is_open = (
    (SELECT count(*) FROM assignment a
     WHERE a.item_id = item.id AND a.occurrence = 0 AND a.status = 'done')
    < (SELECT b.overlap FROM batch b WHERE b.id = item.batch_id)
)
WHERE item.id IN ({ids})
"""

_DONE_NEW = "NEW.occurrence = 0 AND NEW.status = 'done'"
_DONE_OLD = "OLD.occurrence = 0 AND OLD.status = 'done'"

_SQLITE = [
    f"""CREATE TRIGGER item_open_insert AFTER INSERT ON assignment WHEN {_DONE_NEW}
BEGIN {_RECOUNT.format(ids="NEW.item_id")}; END""",
    f"""CREATE TRIGGER item_open_update AFTER UPDATE OF status, occurrence, item_id ON assignment
WHEN ({_DONE_NEW}) OR ({_DONE_OLD})
BEGIN {_RECOUNT.format(ids="NEW.item_id, OLD.item_id")}; END""",
    f"""CREATE TRIGGER item_open_delete AFTER DELETE ON assignment WHEN {_DONE_OLD}
BEGIN {_RECOUNT.format(ids="OLD.item_id")}; END""",
]

_DONE_ROWS = "SELECT item_id FROM {t} WHERE occurrence = 0 AND status = 'done'"
# A bulk import sets ``blind_review.recount_later`` for its own transaction and counts the batch once at its
# end (``storage.repositories.ratings.open_flags_recounted_once``): its COPY of 300,000 answers then costs no
# trigger work (25 s instead of 18 s for the import otherwise).
_LATER = "IF current_setting('blind_review.recount_later', true) = 'on' THEN RETURN NULL; END IF;"
_POSTGRES = [
    f"""CREATE FUNCTION item_open_from_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {_LATER} {_RECOUNT.format(ids=_DONE_ROWS.format(t="new_rows"))}; RETURN NULL; END $$""",
    f"""CREATE FUNCTION item_open_from_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {_LATER} {_RECOUNT.format(ids=_DONE_ROWS.format(t="old_rows"))}; RETURN NULL; END $$""",
    f"""CREATE FUNCTION item_open_from_both() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {_LATER} {_RECOUNT.format(ids=_DONE_ROWS.format(t="new_rows") + " UNION " + _DONE_ROWS.format(t="old_rows"))};
RETURN NULL; END $$""",
    """CREATE TRIGGER item_open_insert AFTER INSERT ON assignment REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION item_open_from_new()""",
    """CREATE TRIGGER item_open_update AFTER UPDATE ON assignment REFERENCING OLD TABLE AS old_rows
NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION item_open_from_both()""",
    """CREATE TRIGGER item_open_delete AFTER DELETE ON assignment REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION item_open_from_old()""",
]


def upgrade() -> None:
    # Plain ALTER TABLE, not a batch copy: SQLite would drop and rebuild ``item``, which assignments point to.
    op.add_column("item", sa.Column("is_open", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.drop_index("ix_item_pool", table_name="item")
    op.create_index("ix_item_pool", "item", ["batch_id", "is_gold", "is_open", "pool_key"], unique=False)
    op.execute(_RECOUNT.format(ids="SELECT id FROM item"))
    for statement in _POSTGRES if op.get_bind().dialect.name == "postgresql" else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    for trigger in ("item_open_insert", "item_open_update", "item_open_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}" + (" ON assignment" if _postgres() else ""))
    if _postgres():
        for function in ("item_open_from_new", "item_open_from_old", "item_open_from_both"):
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    op.drop_index("ix_item_pool", table_name="item")
    op.create_index("ix_item_pool", "item", ["batch_id", "is_gold", "pool_key"], unique=False)
    op.drop_column("item", "is_open")  # SQLite 3.35+ drops a column in place


def _postgres() -> bool:
    return op.get_bind().dialect.name == "postgresql"

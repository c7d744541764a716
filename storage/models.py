"""SQLModel tables.

The model's identity (``Model``) is kept in its own table and reached only through ``Output.model_id``;
nothing that is served to a reviewer (``Assignment`` with its per-reviewer label, ``Rating``) carries a model
or a file name. Pages get view objects built in ``reviewer_app.review.reviews`` that have no such field.

Modes, statuses and roles are typed with the domain's ``StrEnum``s but stored as plain strings
(:class:`EnumString`), so the schema has no database enum types and a new member needs no migration.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, Text, UniqueConstraint
from sqlalchemy import false as sa_false
from sqlalchemy import true as sa_true
from sqlalchemy.engine import Dialect
from sqlmodel import AutoString, Field, SQLModel

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Mode, Role
from reviewer_app.domain.keyed_random import keyed_int, new_secret

E = TypeVar("E", bound=StrEnum)


def utcnow() -> datetime:
    return datetime.now(UTC)


POOL_KEY_BITS = 31  # fits PostgreSQL's INTEGER


def pool_key(secret: bytes, item_id: int) -> int:
    """The item's place in its batch's pool order: keyed by the batch's secret (``Batch.secret``), so that
    nobody without the database can tell which item a claim will reach, nor the plan's order of items."""
    return keyed_int(secret, POOL_KEY_BITS, "pool-key", item_id)


def text_counts(text: str) -> tuple[int, int]:
    """(characters, whitespace-separated words) of an output, as stored in ``Output.n_chars``/``n_words``."""
    return len(text), len(text.split())


class EnumString(AutoString, Generic[E]):
    """A ``StrEnum`` column with the DDL of a plain ``str`` field (VARCHAR), read back as enum members.

    Writes pass strings through unchanged (a member is written as its value), so comparing the column with
    any string behaves as before; reading a value that is not a member raises ``ValueError``.
    """

    cache_ok = True

    def __init__(self, enum: type[E]) -> None:
        super().__init__()
        self.enum = enum
        self._members = {member.value: member for member in enum}  # a dict lookup per row read

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else str(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> E | None:
        if value is None:
            return None
        member = self._members.get(value)
        return member if member is not None else self.enum(value)  # the enum's own ValueError


class Batch(SQLModel, table=True):
    """One loaded eval set: its ``mode`` (rating or pairwise), overlap k, seed and rubric; ``status`` is open
    (reviewers may submit) or closed; an archived batch (``archived_at`` set) is also closed and hidden."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    content_hash: str = Field(index=True, unique=True)  # the files, the images and the rubric: one batch each
    mode: Mode = Field(sa_type=EnumString(Mode))
    overlap: int
    seed: int  # the rubric's seed or a drawn one: the plan's who-reviews-what and the report's bootstrap
    # 256 random bits (hex) behind everything a reviewer can observe: labels, queue order, sides, pool order
    # (``reviewer_app.domain.keyed_random``). Server-side only: never in a rubric, page, export or log.
    secret: str = Field(default_factory=new_secret, repr=False)
    rubric_toml: str = Field(sa_column=Column(Text, nullable=False))
    rubric_json: str = Field(sa_column=Column(Text, nullable=False))
    status: BatchStatus = Field(default=BatchStatus.CLOSED, sa_type=EnumString(BatchStatus))
    # When the batch was first opened for reviewing (None: loaded and never opened yet, so reviewers are told
    # nothing of it). Loads are closed until an admin opens them.
    opened_at: datetime | None = None
    source_files: str = Field(default="[]", sa_column=Column(Text, nullable=False))  # admins only
    created_at: datetime = Field(default_factory=utcnow)
    # Set when an admin archives the batch (loaded by mistake, or done with): it then leaves every list and
    # takes no ratings, but keeps its rows; None again when restored.
    archived_at: datetime | None = None
    # The title reviewers see instead of ``name``, set by an admin (None: ``name``, or "Batch <id>" when the
    # name names a model; see ``reviewer_app.batches.titles``). Leads and reports keep ``name``.
    display_name: str | None = None
    # A follow-up batch (``load-batch --follow-up``): the batch whose rubric and samples it reuses, and the
    # share of that batch's samples whose outputs it shows again as anchor items (None: not a follow-up).
    baseline_batch_id: int | None = Field(default=None, foreign_key="batch.id", index=True)
    anchor_share: float | None = None
    # How the outputs were made when ``generate`` made them (JSON: per model its api_model and sampling
    # parameters, and the repeats; never a key), for ``rerun``; None for outputs from elsewhere.
    generation_json: str | None = Field(default=None, sa_column=Column(Text))


class Scenario(SQLModel, table=True):
    """A batch's scenario; ``display_name`` is the title an admin set for reviewers (None: ``name``, or
    "Scenario <n>" when the name names a model)."""

    __table_args__ = (UniqueConstraint("batch_id", "name"),)
    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    name: str
    display_name: str | None = None


class Sample(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("batch_id", "key"),)
    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    scenario_id: int = Field(foreign_key="scenario.id", index=True)
    key: str  # the batch file's sample_id
    prompt_json: str = Field(sa_column=Column(Text, nullable=False))  # JSON: a string or a message list
    reference: str | None = Field(default=None, sa_column=Column(Text))
    criteria: str | None = Field(default=None, sa_column=Column(Text))
    images_json: str = Field(default="[]", sa_column=Column(Text, nullable=False))  # content hashes
    # The automatic checks every output of the sample is put through at load (the sample's own and its
    # scenario's in the rubric), as a JSON list of check objects (see ``domain.checks``); NULL: none.
    checks_json: str | None = Field(default=None, sa_column=Column(Text))


class Model(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)


class Output(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("sample_id", "model_id", "repeat"),)
    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    sample_id: int = Field(foreign_key="sample.id", index=True)
    model_id: int = Field(foreign_key="model.id", index=True)
    repeat: int = 0
    text: str = Field(sa_column=Column(Text, nullable=False))
    metadata_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    leak_words: str = Field(default="", sa_column=Column(Text, nullable=False))  # comma-separated matches
    # What reviewers see instead of ``text`` (leaked names masked, ``--on-leak mask``); NULL: the text itself.
    shown_text: str | None = Field(default=None, sa_column=Column(Text))
    excluded: bool = False
    # The text's length, counted once at load (reports read these, not every output's full text).
    n_chars: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    n_words: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # Its style, counted once at load (``reviewer_app.domain.style``): what the report's style control holds fixed.
    n_headers: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    n_list_items: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    n_bold: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    n_code_blocks: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # The automatic checks' results, run once at load: a JSON list of [name, passed, detail] in the order the
    # checks ran; NULL: the output had no checks. In the output's own row, not a table of its own: a load
    # writes one row per output either way, where a row per output and check (300,000 for 100,000 outputs
    # with three checks) cost as much time again as running the checks.
    check_results: str | None = Field(default=None, sa_column=Column(Text))


class Item(SQLModel, table=True):
    """The unit a reviewer judges: one output (rating mode) or a pair of outputs of one sample (pairwise).

    ``output_b_id`` is the canonical right-hand output of a pair; what a reviewer sees is decided per
    assignment (``Assignment.swapped``). ``pool_key`` is a 31-bit key drawn from the batch's secret
    (:func:`pool_key`): pool claims walk the items in this order from a private random point, so the
    database hands over the next few free items through an index instead of every free item being sorted.
    ``held_back`` keeps an adaptive batch's item out of the pool until its sample is released. ``is_open`` is
    false once the item holds its batch's overlap of done first showings: no claim can take it,
    so the walk skips it through the same index. The database keeps it (triggers of migration 0012, on every
    write of an assignment that is or was such an answer), except inside a bulk import, which counts its
    batch once at the end instead (``repositories.ratings.open_flags_recounted_once``).
    """

    __table_args__ = (Index("ix_item_pool", "batch_id", "is_gold", "is_open", "held_back", "pool_key"),)
    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    sample_id: int = Field(foreign_key="sample.id", index=True)
    output_a_id: int = Field(foreign_key="output.id", index=True)
    output_b_id: int | None = Field(default=None, foreign_key="output.id")
    is_gold: bool = False
    gold_json: str | None = Field(default=None, sa_column=Column(Text))  # {dimension: expected}
    pool_key: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # An anchor item of a follow-up batch: its outputs are the baseline batch's own (``output_a_id`` and
    # ``output_b_id`` point into the baseline), shown again to measure the panel's shift. Anchors count for
    # no model's score. Never part of anything served to a reviewer (see ``services.reviews``).
    is_anchor: bool = Field(default=False, sa_column_kwargs={"server_default": sa_false()})
    is_open: bool = Field(default=True, sa_column_kwargs={"server_default": sa_true()})
    # Held back from the pool until its sample is released (a batch whose rubric allocates adaptively:
    # ``review.allocation``); always false in a uniform batch.
    held_back: bool = Field(default=False, sa_column_kwargs={"server_default": sa_false()})


class PoolScenario(SQLModel, table=True):
    """A scenario of a batch that allocates adaptively, as the pool's last refresh saw it
    (``results.allocation``): ``state`` burn_in, open, settled or not_settling; ``nearest`` the samples
    to its nearest decision in reach and ``cost`` the judgements of a sample (``domain.allocation``);
    ``released`` the samples released since; ``closed``: no more of its samples are released."""

    __tablename__ = "pool_scenario"
    batch_id: int = Field(foreign_key="batch.id", primary_key=True)
    scenario_id: int = Field(foreign_key="scenario.id", primary_key=True)
    state: str
    complete: int
    open_pairs: int
    nearest: int
    cost: int
    held: int = 0  # samples held back at the refresh
    released: int = 0
    closed: bool = False
    refreshed_at: datetime = Field(default_factory=utcnow)


class Reviewer(SQLModel, table=True):
    """A person who signs in; ``role`` is reviewer, lead or admin (ranked in that order)."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    role: Role = Field(default=Role.REVIEWER, sa_type=EnumString(Role))
    token_hash: str | None = Field(default=None, index=True)
    link_issued_at: datetime | None = None  # when the current link was made (BLIND_REVIEW_LINK_DAYS); None: created_at
    active: bool = True
    created_at: datetime = Field(default_factory=utcnow)


class BatchReviewer(SQLModel, table=True):
    """A reviewer of a batch (chosen at ``assign`` or on the Admin page). A batch with any such rows is shown
    to and claimed from by these people only; a batch with none is open to every active reviewer."""

    __tablename__ = "batch_reviewer"
    batch_id: int = Field(foreign_key="batch.id", primary_key=True)
    reviewer_id: int = Field(foreign_key="reviewer.id", primary_key=True, index=True)
    added_at: datetime = Field(default_factory=utcnow)


class Assignment(SQLModel, table=True):
    """One item in one reviewer's queue.

    ``occurrence`` is 0 for the first showing and 1 for a repeat shown later to measure self-consistency.
    ``label`` is the anonymous name the reviewer sees; it is drawn per reviewer so two reviewers cannot
    compare notes. ``reserved_until`` is set on pool claims: an expired, unsubmitted claim frees its slot.
    ``status`` is ``pending`` until submitted, then ``done``, or ``skipped`` when the reviewer said they cannot
    judge the item (``cant_judge`` holds why); done and skipped are both finished.
    """

    __table_args__ = (
        UniqueConstraint("item_id", "reviewer_id", "occurrence"),
        UniqueConstraint("reviewer_id", "batch_id", "label"),
        Index("ix_assignment_queue", "reviewer_id", "batch_id", "status", "position"),
        Index("ix_assignment_label", "batch_id", "label"),
    )
    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    reviewer_id: int = Field(foreign_key="reviewer.id", index=True)
    occurrence: int = 0
    position: int
    label: str
    swapped: bool = False  # pairwise: output_b shown on the left
    status: AssignmentStatus = Field(default=AssignmentStatus.PENDING, sa_type=EnumString(AssignmentStatus))
    reserved_until: datetime | None = None  # None: planned by `assign`, held until done
    comment: str | None = Field(default=None, sa_column=Column(Text))
    cant_judge: str | None = Field(default=None, sa_column=Column(Text))  # the reason, when set
    shown_at: datetime | None = None
    submitted_at: datetime | None = None
    seconds_spent: float | None = None


class Rating(SQLModel, table=True):
    """One answer on one dimension; a second submit of the same assignment updates it.

    Pairwise answers are stored as the reviewer saw them (``left``/``right``/``tie``/``both_bad``) with the
    assignment's ``swapped`` flag; aggregation maps them back to the canonical order.
    """

    __table_args__ = (UniqueConstraint("assignment_id", "dimension"),)
    id: int | None = Field(default=None, primary_key=True)
    assignment_id: int = Field(foreign_key="assignment.id", index=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    reviewer_id: int = Field(foreign_key="reviewer.id", index=True)
    dimension: str
    value: str
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ApiToken(SQLModel, table=True):
    """A person's token for the REST API (``Authorization: Bearer``), shown once when made: only its SHA-256 is
    stored. ``label`` names it for its owner (one per pipeline, say); ``expires_at`` None: no expiry;
    ``revoked_at`` set by revoking it or its person."""

    __tablename__ = "api_token"
    id: int | None = Field(default=None, primary_key=True)
    reviewer_id: int = Field(foreign_key="reviewer.id", index=True)
    label: str
    token_hash: str = Field(index=True, unique=True)
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


class SigninSession(SQLModel, table=True):
    """One browser's sign-in, made from a person's link: the address bar carries its token, not the link's.

    Only the token's SHA-256 is stored. ``browser_hash`` is the hash of the browser's cookie when the
    sign-in was made there: the session then works in that browser only. ``ended_at`` is set by signing
    out (``ended_by`` ``sign-out``: the link then no longer signs in in that browser), signing out
    everywhere, the admin revoking the person or replacing their link.
    """

    __tablename__ = "signin_session"
    id: int | None = Field(default=None, primary_key=True)
    reviewer_id: int = Field(foreign_key="reviewer.id", index=True)
    token_hash: str = Field(index=True, unique=True)
    link_hash: str = Field(index=True)
    browser_hash: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    last_seen_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    ended_by: str | None = None


class ReviewDraft(SQLModel, table=True):
    """A reviewer's half-filled form for one of their assignments, so a refresh or a crash loses nothing.

    Holds only what the reviewer chose or typed (``answers_json``: {dimension: stored value}); nothing about
    the item's outputs or models. One row per assignment, written on each change and deleted when the
    answer is submitted. ``batch_id`` makes it go with its batch; the assignment's foreign key cascades, so
    an assignment removed from a queue (a refused pool claim, an unassigned slot) takes its draft along.
    """

    __tablename__ = "review_draft"
    assignment_id: int = Field(
        sa_column=Column(Integer, ForeignKey("assignment.id", ondelete="CASCADE"), primary_key=True)
    )
    batch_id: int = Field(foreign_key="batch.id", index=True)
    reviewer_id: int = Field(foreign_key="reviewer.id", index=True)
    answers_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    comment: str = Field(default="", sa_column=Column(Text, nullable=False))
    cant_judge: bool = False
    reason: str = Field(default="", sa_column=Column(Text, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow)


class FeedbackSeries(SQLModel, table=True):
    """One (model, scenario, scale) that production feedback was given for: unblinded, leads only.

    ``model`` is the name the feedback file gives, with no link to ``Model``: production models need not be in
    any batch. ``scenario`` is '' when the feedback named none (a NULL would slip past the unique constraint).
    Events point here instead of repeating the names, so the monitor reads a million events as numbers only.
    """

    __tablename__ = "feedback_series"
    __table_args__ = (UniqueConstraint("model", "scenario", "scale_min", "scale_max"),)
    id: int | None = Field(default=None, primary_key=True)
    model: str
    scenario: str
    scale_min: float
    scale_max: float


class FeedbackEvent(SQLModel, table=True):
    """One production feedback event (``blind-review import-feedback``) of a :class:`FeedbackSeries`.

    ``ts_ms`` is the event time in UTC milliseconds since the epoch (exact and cheap on both dialects).
    ``event_key`` is ``request:<request_id>``, or without one ``content:<digest>`` of the row's content and its
    occurrence in the file, so importing the same file again adds nothing.
    """

    __tablename__ = "feedback_event"
    __table_args__ = (Index("ix_feedback_event_series_ts_ms", "series_id", "ts_ms"),)
    id: int | None = Field(default=None, primary_key=True)
    event_key: str = Field(unique=True)
    content_digest: str
    series_id: int  # no foreign key: see migration 0011 (PostgreSQL's per-row check cost a quarter of an import)
    ts_ms: int = Field(sa_type=BigInteger)  # UTC ms; indexed with series_id for one model's events in time order
    feedback: float
    latency_ms: float | None = None
    ttft_ms: float | None = None
    source_file: str
    imported_at: datetime = Field(default_factory=utcnow)


class Judge(SQLModel, table=True):
    """An LLM judge: one model (``name`` as given to ``blind-review judge --model``, the model asked for at
    ``base_url``) with one prompt template (``template_digest``; its text is kept). Rerun with another template
    it is another judge. Not a ``Reviewer``: a judge signs in nowhere, claims nothing from the pool and is in no
    panel statistic; its ratings are ``Judgement`` rows, read beside the panel's only where a report asks."""

    __table_args__ = (UniqueConstraint("name", "api_model", "template_digest"),)
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True)
    api_model: str
    base_url: str
    template_digest: str
    template_text: str = Field(sa_column=Column(Text, nullable=False))
    params_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))  # sampling, as asked
    created_at: datetime = Field(default_factory=utcnow)


class Judgement(SQLModel, table=True):
    """A judge's answer to one item, in one order, one repeat: the rating of a rater of kind "judge".

    ``answers_json`` maps each question to its answer as the rating table stores a reviewer's (a pairwise
    verdict as the side picked as shown, ``swapped`` True when the item's second output was shown as A).
    ``status`` is ``ok`` or ``failed`` (``error`` says why: a request that failed for good, or a reply that did
    not fit the schema after one reprompt); a rerun retries the failed ones. ``raw_response`` is the model's
    last reply, verbatim; latency and tokens are summed over the reprompt."""

    __table_args__ = (UniqueConstraint("judge_id", "item_id", "repeat", "swapped"),)
    id: int | None = Field(default=None, primary_key=True)
    judge_id: int = Field(foreign_key="judge.id", index=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    repeat: int = 0
    swapped: bool = False
    status: str = "ok"
    answers_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    reason: str | None = Field(default=None, sa_column=Column(Text))
    raw_response: str | None = Field(default=None, sa_column=Column(Text))
    error: str | None = Field(default=None, sa_column=Column(Text))
    latency_ms: float | None = None
    output_tokens: int | None = None
    attempts: int = 0
    created_at: datetime = Field(default_factory=utcnow)


class Webhook(SQLModel, table=True):
    """A URL an admin registered for events (``reviewer_app.webhooks``): which kinds (``events``, comma-separated,
    or "*"), the secret its deliveries are signed with (Standard Webhooks ``whsec_...``: shown once, kept to sign),
    and when it was disabled (None: live)."""

    id: int | None = Field(default=None, primary_key=True)
    url: str = Field(sa_column=Column(Text, nullable=False))
    events: str = Field(sa_column=Column(Text, nullable=False))
    secret: str = Field(repr=False)
    label: str = ""
    created_by: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    disabled_at: datetime | None = None


class WebhookEvent(SQLModel, table=True):
    """One event in the durable outbox: its id (a UUID the receiver deduplicates on), kind, batch, JSON payload;
    ``dedup_key`` makes emitting the same happening twice (a monitor read again) a no-op."""

    __tablename__ = "webhook_event"
    id: str = Field(primary_key=True)
    kind: str = Field(index=True)
    batch_id: int | None = None  # no foreign key: an event outlives its batch's deletion
    dedup_key: str = Field(index=True, unique=True)
    payload: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class WebhookDelivery(SQLModel, table=True):
    """One event to one hook: ``status`` pending, delivered or given_up; ``next_attempt_at`` when it is due (a
    sender claims it by moving this forward, so two servers never send it at once); the last answer or error."""

    __tablename__ = "webhook_delivery"
    __table_args__ = (UniqueConstraint("event_id", "webhook_id"),)
    id: int | None = Field(default=None, primary_key=True)
    event_id: str = Field(foreign_key="webhook_event.id", index=True)
    webhook_id: int = Field(foreign_key="webhook.id", index=True)
    status: str = Field(default="pending", index=True)
    attempts: int = 0
    next_attempt_at: datetime = Field(default_factory=utcnow, index=True)
    last_status: int | None = None
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    last_ms: float | None = None
    delivered_at: datetime | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class Ruling(SQLModel, table=True):
    """An adjudicator's ruling on one item's disputed dimension (``reviewer_app.adjudication``): ``value`` as the
    rating table stores a rating mode answer ("4", "1", a choice), and in pairwise mode canonically ("a": the
    item's ``output_a`` is better, "b", "tie", "both_bad"), never as a side the adjudicator saw; ``reason`` in
    their words. A second ruling on the same item and dimension replaces the first."""

    __table_args__ = (UniqueConstraint("item_id", "dimension"),)
    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = Field(foreign_key="batch.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    dimension: str
    value: str
    reason: str = Field(sa_column=Column(Text, nullable=False))
    adjudicator_id: int = Field(foreign_key="reviewer.id", index=True)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

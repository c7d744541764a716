"""What the API answers, as Pydantic models: they are the OpenAPI document's schemas, so a pipeline (or the
Python client) knows each field without reading our code. Built from the services' own results; no field is
computed here."""

from __future__ import annotations

from datetime import datetime
from typing import Generic, TypeVar

from pydantic import BaseModel, Field

__all__ = [
    "DisputeInfo",
    "JudgeInfo",
    "JudgeRunInfo",
    "WebhookOut",
    "NewWebhook",
    "DeliveryOut",
    "AssignResult",
    "BatchInfo",
    "BatchStatusInfo",
    "DeleteResult",
    "FeedbackResult",
    "ImportResult",
    "LoadResult",
    "Me",
    "NewLink",
    "Page",
    "PersonInfo",
    "PoolInfo",
    "ProgressRowInfo",
    "RevokeResult",
    "ScenarioPoolInfo",
    "TitleInfo",
]

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a list: ``items``, the list's ``total``, and the ``offset`` to ask for next (None: the end)."""

    items: list[T]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class Me(BaseModel):
    name: str
    role: str


class BatchCountsInfo(BaseModel):
    scenarios: int
    samples: int
    outputs: int
    items: int
    assignments: int
    answered: int = Field(description="item showings answered (each item is shown to k reviewers)")
    ratings: int


class BatchInfo(BaseModel):
    id: int
    name: str
    mode: str
    status: str
    overlap: int = Field(description="k: reviewers per item")
    archived: bool
    created_at: datetime
    opened_at: datetime | None
    title: str = Field(description="what reviewers see instead of the name")
    follow_up_of: str | None
    outputs_per_model: dict[str, int]
    counts: BatchCountsInfo


class ProgressRowInfo(BaseModel):
    group: str
    done: int
    skipped: int
    remaining: int
    median_seconds: float | None


class BatchStatusInfo(BaseModel):
    batch: BatchInfo
    open_to: list[str] = Field(description="the batch's own reviewers (empty: every active reviewer)")
    audience: str
    complete: bool = Field(description="every item has its k answers")
    progress: ProgressRowInfo
    by_scenario: list[ProgressRowInfo]
    by_reviewer: list[ProgressRowInfo]


class LoadResult(BaseModel):
    batch_id: int
    batch_name: str
    already_loaded: bool
    mode: str
    scenarios: dict[str, int]
    models: list[str]
    outputs: int
    items: int
    images: int
    leaks: int
    outputs_per_model: dict[str, int]
    renamed: list[tuple[str, str]]
    summary: list[str] = Field(description="the load's summary as `blind-review load-batch` prints it")


class ImportResult(BaseModel):
    batch: str
    ratings: int
    items: int
    reviewers: list[str]
    created_reviewers: list[str]
    cant_judge: int
    comments: int
    summary: list[str]


class FeedbackResult(BaseModel):
    read: int
    new: int
    already: int
    repeated: int
    summary: list[str]


class AssignResult(BaseModel):
    batch: str
    reviewers: int
    new_assignments: int
    released: int
    per_reviewer: dict[str, int]
    summary: list[str]


class DeleteResult(BaseModel):
    batch_name: str
    batch_id: int
    rows: dict[str, int]
    images: int
    summary: list[str]


class TitleInfo(BaseModel):
    kind: str
    name: str
    shown: str
    why: str
    display_name: str | None


class PersonInfo(BaseModel):
    name: str
    role: str


class NewLink(BaseModel):
    name: str
    role: str
    link: str = Field(description="the sign-in link, shown this once: send it to the person privately")


class ScenarioPoolInfo(BaseModel):
    scenario: str
    state: str = Field(description="burn_in, open, settled or not_settling")
    complete: int = Field(description="samples complete at the last refresh")
    open_pairs: int
    nearest: int = Field(description="samples from the refresh to the nearest decision within reach (0: none)")
    held: int = Field(description="samples still held back")
    released: int = Field(description="samples released since the refresh")
    closed: bool


class PoolInfo(BaseModel):
    """An adaptive batch's pool: each scenario's state (the anytime verdicts behind it: the report)."""

    batch: str
    uniform_share: float
    scenarios: list[ScenarioPoolInfo]
    summary: list[str]


class WebhookOut(BaseModel):
    id: int
    url: str
    events: list[str]
    label: str
    created_by: str | None
    created_at: datetime
    disabled_at: datetime | None


class NewWebhook(BaseModel):
    webhook: WebhookOut
    secret: str = Field(description="the signing secret, shown this once: the receiver verifies deliveries with it")


class DeliveryOut(BaseModel):
    event_id: str
    kind: str
    created_at: datetime
    webhook_id: int
    url: str
    status: str = Field(description="pending, delivered or given_up")
    attempts: int
    last_status: int | None
    last_error: str | None
    next_attempt_at: datetime | None


class RevokeResult(BaseModel):
    name: str
    released: int = Field(description="unfinished items that went back to the pool")


class DisputeInfo(BaseModel):
    """An item and question the panel disagreed on beyond the rubric's threshold, unblinded, with its ruling."""

    scenario: str
    sample_id: str
    models: str = Field(description="the rated model; pairwise: the pair, 'a vs b'")
    dimension: str
    panel: str = Field(description="what the panel answered: scores lowest first, or votes per model, tie, both bad")
    ruling: str = Field(description="the ruled answer (pairwise: the better model, tie or both bad); empty: open")
    reason: str
    adjudicator: str


class JudgeRunInfo(BaseModel):
    """An LLM judge's run on a batch started through the API, and how far it is."""

    id: str
    batch: str
    model: str = Field(description="the judge's model NAME, as in its spec")
    judge: str | None = Field(description="the judge as the report names it (judge:NAME@template), once known")
    state: str = Field(description="running, finished (every planned judgement asked) or stopped (error: why)")
    started_by: str
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    items: int = Field(description="items to judge (0 until planned)")
    planned: int = Field(description="judgements planned: items x orders x repeats")
    already_done: int = Field(description="found done by an earlier run and skipped")
    written: int
    failed: int = Field(description="failed after retries and a second ask; start the run again to retry them")
    summary: list[str] = Field(description="the run as `blind-review judge` prints it (when finished)")


class JudgeInfo(BaseModel):
    """A judge (model and prompt template) with stored judgements on a batch; durable, unlike a run's state."""

    judge: str = Field(description="judge:NAME@template, as the report's 'Judge vs panel' card names it")
    model: str
    api_model: str
    base_url: str
    template_digest: str
    judged: int = Field(description="judgements answered")
    failed: int = Field(description="judgements failed (a new run asks them again)")

"""Batches: load (multipart files or a zip), list, status and progress, open/close/archive/delete, titles,
reviewers, assignment, leaks and the adaptive pool's states. Loads and management are for admins; reading
is for leads."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Query, Response, UploadFile
from pydantic import BaseModel, Field

from reviewer_app.api.auth import Admin, EngineDep, Lead
from reviewer_app.api.files import check_request_size, read_upload, streamed_text
from reviewer_app.api.paging import PageQuery, page_of
from reviewer_app.batches.admin import (
    BatchRow,
    archive_batch,
    batch_row,
    batch_table,
    batch_titles,
    delete_batch,
    restore_batch,
)
from reviewer_app.batches.admin import set_titles as set_batch_titles
from reviewer_app.batches.audience import batch_audience, set_batch_reviewers
from reviewer_app.batches.catalog import set_batch_open
from reviewer_app.batches.leak_list import batch_leaks, write_leaks
from reviewer_app.batches.uploads import load_uploads
from reviewer_app.domain.enums import OnLeak
from reviewer_app.results import PoolState, pool_state, refresh_allocation
from reviewer_app.review import batch_progress
from reviewer_app.review.assignment import assign
from reviewer_app.wire import (
    AssignResult,
    BatchCountsInfo,
    BatchInfo,
    BatchStatusInfo,
    DeleteResult,
    LoadResult,
    Page,
    PoolInfo,
    ProgressRowInfo,
    ScenarioPoolInfo,
    TitleInfo,
)

router = APIRouter(prefix="/batches", tags=["batches"])


def _info(row: BatchRow) -> BatchInfo:
    b, c = row.batch, row.counts
    assert b.id is not None
    return BatchInfo(
        id=b.id,
        name=b.name,
        mode=str(b.mode),
        status=str(b.status),
        overlap=b.overlap,
        archived=b.archived_at is not None,
        created_at=b.created_at,
        opened_at=b.opened_at,
        title=row.title,
        follow_up_of=row.follow_up_of,
        outputs_per_model=dict(row.per_model),
        counts=BatchCountsInfo(
            scenarios=c.scenarios,
            samples=c.samples,
            outputs=c.outputs,
            items=c.items,
            assignments=c.assignments,
            answered=c.done,
            ratings=c.ratings,
        ),
    )


def _status(engine: EngineDep, name: str) -> BatchStatusInfo:
    row = batch_row(engine, name)
    assert row.batch.id is not None
    progress = batch_progress(engine, row.batch.id)
    audience = batch_audience(engine, row.batch.name)
    info = _info(row)
    return BatchStatusInfo(
        batch=info,
        open_to=list(audience.reviewers),
        audience=audience.line(),
        complete=info.counts.items > 0 and info.counts.answered >= info.counts.items * info.overlap,
        progress=ProgressRowInfo.model_validate(progress.total, from_attributes=True),
        by_scenario=[ProgressRowInfo.model_validate(r, from_attributes=True) for r in progress.by_scenario],
        by_reviewer=[ProgressRowInfo.model_validate(r, from_attributes=True) for r in progress.by_reviewer],
    )


@router.get("", summary="List batches")
def list_batches(engine: EngineDep, _: Lead, page: PageQuery, archived: bool = False) -> Page[BatchInfo]:
    """The batches (or the archived ones), oldest first, with their counts and outputs per model."""
    return page_of([_info(r) for r in batch_table(engine, archived=archived)], page)


@router.post(
    "",
    summary="Load a batch",
    status_code=201,
    dependencies=[Depends(check_request_size)],
    responses={200: {"description": "this content was loaded before: the existing batch, nothing written"}},
)
async def load(
    engine: EngineDep,
    _: Admin,
    response: Response,
    name: Annotated[str, Form(description="the batch's name")],
    files: Annotated[list[UploadFile], File(description="batch files (.jsonl, .csv, .json), images, or zips")],
    rubric: Annotated[UploadFile | None, File(description="the rubric (.toml); not for a follow-up")] = None,
    on_leak: Annotated[OnLeak, Form()] = OnLeak.MASK,
    follow_up: Annotated[str | None, Form(description="the baseline batch this one follows up")] = None,
    anchor_share: Annotated[float | None, Form()] = None,
    open_now: Annotated[bool, Form(alias="open", description="open it for reviewing at once")] = False,
    reviewers: Annotated[list[str] | None, Form(description="the batch's own reviewers")] = None,
) -> LoadResult:
    """Check the files and the rubric exactly as `blind-review load-batch` does and write the batch at once
    (nothing on any problem: 422 with each problem located). Loading the same content again writes nothing and
    answers 200 with the existing batch."""
    from starlette.concurrency import run_in_threadpool

    uploads = [await read_upload(f) for f in files]
    rubric_upload = None if rubric is None else await read_upload(rubric)
    extra = {} if anchor_share is None else {"anchor_share": anchor_share}
    loaded = await run_in_threadpool(
        lambda: load_uploads(
            engine,
            uploads,
            rubric_upload,
            name=name,
            on_leak=on_leak,
            follow_up=follow_up or None,
            open_now=open_now,
            reviewers=[r for r in reviewers or () if r],
            **extra,
        )
    )
    s = loaded.summary
    if s.already_loaded:
        response.status_code = 200
    return LoadResult(
        batch_id=s.batch_id,
        batch_name=s.batch_name,
        already_loaded=s.already_loaded,
        mode=str(s.mode),
        scenarios=dict(s.scenarios),
        models=list(s.models),
        outputs=s.outputs,
        items=s.items,
        images=s.images,
        leaks=len(s.leaks),
        outputs_per_model=dict(loaded.per_model),
        renamed=list(loaded.renamed),
        summary=s.lines(),
    )


@router.get("/{batch}", summary="A batch's status and progress")
def status(engine: EngineDep, _: Lead, batch: str) -> BatchStatusInfo:
    """The batch, who it is open to, whether every item has its k answers, and progress in total, per scenario
    and per reviewer."""
    return _status(engine, batch)


@router.post("/{batch}/open", summary="Open a batch for reviewing")
def open_batch(engine: EngineDep, _: Admin, batch: str) -> BatchStatusInfo:
    return _status(engine, set_batch_open(engine, batch, True).name)


@router.post("/{batch}/close", summary="Close a batch to new and revised ratings")
def close_batch(engine: EngineDep, _: Admin, batch: str) -> BatchStatusInfo:
    return _status(engine, set_batch_open(engine, batch, False).name)


@router.post("/{batch}/archive", summary="Archive a batch (closed, out of every list; restore undoes it)")
def archive(engine: EngineDep, who: Admin, batch: str) -> BatchStatusInfo:
    return _status(engine, archive_batch(engine, batch, by=who).name)


@router.post("/{batch}/restore", summary="Bring an archived batch back (closed)")
def restore(engine: EngineDep, who: Admin, batch: str) -> BatchStatusInfo:
    return _status(engine, restore_batch(engine, batch, by=who).name)


@router.delete("/{batch}", summary="Delete a batch with all its ratings, for good")
def delete(
    engine: EngineDep,
    who: Admin,
    batch: str,
    confirm: Annotated[str, Query(description="the batch's name again: deleting cannot be undone")],
) -> DeleteResult:
    done = delete_batch(engine, batch, confirm=confirm, by=who)
    return DeleteResult(
        batch_name=done.batch_name, batch_id=done.batch_id, rows=done.rows, images=done.images, summary=done.lines()
    )


class TitlesChange(BaseModel):
    display_name: str | None = Field(None, description="the batch's title ('' clears it; null leaves it)")
    scenarios: dict[str, str] = Field(default_factory=dict, description="scenario name -> title ('' clears)")


@router.get("/{batch}/titles", summary="The titles reviewers see for the batch and its scenarios")
def titles(engine: EngineDep, _: Lead, batch: str) -> list[TitleInfo]:
    return [TitleInfo.model_validate(t, from_attributes=True) for t in batch_titles(engine, batch)]


@router.put("/{batch}/titles", summary="Set the titles reviewers see")
def set_titles(engine: EngineDep, who: Admin, batch: str, change: TitlesChange) -> list[TitleInfo]:
    rows = set_batch_titles(engine, batch, display_name=change.display_name, scenarios=change.scenarios, by=who)
    return [TitleInfo.model_validate(t, from_attributes=True) for t in rows]


class ReviewersChange(BaseModel):
    add: list[str] = Field(default_factory=list)
    remove: list[str] = Field(default_factory=list)


@router.patch("/{batch}/reviewers", summary="Add or take off the batch's own reviewers")
def reviewers(engine: EngineDep, _: Admin, batch: str, change: ReviewersChange) -> BatchStatusInfo:
    set_batch_reviewers(engine, batch, add=change.add, remove=change.remove)
    return _status(engine, batch)


class AssignRequest(BaseModel):
    reviewers: list[str] | None = Field(None, description="who (default: the batch's reviewers, or every reviewer)")
    rebalance: bool = Field(False, description="spread unopened items over everyone again")


@router.post("/{batch}/assign", summary="Plan who reviews what (k reviewers per item)")
def assign_batch(engine: EngineDep, _: Admin, batch: str, request: AssignRequest) -> AssignResult:
    done = assign(engine, batch, request.reviewers or None, rebalance=request.rebalance)
    return AssignResult(
        batch=done.batch,
        reviewers=done.reviewers,
        new_assignments=done.new_assignments,
        released=done.released,
        per_reviewer=done.per_reviewer,
        summary=done.lines(),
    )


@router.get(
    "/{batch}/leaks",
    summary="Outputs that name a model or vendor",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}, "application/x-ndjson": {}}}},
)
def leaks(
    engine: EngineDep, _: Lead, batch: str, format: Annotated[str, Query(pattern="^(csv|jsonl)$")] = "jsonl"
) -> Response:
    entries = batch_leaks(engine, batch)
    media = "text/csv" if format == "csv" else "application/x-ndjson"
    return streamed_text(lambda out: write_leaks(entries, format, out), f"{batch}-leaks.{format}", media)


def _pool(state: PoolState) -> PoolInfo:
    return PoolInfo(
        batch=state.batch,
        uniform_share=state.uniform_share,
        scenarios=[
            ScenarioPoolInfo(
                scenario=s.scenario,
                state=str(s.state),
                complete=s.complete,
                open_pairs=s.open_pairs,
                nearest=s.nearest,
                held=s.held,
                released=s.released,
                closed=s.closed,
            )
            for s in state.states
        ],
        summary=state.lines(),
    )


@router.get("/{batch}/allocation", summary="An adaptive batch's pool: each scenario's state")
def allocation(engine: EngineDep, _: Lead, batch: str) -> PoolInfo:
    """The states as the server's last refresh wrote them (422 for a batch that does not allocate adaptively)."""
    return _pool(pool_state(engine, batch))


@router.post("/{batch}/allocation/refresh", summary="Refresh an adaptive batch's pool now")
def refresh(engine: EngineDep, _: Admin, batch: str) -> PoolInfo:
    """Each scenario's state computed from the ratings now (the served app does it every
    BLIND_REVIEW_ALLOCATION_SECONDS), with the anytime verdicts behind it in ``summary``."""
    return _pool(refresh_allocation(engine, batch))

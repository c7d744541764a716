"""Production feedback straight from a service (POST events, or a file as ``import-feedback`` reads it) and
the monitor. Both for leads, as the CLI's ``import-feedback`` and ``monitor`` are."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Query, UploadFile
from pydantic import BaseModel, Field
from starlette.responses import Response

from reviewer_app.api.auth import EngineDep, Lead
from reviewer_app.api.files import check_request_size, run_on_file, run_on_upload
from reviewer_app.api.routes.rendered import TextFormat, rendered, rendered_responses
from reviewer_app.production.feedback import FeedbackImport, import_feedback, monitor, parse_canary, parse_scale
from reviewer_app.reporting.monitor import render_monitor
from reviewer_app.wire import FeedbackResult

router = APIRouter(tags=["production"])

EVENTS_FILE = "events.jsonl"  # what the problems of a posted list name: line N is the list's Nth event


class FeedbackEvents(BaseModel):
    events: list[dict[str, Any]] = Field(
        description="one object per event: model, timestamp, feedback; optional scenario, latency_ms, ttft_ms, "
        "request_id (a re-sent request_id adds nothing)",
        max_length=100_000,
    )
    scale: str = Field("-1,1", description="MIN,MAX: -1,1 for thumbs, 1-5 for ratings")


def _result(done: FeedbackImport) -> FeedbackResult:
    return FeedbackResult(
        read=done.read, new=done.new, already=done.already, repeated=done.repeated, summary=done.lines()
    )


@router.post("/feedback", summary="Send production feedback events")
def post_feedback(engine: EngineDep, _: Lead, body: FeedbackEvents) -> FeedbackResult:
    """Check every event as `blind-review import-feedback` does (problems name ``events.jsonl:N``, N the event's
    place in the list, from 1); nothing is written on any problem."""
    scale = parse_scale(body.scale)
    lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in body.events).encode()
    return _result(
        run_on_file(
            EVENTS_FILE, lines, lambda path: import_feedback(engine, path, scale=scale, fmt="jsonl", progress=False)
        )
    )


@router.post("/feedback/file", summary="Import a production feedback file", dependencies=[Depends(check_request_size)])
async def post_feedback_file(
    engine: EngineDep,
    _: Lead,
    file: Annotated[UploadFile, File(description="a .jsonl or .csv feedback file")],
    scale: Annotated[str, Query(description="MIN,MAX")] = "-1,1",
) -> FeedbackResult:
    parsed = parse_scale(scale)
    return _result(await run_on_upload(file, lambda path: import_feedback(engine, path, scale=parsed, progress=False)))


@router.get(
    "/monitor",
    summary="The production monitor",
    response_class=Response,
    responses=rendered_responses("json", "csv", "md", "html"),
)
def get_monitor(
    engine: EngineDep,
    _: Lead,
    format: TextFormat = "json",
    window: Literal["1d", "7d"] = "1d",
    model: Annotated[list[str] | None, Query(description="only these models (default: all)")] = None,
    canary: Annotated[
        list[str] | None, Query(description="NEW=CURRENT: a canary and the model it may replace; repeatable")
    ] = None,
) -> Response:
    """Per model and window: feedback with its interval, latency, and flagged changes (canaries against their
    baselines), as `blind-review monitor` makes it."""
    canaries = [parse_canary(c) for c in canary or ()]
    result = monitor(engine, window=window, models=model or None, canaries=canaries)
    return rendered(format, f"production-monitor.{format}", lambda: render_monitor(result, format))

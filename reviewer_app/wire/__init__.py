"""What the REST API and its Python client say to each other: the answers' Pydantic models (the OpenAPI
document's schemas) and how an error travels (problem details' ``type``). Shared by both sides, so that the
client reads exactly what the server writes; it imports nothing of ours but the error types."""

from __future__ import annotations

from reviewer_app.wire.models import (
    AssignResult,
    BatchCountsInfo,
    BatchInfo,
    BatchStatusInfo,
    DeleteResult,
    DeliveryOut,
    DisputeInfo,
    FeedbackResult,
    ImportResult,
    JudgeInfo,
    JudgeRunInfo,
    LoadResult,
    Me,
    NewLink,
    NewWebhook,
    Page,
    PersonInfo,
    PoolInfo,
    ProgressRowInfo,
    RevokeResult,
    ScenarioPoolInfo,
    TitleInfo,
    WebhookOut,
)
from reviewer_app.wire.problems import PROBLEM_JSON, TYPE_PREFIX, error_from_problem

__all__ = [
    "DeliveryOut",
    "JudgeInfo",
    "JudgeRunInfo",
    "DisputeInfo",
    "NewWebhook",
    "WebhookOut",
    "PROBLEM_JSON",
    "TYPE_PREFIX",
    "AssignResult",
    "BatchCountsInfo",
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
    "error_from_problem",
]

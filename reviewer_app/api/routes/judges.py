"""LLM judge runs (issue 29's judge, driven from a pipeline): an admin starts a run on a batch, which goes on in
the serving process (:mod:`reviewer_app.judge.jobs`); leads watch it and list the judges a batch has. What the
judge is asked is what ``blind-review judge`` asks: the blind view a reviewer's page gets, never a model name."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

from reviewer_app.api.auth import Admin, EngineDep, Lead
from reviewer_app.batches.catalog import find_batch
from reviewer_app.errors import GenerationError
from reviewer_app.generation.specs import RetryPolicy, SamplingParams, parse_model_spec
from reviewer_app.judge.jobs import JudgeJob, judge_job, judge_jobs, start_judge_run
from reviewer_app.judge.judged import batch_judges
from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeTemplate
from reviewer_app.judge.runs import JudgeRunReport, SampleChoice
from reviewer_app.wire import JudgeInfo, JudgeRunInfo

router = APIRouter(tags=["judges"])

PROMPT_SOURCE = "prompt"  # what a posted template's problems name, as the CLI names the --prompt file


class JudgeRunIn(BaseModel):
    model: str = Field(
        description="NAME=BASE_URL[@ENV_VAR] or NAME=API_MODEL=BASE_URL[@ENV_VAR], as `blind-review judge --model`; "
        "ENV_VAR must be one the server's BLIND_REVIEW_JUDGE_KEY_VARS lists",
        examples=["judge=Qwen/Qwen2.5-72B-Instruct=http://gpu1:8000/v1"],
    )
    samples: str | int = Field("all", description="all, rated (the samples the panel rated) or a number of samples")
    repeats: int = Field(1, ge=1, le=20, description="judgements per item and order")
    concurrency: int = Field(8, ge=1, le=256, description="requests in flight")
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(512, ge=1, le=32768)
    seed: int | None = Field(None, description="sent as seed + repeat index")
    prompt: str | None = Field(None, description="a prompt template's text (README, 'LLM judge'); default: ours")
    retries: int = Field(4, ge=0, le=20, description="retries of a failed request")
    timeout: float = Field(300.0, gt=0, le=3600, description="seconds for one attempt")


def _info(job: JudgeJob) -> JudgeRunInfo:
    r = job.report or JudgeRunReport(judge="", batch=job.batch)  # not planned yet: nothing counted
    return JudgeRunInfo(
        id=job.id, batch=job.batch, model=job.model, judge=r.judge or None, state=job.state,
        started_by=job.started_by, started_at=job.started_at, finished_at=job.finished_at, error=job.error,
        items=r.items, planned=r.planned, already_done=r.already_done, written=r.written, failed=r.failed,
        summary=r.table().splitlines() if job.report is not None and job.finished_at is not None else [],
    )  # fmt: skip


def _samples(value: str | int) -> SampleChoice:
    if isinstance(value, int):
        return value
    if value == "all":
        return "all"
    if value == "rated":
        return "rated"
    if value.isdigit():
        return int(value)
    raise GenerationError(f"samples {value!r}: expected all, rated or a number of samples")


@router.post(
    "/batches/{batch}/judge-runs",
    summary="Start an LLM judge on a batch",
    status_code=202,
    response_model=JudgeRunInfo,
)
def start(
    engine: EngineDep, who: Admin, request: Request, batch: str, run: Annotated[JudgeRunIn, Body()]
) -> JSONResponse:
    """Runs in the server, as `blind-review judge` would (what is done is skipped, what failed is asked again);
    the answer's Location is the run, to poll. The judge reads what a reviewer's page shows and nothing else."""
    spec = parse_model_spec(run.model)
    template = DEFAULT_TEMPLATE if run.prompt is None else JudgeTemplate.from_text(run.prompt, PROMPT_SOURCE)
    job = start_judge_run(
        engine, batch, spec, started_by=who.name, samples=_samples(run.samples), repeats=run.repeats,
        concurrency=run.concurrency, template=template,
        params=SamplingParams(run.temperature, 1.0, run.max_tokens, run.seed),
        policy=RetryPolicy(retries=run.retries, timeout_s=run.timeout),
    )  # fmt: skip
    where = f"{request.scope.get('root_path', '')}/judge-runs/{job.id}"  # the API's mount point, then the run
    return JSONResponse(_info(job).model_dump(mode="json"), status_code=202, headers={"Location": where})


@router.get("/judge-runs/{run_id}", summary="A judge run's state")
def run_state(engine: EngineDep, _: Lead, run_id: str) -> JudgeRunInfo:
    """Counts so far while it runs; the summary when it has finished; why, if it stopped."""
    return _info(judge_job(engine, run_id))


@router.get("/batches/{batch}/judge-runs", summary="Judge runs started on a batch (this server, newest first)")
def runs_of_batch(engine: EngineDep, _: Lead, batch: str) -> list[JudgeRunInfo]:
    return [_info(j) for j in judge_jobs(engine, find_batch(engine, batch).name)]


@router.get("/batches/{batch}/judges", summary="Judges with judgements on a batch")
def judges(engine: EngineDep, _: Lead, batch: str) -> list[JudgeInfo]:
    """From what is stored (any process, any time): name one in `report?judge=` for its 'Judge vs panel' card."""
    return [JudgeInfo.model_validate(j, from_attributes=True) for j in batch_judges(engine, batch)]

"""Judge runs started through the API: each runs :func:`.runs.judge_batch` on a thread of the serving process,
and the API reads its state while it goes.

Why a thread and no queue service: a run is a few thousand HTTP requests that the judge's own client paces,
and everything it does is already durable and resumable (each judgement is written as it arrives; a rerun
skips what is done). So the state kept here (in memory, per process) is only what the caller wants to watch:
counts so far, then the run's report or the reason it stopped. A restart forgets the run's state, never a
judgement; starting the same run again resumes it. One run of a judge (model and template) on a batch at a
time: a second start while one runs is a conflict, not a second set of requests for the same items.

A key is read from the server's environment only from a variable ``BLIND_REVIEW_JUDGE_KEY_VARS`` lists
(:func:`reviewer_app.settings.judge_key_vars`): the CLI reads any variable its own user names, but through the
API that would let a token holder send any of the server's secrets to a URL of their choosing.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.errors import BlindReviewError, ConflictError, GenerationError, NotFoundError
from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams, resolve_api_key
from reviewer_app.judge.names import judge_label
from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeTemplate
from reviewer_app.judge.runs import JudgeRunReport, SampleChoice, check_run_options, judge_batch, judge_finished
from reviewer_app.settings import judge_key_vars
from storage.models import utcnow

__all__ = ["JudgeJob", "judge_job", "judge_jobs", "start_judge_run"]

log = logging.getLogger(__name__)

RUNNING, FINISHED, STOPPED = "running", "finished", "stopped"


@dataclass
class JudgeJob:
    """One API-started judge run: who started it, on what, and how far it is (``report``, filled in as it goes)."""

    id: str
    database: str  # the database's URL (no password): a process serves one, but tests run several side by side
    batch: str
    model: str  # the judge's NAME as given in its spec
    api_model: str
    template_digest: str
    started_by: str
    started_at: datetime
    state: str = RUNNING  # running, finished (every planned judgement asked) or stopped (an error ended it)
    report: JudgeRunReport | None = None
    error: str | None = None
    finished_at: datetime | None = None
    thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """What one run at a time is about: the database, the batch and the judge (model and template)."""
        return (self.database, self.batch, self.model, self.api_model, self.template_digest)


_JOBS: dict[str, JudgeJob] = {}
_LOCK = threading.Lock()
_KEPT = 200  # finished runs remembered (the newest), so the list stays short in a long-lived server


def start_judge_run(
    engine: Engine,
    batch_name: str,
    spec: ModelSpec,
    *,
    started_by: str,
    samples: SampleChoice = "all",
    repeats: int = 1,
    concurrency: int = 8,
    template: JudgeTemplate = DEFAULT_TEMPLATE,
    params: SamplingParams | None = None,
    policy: RetryPolicy | None = None,
) -> JudgeJob:
    """Start the judge ``spec`` on the batch in the background and return its job (state ``running``).

    Everything that can be checked before a request is checked here, so the caller hears of it at once: the
    batch (NotFoundError), the options and the key (GenerationError: a key variable the server does not allow,
    or one that is unset), and a run of the same judge on the batch still going (ConflictError)."""
    batch = find_batch(engine, batch_name)
    if spec.api_key_env is not None and spec.api_key_env not in judge_key_vars():
        allowed = ", ".join(sorted(judge_key_vars())) or "none"
        raise GenerationError(
            f"model {spec.name}: the server reads API keys only from the environment variables its admin lists in "
            f"BLIND_REVIEW_JUDGE_KEY_VARS (now: {allowed}), not {spec.api_key_env}; add it there where the server is "
            "deployed (and restart it), or run `blind-review judge` on a machine that has the key"
        )
    resolve_api_key(spec)
    check_run_options(samples, repeats, concurrency)
    job = JudgeJob(
        id=secrets.token_hex(8),
        database=_database(engine),
        batch=batch.name,
        model=spec.name,
        api_model=spec.api_model,
        template_digest=template.digest,
        started_by=started_by,
        started_at=utcnow(),
    )
    with _LOCK:
        for other in _JOBS.values():
            if other.state == RUNNING and other.key == job.key:
                raise ConflictError(
                    f"judge {spec.name} is already running on batch {batch.name!r} (run {other.id}); wait for it "
                    f"to finish (GET /judge-runs/{other.id}), then start it again to retry what failed"
                )
        _JOBS[job.id] = job
        _forget_old()

    def observe(report: JudgeRunReport) -> None:
        job.report = report

    def run() -> None:
        try:
            job.report = judge_batch(engine, batch.name, spec, samples=samples, repeats=repeats,
                                     concurrency=concurrency, template=template, params=params, policy=policy,
                                     progress=False, observe=observe)  # fmt: skip
            job.state = FINISHED
        except BlindReviewError as exc:
            job.state, job.error = STOPPED, str(exc)
        except Exception as exc:  # a run on a thread has nobody to raise to: keep why it stopped, log the rest
            log.exception("judge run %s on batch %r stopped", job.id, job.batch)
            job.state, job.error = (
                STOPPED,
                f"the run stopped on an unexpected error ({type(exc).__name__}); see the server log",
            )
        finally:
            job.finished_at = utcnow()
        if job.state == STOPPED:  # a finished run told the webhooks itself (judge_batch)
            assert batch.id is not None
            report = job.report or JudgeRunReport(judge_label(job.model, job.template_digest), job.batch)
            judge_finished(engine, report, batch.id, state=STOPPED, error=job.error)

    job.thread = threading.Thread(target=run, name=f"judge-run-{job.id}", daemon=True)
    job.thread.start()
    return job


def judge_job(engine: Engine, job_id: str) -> JudgeJob:
    """The run ``job_id`` started in this process on ``engine``'s database; NotFoundError when there is none (or
    the server restarted since: its judgements are kept, and starting the same run again resumes it)."""
    with _LOCK:
        job = _JOBS.get(job_id)
    if job is None or job.database != _database(engine):
        raise NotFoundError(
            f"no judge run {job_id!r} on this server (runs are remembered until the server restarts; what a run "
            "judged is kept, and starting it again resumes it)"
        )
    return job


def judge_jobs(engine: Engine, batch: str | None = None) -> list[JudgeJob]:
    """The runs started in this process on ``engine``'s database, newest first (only ``batch``'s when given)."""
    here = _database(engine)
    with _LOCK:
        jobs = [j for j in _JOBS.values() if j.database == here and (batch is None or j.batch == batch)]
    return sorted(jobs, key=lambda j: j.started_at, reverse=True)


def _database(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def _forget_old() -> None:
    """Keep the newest :data:`_KEPT` finished runs (caller holds the lock)."""
    done = sorted((j for j in _JOBS.values() if j.state != RUNNING), key=lambda j: j.started_at)
    for job in done[: max(0, len(done) - _KEPT)]:
        del _JOBS[job.id]

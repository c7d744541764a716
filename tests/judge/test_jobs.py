"""An API-started judge run that cannot go on: its state says why (our error's message, or that the server's log
has an unexpected one), and the webhooks hear that it stopped. The judge itself is replaced here by a function
that raises, since no real judge server makes ``judge_batch`` itself fail after its checks; the run as it goes
against a real judge on loopback is tested through the API (``tests/api/test_api_judges.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import NotFoundError
from reviewer_app.generation.specs import parse_model_spec
from reviewer_app.judge import jobs
from reviewer_app.webhooks import add_webhook, delivery_log
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def test_a_run_that_stops_says_why_and_tells_the_webhooks(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = write_batch(tmp_path, make_records(2, ["m1", "m2"]))
    load_batch(engine, [batch], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)), name="b")
    add_webhook(engine, "http://127.0.0.1:9/hook", ["judge.finished"])
    spec = parse_model_spec("judge=http://127.0.0.1:9/v1")
    for raised, said in (
        (NotFoundError("no batch named 'b' (it was deleted while the judge ran)"), "it was deleted while"),
        (RuntimeError("disk full"), "unexpected error (RuntimeError)"),
    ):

        def fails(*_args: Any, raised: Exception = raised, **_kwargs: Any) -> None:
            raise raised

        monkeypatch.setattr(jobs, "judge_batch", fails)
        job = jobs.start_judge_run(engine, "b", spec, started_by="ada")
        assert job.thread is not None
        job.thread.join(10)
        assert job.state == jobs.STOPPED and job.error is not None and said in job.error
        assert job.finished_at is not None and jobs.judge_job(engine, job.id) is job
    rows, total = delivery_log(engine)
    assert total == 2 and {r.kind for r in rows} == {"judge.finished"}

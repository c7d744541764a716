"""Running an LLM judge over a batch: ``blind-review judge``.

Every item the judge is to rate is turned into the blind view a reviewer's page would get
(:func:`reviewer_app.review.blind_view_in`), then into the judge's messages (:mod:`.prompt`) with the answer's
schema (:mod:`.schema`), sent by the generation client (streaming, retries, keys from the environment) with
``response_format``. A reply that does not fit the schema is answered once with what was wrong
(:attr:`InvalidAnswer.reprompt`); a second bad reply, or a request that failed for good, is recorded as a
failed judgement with its reason, and the run goes on. Pairwise items are judged in both orders.

Each judgement is written as it arrives (one short transaction), so Ctrl-C or a crash loses only the requests
in flight and the same command resumes: what is done is skipped, what failed is asked again. The judge is
one row per model and template (:class:`storage.models.Judge`): a new ``--prompt`` makes a new judge, whose
ratings are kept apart from the first's.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from sqlalchemy.engine import Engine
from tqdm import tqdm

from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.domain.enums import Mode, PairwiseChoice
from reviewer_app.domain.keyed_random import keyed_int, secret_bytes
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import GenerationError
from reviewer_app.generation.client import ChatClient, Completion, RequestFailed
from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams, resolve_api_key
from reviewer_app.judge.names import judge_label
from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeOrder, JudgeTemplate, judge_messages, judge_orders
from reviewer_app.judge.schema import InvalidAnswer, answer_schema, parse_answer
from reviewer_app.review.reviews import blind_view_in
from reviewer_app.webhooks.events import emit
from storage.engine import read_session, write_session
from storage.models import Judge, Judgement, utcnow
from storage.repositories.judge import runs as repo

__all__ = ["JudgeRunReport", "SampleChoice", "check_run_options", "judge_batch", "judge_finished"]

SampleChoice = Literal["all", "rated"] | int  # every sample, those the panel rated, or N drawn at random


@dataclass(frozen=True)
class _Task:
    item_id: int
    repeat: int
    order: JudgeOrder
    messages: list[dict[str, Any]]
    schema: dict[str, Any]


@dataclass
class JudgeRunReport:
    """What a run did: how many judgements it planned, found done, wrote and failed, and how they went."""

    judge: str
    batch: str
    items: int = 0
    planned: int = 0
    already_done: int = 0
    written: int = 0
    failed: int = 0
    reprompted: int = 0
    retries: int = 0
    latency_ms: list[float] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    consistent: int = 0  # pairwise: (item, repeat, question) verdicts the same in both orders
    both_orders: int = 0  # ... of those answered in both orders

    def table(self) -> str:
        """The run in a few lines, for the terminal."""

        def pct(q: int) -> str:
            if not self.latency_ms:
                return "-"
            cuts = statistics.quantiles(self.latency_ms, n=100) if len(self.latency_ms) > 1 else self.latency_ms * 99
            return f"{cuts[q - 1]:.0f}"

        lines = [
            f"{self.judge} on batch {self.batch!r}: {self.items} items, {self.planned} judgements",
            f"  already done {self.already_done}, written {self.written}, failed {self.failed}, "
            f"answered again after an invalid reply {self.reprompted}, request retries {self.retries}",
        ]
        if self.latency_ms:
            tokens = sum(self.output_tokens)
            lines.append(f"  latency ms p50 {pct(50)}, p95 {pct(95)}; output tokens {tokens}")
        if self.both_orders:
            share = self.consistent / self.both_orders
            lines.append(
                f"  position consistency: {self.consistent} of {self.both_orders} verdicts ({share:.0%}) are the "
                "same with the answers swapped; the others count as ties for the judge"
            )
        for reason, n in self.reasons.most_common(5):
            lines.append(f"  failed x{n}: {reason}")
        if self.failed:
            lines.append("  Run the same command again to retry the failed judgements.")
        return "\n".join(lines)


def _pick_samples(keys: Sequence[str], secret: str, n: int) -> set[str]:
    """``n`` of the samples, drawn with the batch's secret: the same n for every rerun, unguessable order."""
    key = secret_bytes(secret)
    ranked = sorted(dict.fromkeys(keys), key=lambda k: keyed_int(key, 62, "judge-samples", k))
    return set(ranked[:n])


def _judge_row(engine: Engine, spec: ModelSpec, template: JudgeTemplate, params: SamplingParams) -> Judge:
    with write_session(engine) as session:
        found = repo.find_judge(session, spec.name, spec.api_model, template.digest)
        if found is not None:
            return found
        text = "[system]\n" + template.system + "\n[user]\n" + template.user if template.system else template.user
        return repo.add_judge(
            session,
            Judge(
                name=spec.name,
                api_model=spec.api_model,
                base_url=spec.base_url,
                template_digest=template.digest,
                template_text=text,
                params_json=json.dumps(params.as_metadata()),
            ),
        )


def _plan(
    engine: Engine,
    batch_name: str,
    judge_id: int,
    template: JudgeTemplate,
    samples: SampleChoice,
    repeats: int,
    report: JudgeRunReport,
) -> list[_Task]:
    """The judgements still to make, each with its messages (built from the blind view, in both orders)."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    rubric: Rubric = batch_rubric(batch)
    tasks: list[_Task] = []
    with read_session(engine) as session:
        items = repo.judge_items(session, batch.id)
        if samples == "rated":
            keep = repo.rated_sample_keys(session, batch.id)
            items = [i for i in items if i[1] in keep]
        elif not isinstance(samples, str):
            keep = _pick_samples([i[1] for i in items], batch.secret, samples)
            items = [i for i in items if i[1] in keep]
        done = repo.done_keys(session, judge_id, batch.id)
        report.items = len(items)
        for item_id, _sample, _scenario in items:
            view = blind_view_in(session, batch, item_id, swapped=False)
            schema = answer_schema(view.dimensions, Mode(batch.mode))
            for order in judge_orders(view):
                messages: list[dict[str, Any]] | None = None
                for repeat in range(repeats):
                    report.planned += 1
                    if (item_id, repeat, order.swapped) in done:
                        report.already_done += 1
                        continue
                    messages = messages or judge_messages(order.view, rubric, template)
                    tasks.append(_Task(item_id, repeat, order, messages, schema))
    return tasks


def _row(task: _Task, judge_id: int, batch_id: int, **values: Any) -> dict[str, Any]:
    return {
        "judge_id": judge_id,
        "batch_id": batch_id,
        "item_id": task.item_id,
        "repeat": task.repeat,
        "swapped": task.order.swapped,
        "reason": None,
        "raw_response": None,
        "error": None,
        "latency_ms": None,
        "output_tokens": None,
        "answers_json": "{}",
        "created_at": utcnow(),  # a retried failure's new answer is new: the report's revision sees it
        **values,
    }


async def _judge_one(client: ChatClient, task: _Task, params: SamplingParams) -> tuple[dict[str, Any], bool]:
    """One judgement's stored fields (answers, or why it failed) and whether it needed a second ask."""
    first: Completion = await client.complete(task.messages, params, response_format=task.schema)
    spent = {"latency_ms": first.latency_ms, "output_tokens": first.output_tokens, "attempts": first.attempts}
    try:
        answer = parse_answer(first.output, task.schema)
        return {**spent, **_answered(answer.values, answer.reason, first.output)}, False
    except InvalidAnswer as invalid:
        again = [*task.messages, {"role": "assistant", "content": first.output}]
        again.append({"role": "user", "content": invalid.reprompt})
        second = await client.complete(again, params, response_format=task.schema)
        spent = {
            "latency_ms": first.latency_ms + second.latency_ms,
            "output_tokens": first.output_tokens + second.output_tokens,
            "attempts": first.attempts + second.attempts,
        }
        try:
            answer = parse_answer(second.output, task.schema)
        except InvalidAnswer as still:
            failed = {"status": repo.FAILED, "error": still.reason, "raw_response": second.output}
            return {**spent, **failed}, True
        return {**spent, **_answered(answer.values, answer.reason, second.output)}, True


def _answered(values: dict[str, str], reason: str | None, raw: str) -> dict[str, Any]:
    return {"status": repo.OK, "answers_json": json.dumps(values), "reason": reason, "raw_response": raw}


def judge_batch(
    engine: Engine,
    batch_name: str,
    spec: ModelSpec,
    *,
    samples: SampleChoice = "all",
    repeats: int = 1,
    concurrency: int = 8,
    template: JudgeTemplate = DEFAULT_TEMPLATE,
    params: SamplingParams | None = None,
    policy: RetryPolicy | None = None,
    progress: bool = True,
    observe: Callable[[JudgeRunReport], None] | None = None,
) -> JudgeRunReport:
    """Have the judge ``spec`` rate the batch's items (``samples``: all of them, those of the samples the panel
    rated, or ``N`` samples drawn with the batch's secret), each ``repeats`` times (seed + repeat, when a seed
    is set), pairs in both orders. Skips what this judge (model and template) has answered; asks the failed
    ones again. Raises NotFoundError for an unknown batch, GenerationError for a spec or key that cannot be
    used (before any request). ``observe`` is handed the run's report as soon as it exists, and may read its
    counts while the run fills them in (an API-started run's status, :mod:`.jobs`)."""
    check_run_options(samples, repeats, concurrency)
    params = params or SamplingParams(temperature=0.0, max_tokens=512)
    policy = policy or RetryPolicy()
    api_key = resolve_api_key(spec)
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    judge = _judge_row(engine, spec, template, params)
    assert judge.id is not None
    report = JudgeRunReport(judge=judge_label(judge.name, judge.template_digest), batch=batch.name)
    if observe is not None:
        observe(report)
    tasks = _plan(engine, batch_name, judge.id, template, samples, repeats, report)
    bar = tqdm(total=len(tasks), desc=report.judge, unit="judgement", disable=not progress, leave=False)

    def on_retry(_reason: str) -> None:
        report.retries += 1

    async def run_all() -> None:
        queue: asyncio.Queue[_Task] = asyncio.Queue()
        for task in tasks:
            queue.put_nowait(task)
        client = ChatClient(spec, params, policy, api_key=api_key, concurrency=concurrency, on_retry=on_retry)
        async with client:

            async def worker() -> None:
                while not queue.empty():
                    task = queue.get_nowait()
                    seeded = params if params.seed is None else replace(params, seed=params.seed + task.repeat)
                    try:
                        values, asked_twice = await _judge_one(client, task, seeded)
                    except RequestFailed as exc:
                        values = {"status": repo.FAILED, "error": exc.reason, "attempts": exc.attempts}
                        asked_twice = False
                    assert batch.id is not None and judge.id is not None
                    with write_session(engine) as session:
                        repo.save_judgement(session, _row(task, judge.id, batch.id, **values))
                    report.reprompted += asked_twice
                    if values["status"] == repo.OK:
                        report.written += 1
                        report.latency_ms.append(values["latency_ms"])
                        report.output_tokens.append(values["output_tokens"])
                    else:
                        report.failed += 1
                        report.reasons[str(values["error"])[:200]] += 1
                    bar.update()

            await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(tasks))))))

    try:
        asyncio.run(run_all())
    finally:
        bar.close()
    if Mode(batch.mode) is Mode.PAIRWISE:
        with read_session(engine) as session:
            report.consistent, report.both_orders = order_consistency(repo.judgements(session, judge.id, batch.id))
    judge_finished(engine, report, batch.id, state="finished")
    return report


def check_run_options(samples: SampleChoice, repeats: int, concurrency: int) -> None:
    """GenerationError for a run's option out of range, before anything is asked (the CLI's and the API's)."""
    if repeats < 1:
        raise GenerationError("--repeats must be 1 or more")
    if concurrency < 1:
        raise GenerationError("--concurrency must be 1 or more")
    if not isinstance(samples, str) and samples < 1:
        raise GenerationError("--samples must be all, rated or a number of samples of 1 or more")


def judge_finished(
    engine: Engine, report: JudgeRunReport, batch_id: int, *, state: str, error: str | None = None
) -> None:
    """Tell the webhooks (``judge.finished``) that a run ended: each run is its own happening."""
    data = {"batch": report.batch, "batch_id": batch_id, "judge": report.judge, "state": state, "error": error,
            "items": report.items, "planned": report.planned, "already_done": report.already_done,
            "written": report.written, "failed": report.failed}  # fmt: skip
    emit(engine, "judge.finished", data, dedup_key=f"judge:{uuid.uuid4()}", batch_id=batch_id)


def order_consistency(rows: Sequence[Judgement]) -> tuple[int, int]:
    """(verdicts the same in both orders, verdicts answered in both orders), per item, repeat and question:
    a verdict given with the answers swapped is turned back (A and B exchanged) before comparing."""
    left, right = PairwiseChoice.LEFT.value, PairwiseChoice.RIGHT.value
    flip = {left: right, right: left}
    seen: dict[tuple[int, int], dict[bool, dict[str, str]]] = {}
    for row in rows:
        values: dict[str, str] = json.loads(row.answers_json)
        if row.swapped:
            values = {k: flip.get(v, v) for k, v in values.items()}
        seen.setdefault((row.item_id, row.repeat), {})[row.swapped] = values
    same = total = 0
    for orders in seen.values():
        if len(orders) == 2:
            for name, value in orders[False].items():
                if name in orders[True]:
                    total += 1
                    same += orders[True][name] == value
    return same, total

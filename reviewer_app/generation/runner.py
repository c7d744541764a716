"""Run every candidate model over a SAMPLES file and write a batch that ``load-batch`` takes as it is.

The batch is appended one complete line per output (a single ``write`` of an ``O_APPEND`` descriptor), so
Ctrl-C or a crash leaves a valid file; a torn last line from a hard kill is cut off on the next run. A rerun
skips every (sample_id, model, repeat) already written and retries the ones in ``<out>.failures.jsonl``.
Failed generations never go into the batch, where reviewers would see them.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from reviewer_app.domain.checks import parse_checks, run_checks
from reviewer_app.errors import GenerationError, Problem, ValidationError
from reviewer_app.generation.client import ChatClient, Completion, RequestFailed
from reviewer_app.generation.samples_file import Sample, build_messages, place_image, read_samples
from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams, resolve_api_key

log = logging.getLogger(__name__)

Key = tuple[str, str, int]  # (sample_id, model, repeat)
# Workers start this far apart (64 workers: over 126 ms). Started at once, their streams stay in lockstep:
# every first token of a wave lands in the same event-loop tick and waits behind the others' bookkeeping,
# which is client time measured as TTFT (and, on a real server, 64 prefills at once). A load-generator
# ramp-up, not a rate limit: all workers run from then on.
_START_SPREAD_S = 0.002


@dataclass
class ModelStats:
    """What happened to one model in this run."""

    model: str
    already_done: int = 0
    written: int = 0
    failed: int = 0
    retries: int = 0
    ttft_ms: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    # The samples' automatic checks on the new outputs (as ``load-batch`` will run them): check -> count.
    checks_passed: Counter[str] = field(default_factory=Counter)
    checks_run: Counter[str] = field(default_factory=Counter)

    def check_line(self) -> str | None:
        """ "model: checks passed: json 45/50, short 50/50" (None: its samples have no checks)."""
        if not self.checks_run:
            return None
        said = ", ".join(f"{name} {self.checks_passed[name]}/{n}" for name, n in sorted(self.checks_run.items()))
        return f"{self.model}: automatic checks passed (new outputs): {said}"


@dataclass
class GenerationReport:
    """Per-model results of :func:`generate_batch`, with the paths written."""

    out: Path
    failures_path: Path
    stats: list[ModelStats]

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.stats)

    def table(self) -> str:
        """A plain-text summary for the terminal: counts, TTFT and latency percentiles, failure reasons."""

        def pct(values: list[float], q: int) -> str:
            if not values:
                return "-"
            return (
                f"{statistics.quantiles(values, n=100, method='inclusive')[q - 1]:.0f}"
                if len(values) > 1
                else f"{values[0]:.0f}"
            )

        width = max([len("model")] + [len(s.model) for s in self.stats])
        lines = [
            f"{'model':<{width}}  {'new':>5}  {'had':>5}  {'failed':>6}  {'retries':>7}  "
            f"{'ttft p50':>8}  {'ttft p95':>8}  {'lat p50':>8}  {'lat p95':>8}  {'tokens':>6}"
        ]
        for s in self.stats:
            tokens = f"{statistics.fmean(s.output_tokens):.0f}" if s.output_tokens else "-"
            lines.append(
                f"{s.model:<{width}}  {s.written:>5}  {s.already_done:>5}  {s.failed:>6}  {s.retries:>7}  "
                f"{pct(s.ttft_ms, 50):>8}  {pct(s.ttft_ms, 95):>8}  {pct(s.latency_ms, 50):>8}  "
                f"{pct(s.latency_ms, 95):>8}  {tokens:>6}"
            )
        lines.append("(times in ms; tokens = mean output tokens of the new outputs)")
        lines += [line for s in self.stats if (line := s.check_line()) is not None]
        for s in self.stats:
            for reason, count in s.reasons.most_common(3):
                lines.append(f"{s.model}: {count} failed: {reason}")
        if self.failed:
            lines.append(
                f"{self.failed} output(s) failed; see {self.failures_path}. Run the same command again to retry them."
            )
        return "\n".join(lines)


def failures_path_for(out: Path) -> Path:
    return out.with_name(out.name + ".failures.jsonl")


def read_done(out: Path) -> tuple[set[Key], dict[str, dict[str, Any]]]:
    """Keys already in the batch file and, per model, the metadata of one of its outputs. A torn last
    line (the process was killed mid-write) is cut off; any other unreadable line raises ValidationError."""
    done: set[Key] = set()
    metadata: dict[str, dict[str, Any]] = {}
    if not out.exists():
        return done, metadata
    raw = out.read_bytes()
    if raw and not raw.endswith(b"\n"):
        keep = raw.rfind(b"\n") + 1
        log.warning("%s: cutting off an incomplete last line left by an interrupted run", out)
        with out.open("r+b") as handle:
            handle.truncate(keep)
        raw = raw[:keep]
    problems: list[Problem] = []
    for number, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["sample_id"]), str(record["model"]), int(record.get("repeat", 0)))
        except (ValueError, KeyError, TypeError):
            problems.append(Problem(out.name, number, None, "not a batch line written by generate"))
            continue
        done.add(key)
        metadata.setdefault(key[1], record.get("metadata") or {})
    if problems:
        raise ValidationError(problems, hint="Give --out a new file, or repair this one and run again.")
    return done, metadata


def _check_same_params(spec: ModelSpec, params: SamplingParams, existing: dict[str, Any] | None) -> None:
    """Outputs of one model in one batch must share their sampling parameters, or comparisons lie."""
    if not existing:
        return
    wanted = {**params.as_metadata(), "api_model": spec.api_model}
    wanted["seed"] = None if params.seed is None else params.seed + int(existing.get("repeat", 0))
    changed = [f"{k}={existing.get(k)!r} (now {v!r})" for k, v in wanted.items() if k in existing and existing[k] != v]
    if changed:
        raise GenerationError(
            f"the batch already has outputs of {spec.name} made with {', '.join(changed)}; use the same "
            f"parameters to resume, or write to another --out"
        )


class _Appender:
    """Appends whole JSON lines with one write each, so an interruption never splits a line."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        os.write(self._fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))

    def close(self) -> None:
        os.fsync(self._fd)
        os.close(self._fd)


def _record(
    sample: Sample,
    images: list[str],
    spec: ModelSpec,
    repeat: int,
    params: SamplingParams,
    done: Completion,
    samples_sha256: str | None = None,
) -> dict[str, Any]:
    record = sample.to_json()
    record.pop("images", None)
    record.update(model=spec.name, output=done.output, repeat=repeat)
    if images:
        record["images"] = images
    decode_ms = done.latency_ms - done.ttft_ms
    record["metadata"] = {
        "ttft_ms": done.ttft_ms,
        "latency_ms": done.latency_ms,
        "output_tokens": done.output_tokens,
        "output_tokens_source": done.output_tokens_source,
        "finish_reason": done.finish_reason,
        "tokens_per_second": round((done.output_tokens - 1) / (decode_ms / 1000), 1)
        if done.output_tokens > 1 and decode_ms > 0
        else None,
        "attempts": done.attempts,
        "api_model": spec.api_model,
        **params.as_metadata(),
        "seed": None if params.seed is None else params.seed + repeat,
        "repeat": repeat,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if samples_sha256 is not None:  # which samples file was asked (load-batch keeps it for `rerun`)
        record["metadata"]["samples_sha256"] = samples_sha256
    return record


async def _run_model(
    spec: ModelSpec,
    api_key: str | None,
    work: list[tuple[Sample, int]],
    *,
    base_dir: Path,
    out_dir: Path,
    params: SamplingParams,
    policy: RetryPolicy,
    concurrency: int,
    batch: _Appender,
    failures: _Appender,
    stats: ModelStats,
    bar: tqdm[Any],
    samples_sha256: str | None = None,
) -> None:
    queue: asyncio.Queue[tuple[Sample, int]] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)

    def on_retry(_reason: str) -> None:
        stats.retries += 1
        bar.set_postfix(failed=stats.failed, retries=stats.retries, refresh=False)

    async with ChatClient(spec, params, policy, api_key=api_key, concurrency=concurrency, on_retry=on_retry) as client:

        async def worker(index: int) -> None:
            await asyncio.sleep(index * _START_SPREAD_S)
            while not queue.empty():
                sample, repeat = queue.get_nowait()
                sample_params = SamplingParams(
                    params.temperature,
                    params.top_p,
                    params.max_tokens,
                    None if params.seed is None else params.seed + repeat,
                )
                messages = build_messages(sample, base_dir)
                images = [place_image(base_dir / p, out_dir) for p in sample.images]
                try:
                    done = await client.complete(messages, sample_params)
                except RequestFailed as exc:
                    stats.failed += 1
                    stats.reasons[exc.reason] += 1
                    failures.append(
                        {
                            "sample_id": sample.sample_id,
                            "model": spec.name,
                            "repeat": repeat,
                            "reason": exc.reason,
                            "attempts": exc.attempts,
                        }
                    )
                    log.info("%s %s#%d failed: %s", spec.name, sample.sample_id, repeat, exc.reason)
                    bar.set_postfix(failed=stats.failed, retries=stats.retries, refresh=False)
                else:
                    batch.append(_record(sample, images, spec, repeat, params, done, samples_sha256))
                    stats.written += 1
                    stats.ttft_ms.append(done.ttft_ms)
                    stats.latency_ms.append(done.latency_ms)
                    stats.output_tokens.append(done.output_tokens)
                    if sample.checks is not None:
                        for name, passed, _ in run_checks(parse_checks(sample.checks), done.output):
                            stats.checks_run[name] += 1
                            stats.checks_passed[name] += passed
                bar.update(1)

        await asyncio.gather(*(worker(i) for i in range(min(concurrency, max(len(work), 1)))))


def generate_batch(
    samples_path: Path,
    out: Path,
    models: list[ModelSpec],
    *,
    params: SamplingParams,
    repeats: int = 1,
    concurrency: int = 8,
    policy: RetryPolicy | None = None,
    progress: bool = True,
) -> GenerationReport:
    """Generate ``repeats`` outputs per sample and model into the batch file ``out``, resuming it.

    Keys are read from each model's environment variable before any request is made. Raises
    ValidationError (bad samples or batch file) or GenerationError (bad model spec, missing key, changed
    parameters); failed requests do not raise, they are counted and written to ``<out>.failures.jsonl``.
    """
    if not models:
        raise GenerationError("give at least one --model NAME=BASE_URL")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise GenerationError(f"model names must be distinct: {', '.join(names)}")
    if repeats < 1 or concurrency < 1:
        raise GenerationError("--repeats and --concurrency must be at least 1")
    if out.resolve() == samples_path.resolve():
        raise GenerationError("--out must be a new batch file, not the samples file")
    policy = policy or RetryPolicy()
    keys = {m.name: resolve_api_key(m) for m in models}
    samples = read_samples(samples_path)
    samples_sha256 = hashlib.sha256(samples_path.read_bytes()).hexdigest()
    done, existing = read_done(out)
    for spec in models:
        _check_same_params(spec, params, existing.get(spec.name))
    failures_path = failures_path_for(out)
    failures_path.unlink(missing_ok=True)  # its entries are not in the batch, so they are retried now
    plans = {
        m.name: [(s, r) for s in samples for r in range(repeats) if (s.sample_id, m.name, r) not in done]
        for m in models
    }
    stats = [ModelStats(m.name, already_done=len(samples) * repeats - len(plans[m.name])) for m in models]
    batch, failures = _Appender(out), _Appender(failures_path)
    bars = [
        tqdm(
            total=len(plans[m.name]),
            desc=m.name,
            position=i,
            unit="out",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
            leave=True,
        )
        for i, m in enumerate(models)
    ]

    async def run_all() -> None:
        await asyncio.gather(
            *(
                _run_model(
                    m,
                    keys[m.name],
                    plans[m.name],
                    base_dir=samples_path.parent,
                    out_dir=out.parent.resolve(),
                    params=params,
                    policy=policy,
                    concurrency=concurrency,
                    batch=batch,
                    failures=failures,
                    stats=s,
                    bar=bar,
                    samples_sha256=samples_sha256,
                )
                for m, s, bar in zip(models, stats, bars, strict=True)
            )
        )

    # Everything alive now (imports, samples) lives for the whole run; frozen, the collector's full passes
    # skip it, so no pause of tens of ms lands in the middle of the streams and shows up as TTFT.
    gc.freeze()
    try:
        asyncio.run(run_all())
    finally:
        gc.unfreeze()
        for bar in bars:
            bar.close()
        batch.close()
        failures.close()
        if failures_path.exists() and failures_path.stat().st_size == 0:
            failures_path.unlink()
    return GenerationReport(out, failures_path, stats)

"""The ``build-eval-set``, ``generate`` and ``rerun`` subcommands of ``blind-review``: parse, call one function, print.

Errors a user can cause become one message on stderr and exit status 1; Ctrl-C during ``generate`` leaves
a valid batch file and exits 130 with a hint to rerun.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from reviewer_app.cli._common import open_engine
from reviewer_app.errors import BlindReviewError

BUILD_HELP = """\
Sample a private eval set from your request logs (JSONL, a JSON array, or CSV), stratified by scenario.

Each log record needs a prompt (the field named by --prompt-field, default "prompt") or chat "messages"
(a JSON list; trailing assistant turns, the logged answer, are dropped; base64 images are saved next to
--out), and a scenario in the field named by --by (dots reach into objects: --by meta.route). Optional
"reference", "criteria" and "images" are kept. Exact duplicate prompts are kept once. Every scenario gets
at least --min-per-scenario prompts (or all it has), the rest follows traffic. Same logs + same --seed
give the same set.

example:
  blind-review build-eval-set logs.jsonl --n 200 --by scenario --seed 7 --out samples.jsonl
"""

GENERATE_HELP = """\
Ask every candidate model to answer each sample (OpenAI-compatible chat completions, streamed) and write
a batch file for load-batch, with ttft_ms, latency_ms, output_tokens and finish_reason per output.

--model NAME=BASE_URL[@ENV_VAR], or NAME=API_MODEL=BASE_URL[@ENV_VAR] when the server's model id differs
from the label. The API key is read from ENV_VAR only. Rerunning the same command skips outputs already
written and retries the failed ones (listed in OUT.failures.jsonl).

examples:
  blind-review generate samples.jsonl --out batch.jsonl --repeats 2 --temperature 0.7 --seed 1 \\
      --model llama=meta-llama/Llama-3.1-8B-Instruct=http://gpu1:8000/v1 \\
      --model qwen=qwen2.5:7b=http://localhost:11434/v1 \\
      --model gpt-4o=https://api.openai.com/v1@OPENAI_API_KEY
"""


RERUN_HELP = """\
Ask a new or updated model the samples of an earlier batch with the same parameters (temperature, top_p,
max_tokens, seed, repeats) as that batch's outputs were made with by generate, into a batch file for
load-batch --follow-up. The samples are written beside --out (OUT.samples/). Resumable like generate.

--model NAME=BASE_URL[@ENV_VAR] (or NAME=API_MODEL=BASE_URL[@ENV_VAR]); the key is read from ENV_VAR only.

example:
  blind-review rerun support-v1 --model llama-3.2=http://gpu1:8000/v1 --out v2.jsonl
  blind-review load-batch v2.jsonl --follow-up support-v1 --name support-v2
"""


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except BlindReviewError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    return run


def _build_eval_set(args: argparse.Namespace) -> int:
    from reviewer_app.generation.eval_set import build_eval_set

    summary = build_eval_set(
        Path(args.logs),
        Path(args.out),
        n=args.n,
        by=args.by,
        seed=args.seed,
        min_per_scenario=args.min_per_scenario,
        prompt_field=args.prompt_field,
    )
    print(summary.table())
    print(f"wrote {summary.taken} samples to {summary.out}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    # Imported here: the HTTP client stack (httpx, aiohttp) costs every other command half a second to load.
    from reviewer_app.generation.client import RetryPolicy, SamplingParams, parse_model_spec
    from reviewer_app.generation.runner import generate_batch

    models = [parse_model_spec(text) for text in args.model]
    params = SamplingParams(args.temperature, args.top_p, args.max_tokens, args.seed)
    policy = RetryPolicy(retries=args.retries, timeout_s=args.timeout)
    out = Path(args.out)
    try:
        report = generate_batch(
            Path(args.samples),
            out,
            models,
            params=params,
            repeats=args.repeats,
            concurrency=args.concurrency,
            policy=policy,
            progress=not args.no_progress,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted; every output written so far is in {out}. Run the same command to resume.",
            file=sys.stderr,
        )
        return 130
    print(report.table())
    return 0


def _rerun(args: argparse.Namespace) -> int:
    from reviewer_app.generation.client import RetryPolicy, parse_model_spec
    from reviewer_app.versions.rerun import rerun_batch

    models = [parse_model_spec(text) for text in args.model]
    out = Path(args.out)
    try:
        plan, report = rerun_batch(
            open_engine(),
            args.baseline,
            out,
            models,
            params_of=args.params_of,
            concurrency=args.concurrency,
            policy=RetryPolicy(retries=args.retries, timeout_s=args.timeout),
            progress=not args.no_progress,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted; every output written so far is in {out}. Run the same command to resume.",
            file=sys.stderr,
        )
        return 130
    run = plan.run
    print(
        f"{plan.samples} samples of batch {plan.baseline!r} x {run.repeats} repeat(s), temperature {run.temperature}, "
        f"top_p {run.top_p}, max_tokens {run.max_tokens}, seed {run.seed}"
    )
    print(report.table())
    if not report.failed:
        print(f"next: blind-review load-batch {out} --follow-up {plan.baseline} --name NAME")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``build-eval-set`` and ``generate``; each sets ``handler`` (returning the exit status)."""
    build = subparsers.add_parser(
        "build-eval-set",
        help="sample an eval set from request logs, stratified by scenario",
        description=BUILD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument("logs", help="request logs: .jsonl, .json (array) or .csv")
    build.add_argument("--n", type=int, default=200, help="how many prompts to take (default 200)")
    build.add_argument("--by", default="scenario", help="field holding the scenario (default scenario)")
    build.add_argument("--seed", type=int, default=0, help="random seed; same seed, same set (default 0)")
    build.add_argument(
        "--min-per-scenario",
        type=int,
        default=5,
        help="floor per scenario, so rare ones are kept (default 5)",
    )
    build.add_argument("--prompt-field", default="prompt", help="field holding a plain prompt (default prompt)")
    build.add_argument("--out", required=True, help="SAMPLES.jsonl to write")
    build.set_defaults(handler=_guarded(_build_eval_set))

    gen = subparsers.add_parser(
        "generate",
        help="have candidate models answer the samples; writes a batch with latency",
        description=GENERATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gen.add_argument("samples", help="SAMPLES.jsonl from build-eval-set")
    gen.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="NAME=BASE_URL[@ENV_VAR]",
        help="repeat per candidate",
    )
    gen.add_argument("--out", required=True, help="batch JSONL to write or resume")
    gen.add_argument("--temperature", type=float, default=0.0, help="default 0")
    gen.add_argument("--top-p", type=float, default=1.0, help="default 1")
    gen.add_argument("--max-tokens", type=int, default=1024, help="default 1024")
    gen.add_argument("--seed", type=int, default=None, help="sent as seed + repeat index (default: none)")
    gen.add_argument("--repeats", type=int, default=1, help="outputs per sample and model (default 1)")
    gen.add_argument("--concurrency", type=int, default=8, help="requests in flight per model (default 8)")
    gen.add_argument("--retries", type=int, default=4, help="retries on 429, 5xx, dropped connections (default 4)")
    gen.add_argument("--timeout", type=float, default=300.0, help="seconds per request attempt (default 300)")
    gen.add_argument("--no-progress", action="store_true", help="no progress bars (e.g. in CI logs)")
    gen.set_defaults(handler=_guarded(_generate))

    rerun = subparsers.add_parser(
        "rerun",
        help="have new models answer an earlier batch's samples with its parameters (for --follow-up)",
        description=RERUN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rerun.add_argument("baseline", help="the batch whose samples and parameters to reuse")
    rerun.add_argument(
        "--model", action="append", required=True, metavar="NAME=BASE_URL[@ENV_VAR]", help="repeat per model"
    )
    rerun.add_argument("--out", required=True, help="batch JSONL to write or resume")
    rerun.add_argument(
        "--params-of", default=None, metavar="MODEL", help="whose parameters, when the baseline's differ"
    )
    rerun.add_argument("--concurrency", type=int, default=8, help="requests in flight per model (default 8)")
    rerun.add_argument("--retries", type=int, default=4, help="retries on 429, 5xx, dropped connections (default 4)")
    rerun.add_argument("--timeout", type=float, default=300.0, help="seconds per request attempt (default 300)")
    rerun.add_argument("--no-progress", action="store_true", help="no progress bars (e.g. in CI logs)")
    rerun.set_defaults(handler=_guarded(_rerun))

"""The commands that make batch files by asking models: ``build-eval-set`` samples prompts from request logs,
``generate`` has candidate models answer them, ``rerun`` has new models answer an earlier batch's samples.

Together because they call model endpoints (``reviewer_app.generation``) and write files for ``load-batch``
rather than the database (``rerun`` only reads it). Ctrl-C during ``generate`` or ``rerun`` leaves a valid
batch file and exits 130 with a hint to rerun.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewer_app.cli._common import Subparsers, add_command, add_request_options, open_engine, with_examples

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


def _interrupted(out: Path) -> int:
    """Ctrl-C: every line written so far is whole, so say where it is and that the same command resumes."""
    print(
        f"\ninterrupted; every output written so far is in {out}. Run the same command to resume.",
        file=sys.stderr,
    )
    return 130


def cmd_build_eval_set(args: argparse.Namespace) -> int:
    """Sample the eval set from the logs and print how many prompts each scenario gave."""
    from reviewer_app.generation.eval_set import build_eval_set

    summary = build_eval_set(
        Path(args.logs),
        Path(args.out),
        n=args.n,
        by=args.by,
        seed=args.seed,
        min_per_scenario=args.min_per_scenario,
        prompt_field=args.prompt_field,
        source=args.source,
        requests=Path(args.requests) if args.requests else None,
        scenario_field=args.scenario_field,
    )
    print(summary.table())
    print(f"wrote {summary.taken} samples to {summary.out}")
    return 0


def cmd_import_traces(args: argparse.Namespace) -> int:
    """Turn a tracing tool's export into requests.jsonl and one batch file of logged answers per model."""
    from reviewer_app.generation import import_traces

    done = import_traces(
        Path(args.file),
        args.source,
        Path(args.out),
        requests=Path(args.requests) if args.requests else None,
        scenario_field=args.scenario_field,
        model=args.model,
    )
    print("\n".join(done.lines()))
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    """Have every candidate model answer the samples into the batch file, and print the run's table."""
    # Imported here: the HTTP client stack (httpx, aiohttp) costs every other command half a second to load.
    from reviewer_app.generation.runner import generate_batch
    from reviewer_app.generation.specs import RetryPolicy, SamplingParams, parse_model_spec

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
        return _interrupted(out)
    print(report.table())
    return 0


def cmd_rerun(args: argparse.Namespace) -> int:
    """Have the new models answer the baseline's samples with its parameters; print them and the next step."""
    from reviewer_app.generation.specs import RetryPolicy, parse_model_spec
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
        return _interrupted(out)
    run = plan.run
    print(
        f"{plan.samples} samples of batch {plan.baseline!r} x {run.repeats} repeat(s), temperature {run.temperature}, "
        f"top_p {run.top_p}, max_tokens {run.max_tokens}, seed {run.seed}"
    )
    print(report.table())
    if not report.failed:
        print(f"next: blind-review load-batch {out} --follow-up {plan.baseline} --name NAME")
    return 0


def _trace_options(parser: argparse.ArgumentParser, sources: tuple[str, ...], *, required: bool) -> None:
    parser.add_argument(
        "--from",
        dest="source",
        choices=sources,
        required=required,
        help="the export's tool" + ("" if required else " (default: the tool's own request log format)"),
    )
    parser.add_argument("--requests", help="--from openai-batch: the batch job's input file (the prompts)")
    parser.add_argument(
        "--scenario-field",
        help="dotted path to the scenario in each record, e.g. metadata.scenario (default: metadata.scenario, "
        "else the trace's name, else 'all')",
    )


def register(subparsers: Subparsers) -> None:
    """Add ``build-eval-set``, ``import-traces``, ``generate`` and ``rerun``, in that order."""
    from reviewer_app.generation import TRACE_SOURCES

    build = add_command(
        subparsers,
        "build-eval-set",
        cmd_build_eval_set,
        help="sample an eval set from request logs, stratified by scenario",
        description=BUILD_HELP,
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
    _trace_options(build, TRACE_SOURCES, required=False)

    traces = add_command(
        subparsers,
        "import-traces",
        cmd_import_traces,
        help="turn OpenAI, Langfuse or LangSmith traces into requests for build-eval-set and batch files for "
        "load-batch",
        description=with_examples(
            "Read a tracing tool's export and write, in --out: requests.jsonl (every traced request: "
            "build-eval-set reads it) and answers-MODEL.jsonl per model (the logged answers as a batch file: "
            "load-batch reads it, with the sample ids an eval set built from the same requests gives them). "
            "Every unusable line is listed, located; nothing is written then. README: 'Importing traces'.",
            "blind-review import-traces langfuse-export.json --from langfuse --scenario-field metadata.feature "
            "--out traces/",
            "blind-review import-traces batch_output.jsonl --from openai-batch --requests batch_input.jsonl "
            "--out traces/",
            "blind-review load-batch traces/answers-gpt-4o.jsonl --rubric rubric.toml --name prod-gpt-4o",
        ),
    )
    traces.add_argument("file", help="the export: JSONL, or a JSON array (or a page with data/traces/runs)")
    _trace_options(traces, TRACE_SOURCES, required=True)
    traces.add_argument("--model", help="the model every answer is from (default: the one each trace names)")
    traces.add_argument("--out", required=True, help="the folder to write requests.jsonl and answers-*.jsonl in")

    gen = add_command(
        subparsers,
        "generate",
        cmd_generate,
        help="have candidate models answer the samples; writes a batch with latency",
        description=GENERATE_HELP,
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
    add_request_options(gen, in_flight="per model ")

    rerun = add_command(
        subparsers,
        "rerun",
        cmd_rerun,
        help="have new models answer an earlier batch's samples with its parameters (for --follow-up)",
        description=RERUN_HELP,
    )
    rerun.add_argument("baseline", help="the batch whose samples and parameters to reuse")
    rerun.add_argument(
        "--model", action="append", required=True, metavar="NAME=BASE_URL[@ENV_VAR]", help="repeat per model"
    )
    rerun.add_argument("--out", required=True, help="batch JSONL to write or resume")
    rerun.add_argument(
        "--params-of", default=None, metavar="MODEL", help="whose parameters, when the baseline's differ"
    )
    add_request_options(rerun, in_flight="per model ")

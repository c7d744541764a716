"""``blind-review judge``: an LLM judge rates a batch's items blind, as a reviewer would, into its own ratings.

The judge's ratings are kept apart from the panel's: ``report`` measures the judge against the panel (its
"Judge vs panel" card) and shows a judge-assisted ranking beside the panel's, never in its place.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewer_app.cli._common import Subparsers, add_command, add_request_options, open_engine
from reviewer_app.errors import GenerationError

JUDGE_HELP = """\
Have an LLM judge rate a batch's items: it reads what a reviewer's page shows (the prompt, the answers under
their anonymous labels, the rubric's questions, criteria and reference where reviewers see them) and nothing
else, and answers in JSON checked against the rubric (asked with response_format json_schema; an invalid
reply is asked once more, then recorded as failed). Pairwise items are judged in both orders; a verdict that
flips with the order counts as a tie for the judge.

--model NAME=BASE_URL[@ENV_VAR], or NAME=API_MODEL=BASE_URL[@ENV_VAR]: any OpenAI-compatible server (vLLM,
llama.cpp, Ollama, hosted); the key is read from ENV_VAR only. A judge is its model and its prompt: another
--prompt FILE makes another judge. Rerunning the same command skips what is done and retries what failed.

--samples all (default: the judge-assisted ranking needs every output judged), rated (the samples the panel
rated: enough for the report card), or N (N samples drawn with the batch's secret, to try a judge out).

examples:
  blind-review judge support-v1 --model judge=Qwen/Qwen2.5-72B-Instruct=http://gpu1:8000/v1
  blind-review judge support-v1 --model gpt-4o-mini=https://api.openai.com/v1@OPENAI_API_KEY --samples 20
  blind-review judge support-v1 --model judge=http://gpu1:8000/v1 --prompt my_template.txt --repeats 3
"""


def _samples(text: str) -> str | int:
    if text in ("all", "rated"):
        return text
    try:
        return int(text)
    except ValueError:
        raise GenerationError(f"--samples {text!r}: expected all, rated or a number of samples") from None


def cmd_judge(args: argparse.Namespace) -> int:
    """Run the judge over the batch and print what it did."""
    # Imported here: the HTTP client stack costs every other command half a second to load.
    from reviewer_app.generation.specs import RetryPolicy, SamplingParams, parse_model_spec
    from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeTemplate
    from reviewer_app.judge.runs import judge_batch

    spec = parse_model_spec(args.model)
    template = JudgeTemplate.from_file(Path(args.prompt)) if args.prompt else DEFAULT_TEMPLATE
    samples = _samples(args.samples)
    try:
        report = judge_batch(
            open_engine(),
            args.batch,
            spec,
            samples="all" if samples == "all" else "rated" if samples == "rated" else int(samples),
            repeats=args.repeats,
            concurrency=args.concurrency,
            template=template,
            params=SamplingParams(args.temperature, 1.0, args.max_tokens, args.seed),
            policy=RetryPolicy(retries=args.retries, timeout_s=args.timeout),
            progress=not args.no_progress,
        )
    except KeyboardInterrupt:
        print(
            "\ninterrupted; every judgement received so far is saved. Run the same command to resume.",
            file=sys.stderr,
        )
        return 130
    print(report.table())
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``judge``."""
    judge = add_command(
        subparsers,
        "judge",
        cmd_judge,
        help="have an LLM judge rate a batch blind, measured against the panel in the report",
        description=JUDGE_HELP,
    )
    judge.add_argument("batch", help="the batch to judge (its name)")
    judge.add_argument("--model", required=True, metavar="NAME=BASE_URL[@ENV_VAR]", help="the judge model")
    judge.add_argument("--samples", default="all", help="all (default), rated, or a number of samples")
    judge.add_argument("--repeats", type=int, default=1, help="judgements per item and order (default 1)")
    judge.add_argument("--prompt", default=None, metavar="FILE", help="a prompt template (see the README)")
    judge.add_argument("--temperature", type=float, default=0.0, help="default 0")
    judge.add_argument("--max-tokens", type=int, default=512, help="default 512")
    judge.add_argument("--seed", type=int, default=None, help="sent as seed + repeat index (default: none)")
    add_request_options(judge, in_flight="")

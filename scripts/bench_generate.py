"""Benchmark: ``generate`` against the local fake OpenAI-compatible server, end to end, per HTTP transport.

2,000 requests at concurrency 64 with a 50 ms first-token delay, through the real path (runner, streaming
client, batch file writes). Prompts are the real AlpacaEval instructions from ../shared/data when present.
The server runs in its own process, so its work does not share our interpreter. Reports requests/s, CPU per
request of the client process (runner, client, transport: everything in this process) and of the server
process, the client's overhead on TTFT (measured TTFT minus the injected first-token delay, p50/p95/p99),
and the 1-minute load average when the row started: on a shared machine, read the overhead with it.

Transports (``--transport``, default ``all``, which interleaves them run by run so they share the machine's
load alike): ``default`` is httpx's own transport (httpcore + h11; one single-connection client per slot, as
the client would use it), ``aiohttp`` is httpx-aiohttp (aiohttp under the httpx API, the one ``generate``
uses), ``lean`` the hand-written HTTP/1.1 transport it replaced, measured only while
reviewer_app/generation/transport.py exists (to compare again, restore it from history:
``git show 2ad228e:reviewer_app/generation/transport.py > reviewer_app/generation/transport.py``).

    .venv/bin/python scripts/bench_generate.py [--transport all] [--requests 2000] [--concurrency 64] [--runs 3]

Rows pace tokens two ways: all tokens at once after the first-token delay (the harder case for the client),
and --token-delay-ms apart (default 5 ms), like a real model streaming at ~200 tokens/s.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "alpaca_eval_outputs" / "gpt4_1106_preview" / "model_outputs.json"

from reviewer_app.generation import runner  # noqa: E402
from reviewer_app.generation.client import ChatClient  # noqa: E402
from reviewer_app.generation.specs import RetryPolicy, SamplingParams, parse_model_spec  # noqa: E402

TARGET_P95_MS = 10.0

Opener = Callable[[int, dict[str, str], ssl.SSLContext, httpx.Timeout], list[httpx.AsyncClient]]


def _httpx_default(
    slots: int, headers: dict[str, str], verify: ssl.SSLContext, timeout: httpx.Timeout
) -> list[httpx.AsyncClient]:
    # One single-connection client per slot, as the client used httpx's transport behind a proxy before:
    # httpcore's pool scans every connection for every request, so one pool of 64 costs more still.
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    return [httpx.AsyncClient(headers=headers, verify=verify, timeout=timeout, limits=limits) for _ in range(slots)]


def _httpx_aiohttp(
    slots: int, headers: dict[str, str], verify: ssl.SSLContext, timeout: httpx.Timeout
) -> list[httpx.AsyncClient]:
    from httpx_aiohttp import HttpxAiohttpClient

    limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
    return [HttpxAiohttpClient(headers=headers, verify=verify, timeout=timeout, limits=limits)]


def _lean(
    slots: int, headers: dict[str, str], verify: ssl.SSLContext, timeout: httpx.Timeout
) -> list[httpx.AsyncClient]:
    from reviewer_app.generation.transport import LeanTransport

    transport = LeanTransport(ssl_context=verify, max_connections=slots)
    return [httpx.AsyncClient(headers=headers, transport=transport, verify=verify, timeout=timeout)]


OPENERS: dict[str, Opener] = {"default": _httpx_default, "aiohttp": _httpx_aiohttp, "lean": _lean}


def available(name: str) -> bool:
    if name == "lean":
        return importlib.util.find_spec("reviewer_app.generation.transport") is not None
    return True


def client_class(opener: Opener) -> type[ChatClient]:
    """ChatClient sending through ``opener``'s clients instead of its own choice."""

    class Benched(ChatClient):
        def _open_clients(
            self, slots: int, headers: dict[str, str], verify: ssl.SSLContext, timeout: httpx.Timeout
        ) -> list[httpx.AsyncClient]:
            return opener(slots, headers, verify, timeout)

    return Benched


def prompts(count: int) -> list[str]:
    """Real instructions (cycled, made distinct) so requests carry realistic prompt sizes."""
    if SHARED.exists():
        base = [r["instruction"] for r in json.loads(SHARED.read_text())]
    else:
        fixture = ROOT / "tests" / "fixtures" / "alpaca_eval" / "gpt4_1106_preview" / "model_outputs.json"
        print(f"note: the AlpacaEval outputs are not in {SHARED}; using the prompts of the small sample in {fixture}")
        base = [r["instruction"] for r in json.loads(fixture.read_text())]
    return [f"{base[i % len(base)]}\n(#{i})" for i in range(count)]


def start_server(first_token_ms: float, token_ms: float, tokens: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.fake_openai",
            "--first-token-delay-ms",
            str(first_token_ms),
            "--token-delay-ms",
            str(token_ms),
            "--tokens",
            str(tokens),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        proc.kill()
        raise SystemExit(f"the fake server did not start: {line!r}")
    return proc, int(line.split()[-1])


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(
    transport: str, requests: int, concurrency: int, first_token_ms: float, token_ms: float, tokens: int
) -> dict[str, float]:
    load = os.getloadavg()[0]
    proc, port = start_server(first_token_ms, token_ms, tokens)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            samples = Path(tmp) / "samples.jsonl"
            samples.write_text(
                "".join(
                    json.dumps({"sample_id": f"b{i}", "scenario": "bench", "prompt": p}) + "\n"
                    for i, p in enumerate(prompts(requests))
                )
            )
            out = Path(tmp) / "batch.jsonl"
            spec = parse_model_spec(f"fake=http://127.0.0.1:{port}/v1")
            runner.ChatClient = client_class(OPENERS[transport])  # what generate_batch sends with
            server_started = process_cpu_s(proc.pid)
            started, cpu_started = time.perf_counter(), time.process_time()
            report = runner.generate_batch(
                samples,
                out,
                [spec],
                params=SamplingParams(max_tokens=256),
                concurrency=concurrency,
                policy=RetryPolicy(retries=0, timeout_s=30),
                progress=False,
            )
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            server_ended = process_cpu_s(proc.pid)
            rows = [json.loads(line) for line in out.read_text().splitlines()]
    finally:
        proc.terminate()
        proc.wait(10)
    overhead = sorted(r["metadata"]["ttft_ms"] - first_token_ms for r in rows)
    q = statistics.quantiles(overhead, n=100, method="inclusive")
    return {
        "ok": len(rows),
        "failed": report.failed,
        "rps": requests / wall,
        "p50": q[49],
        "p95": q[94],
        "p99": q[98],
        "cpu_ms": 1000 * cpu / requests,
        "server_cpu_ms": 1000 * (server_ended - server_started) / requests
        if server_started is not None and server_ended is not None
        else float("nan"),
        "min": overhead[0],
        "load": load,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=[*OPENERS, "all"], default="all")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--first-token-delay-ms", type=float, default=50.0)
    parser.add_argument("--token-delay-ms", type=float, default=5.0)
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--runs", type=int, default=1, help="rows per transport and token pacing")
    args = parser.parse_args()
    wanted = list(OPENERS) if args.transport == "all" else [args.transport]
    transports = [t for t in wanted if available(t)]
    for missing in sorted(set(wanted) - set(transports)):
        print(f"({missing}: not measured, its module is gone)")
    print(
        f"{args.requests} requests, concurrency {args.concurrency}, first token after "
        f"{args.first_token_delay_ms:g} ms, {args.tokens} tokens; {os.cpu_count()} CPUs"
        " shared with the server\n"
    )
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    header = (
        f"{'transport':<9} {'token pacing':<12} {'load':>5} {'ok':>5} {'failed':>6} {'req/s':>6} "
        f"{'client cpu/req':>14} {'server cpu/req':>14} {'overhead p50':>12} {'p95':>6} {'p99':>6}"
        f"  p95 < {TARGET_P95_MS:g} ms"
    )
    print(header)
    print("-" * len(header))
    results: dict[tuple[str, float], list[dict[str, float]]] = {}
    for token_ms in (0.0, args.token_delay_ms):
        for _ in range(args.runs):
            for transport in transports:  # interleaved, so a burst of load elsewhere hits every transport
                r = run(transport, args.requests, args.concurrency, args.first_token_delay_ms, token_ms, args.tokens)
                results.setdefault((transport, token_ms), []).append(r)
                label = "at once" if token_ms == 0 else f"{token_ms:g} ms/token"
                print(
                    f"{transport:<9} {label:<12} {r['load']:>5.2f} {r['ok']:>5.0f} {r['failed']:>6.0f} "
                    f"{r['rps']:>6.0f} {r['cpu_ms']:>11.2f} ms {r['server_cpu_ms']:>11.2f} ms "
                    f"{r['p50']:>9.1f} ms {r['p95']:>6.1f} {r['p99']:>6.1f}  "
                    f"{'met' if r['p95'] < TARGET_P95_MS else 'NOT met'}",
                    flush=True,
                )
    if args.runs > 1:
        print("\nmedians over the runs:")
        for (transport, token_ms), rows in results.items():
            label = "at once" if token_ms == 0 else f"{token_ms:g} ms/token"
            med = {k: statistics.median(r[k] for r in rows) for k in ("rps", "cpu_ms", "p50", "p95", "p99", "load")}
            print(
                f"{transport:<9} {label:<12} {med['load']:>5.2f} {'':>5} {'':>6} {med['rps']:>6.0f} "
                f"{med['cpu_ms']:>11.2f} ms {'':>14} {med['p50']:>9.1f} ms {med['p95']:>6.1f} {med['p99']:>6.1f}"
            )
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(
        "\noverhead (ms) = measured TTFT - injected first-token delay: network, server and client together;"
        "\nload = 1-minute load average when the row started (the machine's other work competes for the CPUs)"
    )


if __name__ == "__main__":
    main()

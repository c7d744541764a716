"""Build a private eval set from a team's own request logs: stratified, deduplicated, reproducible.

Proportional sampling alone drowns rare scenarios (a 2 % scenario gets 4 of 200 prompts, too few to say
anything about it), so every scenario first gets ``min_per_scenario`` prompts (or all it has) and the rest
is shared in proportion to traffic. Selection inside a scenario depends only on the seed and the prompts,
not on the order of the log file, so the same logs and seed always give the same set.
"""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer_app import settings
from reviewer_app.domain.input_rules import (
    CheckedImage,
    check_image,
    check_image_data,
    checks_flaw,
    id_problem,
    images_list_problem,
    prompt_flaw,
    text_problem,
)
from reviewer_app.errors import GenerationError, Problem, ValidationError
from reviewer_app.generation.samples_file import Sample, place_image, write_jsonl_atomic


@dataclass
class _Candidate:
    line: int
    scenario: str
    prompt: str | list[dict[str, str]]
    reference: str | None
    criteria: str | None
    images: list[str]  # relative to the logs folder
    inline_images: list[tuple[CheckedImage, bytes]]  # from data URLs in the messages
    checks: list[dict[str, Any]] | None = None  # automatic checks, passed on to the sample
    key: str = ""


@dataclass(frozen=True)
class ScenarioRow:
    scenario: str
    in_logs: int
    duplicates: int
    taken: int


@dataclass(frozen=True)
class EvalSetSummary:
    """What was taken per scenario; ``rows`` are sorted by scenario name."""

    rows: list[ScenarioRow]
    out: Path

    @property
    def taken(self) -> int:
        return sum(r.taken for r in self.rows)

    def table(self) -> str:
        """A plain-text table for the terminal."""
        total_logs = sum(r.in_logs - r.duplicates for r in self.rows) or 1
        total = self.taken or 1
        width = max([len("scenario")] + [len(r.scenario) for r in self.rows])
        lines = [f"{'scenario':<{width}}  {'in logs':>8}  {'dupes':>6}  {'taken':>6}  {'% logs':>7}  {'% set':>6}"]
        for r in self.rows:
            lines.append(
                f"{r.scenario:<{width}}  {r.in_logs:>8}  {r.duplicates:>6}  {r.taken:>6}  "
                f"{100 * (r.in_logs - r.duplicates) / total_logs:>6.1f}%  {100 * r.taken / total:>5.1f}%"
            )
        lines.append(
            f"{'total':<{width}}  {sum(r.in_logs for r in self.rows):>8}  "
            f"{sum(r.duplicates for r in self.rows):>6}  {self.taken:>6}"
        )
        return "\n".join(lines)


def _field(record: dict[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def read_log_text(path: Path, missing: str = "no such log file") -> str:
    """A log's text (UTF-8, a BOM dropped); GenerationError when it is not there, ValidationError when it is
    not UTF-8."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise GenerationError(f"{path}: {missing}") from None
    except UnicodeDecodeError as exc:
        raise ValidationError([Problem(path.name, None, None, f"not UTF-8 text ({exc.reason})")]) from None


def json_lines(text: str) -> list[tuple[int, Any]]:
    """(line number, record) of each non-blank JSONL line; a line that is not JSON gives a ValueError to report."""
    out: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((number, json.loads(line)))
            except ValueError as exc:
                out.append((number, ValueError(f"not valid JSON ({exc})")))
    return out


def _records(path: Path) -> list[tuple[int, Any]]:
    """(line number, record) pairs from JSONL, a JSON array, or CSV (where ``messages`` holds JSON text)."""
    text = read_log_text(path)
    if path.suffix.lower() in (".csv", ".tsv"):
        csv.field_size_limit(sys.maxsize)
        reader = csv.DictReader(text.splitlines(keepends=True), delimiter="\t" if path.suffix == ".tsv" else ",")
        rows, start = [], 2
        for row in reader:
            rows.append((start, dict(row)))
            start = reader.line_num + 1
        return rows
    if text.lstrip().startswith("["):
        try:
            return list(enumerate(json.loads(text), start=1))
        except ValueError as exc:
            raise ValidationError([Problem(path.name, None, None, f"not a valid JSON array ({exc})")]) from None
    return json_lines(text)


def _messages(raw: Any, inline: list[bytes]) -> tuple[Any, str | None]:
    """Flatten OpenAI content parts to text (images collected into ``inline``) and drop trailing assistant
    turns: in a request log those are the logged answer, and the candidates must write their own."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None, "not valid JSON"
    if not isinstance(raw, list):
        return None, "must be a list of chat messages"
    messages: list[Any] = []
    for i, message in enumerate(raw):
        if not isinstance(message, dict):
            return None, f"message {i}: must be an object"
        content = message.get("content")
        if isinstance(content, list):
            texts = []
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text":
                    texts.append(str(part.get("text", "")))
                elif kind == "image_url":
                    url = str((part.get("image_url") or {}).get("url", ""))
                    if not url.startswith("data:image/") or ";base64," not in url:
                        return None, f"message {i}: only base64 data-URL images can be kept, not {url[:40]!r}"
                    data = url.partition(";base64,")[2]
                    try:
                        inline.append(base64.b64decode(data, validate=True))
                    except binascii.Error:
                        return None, f"message {i}: image data URL is not valid base64"
                else:
                    return None, f"message {i}: unsupported content part {kind!r}"
            content = "\n".join(texts)
        messages.append({"role": message.get("role"), "content": content})
    while messages and messages[-1].get("role") == "assistant":
        messages.pop()
    if len(messages) == 1 and messages[0].get("role") == "user" and isinstance(messages[0]["content"], str):
        return messages[0]["content"], None  # a single-turn chat is just a prompt
    return messages, None


def _read_candidates(
    path: Path, by: str, prompt_field: str, records: list[tuple[int, Any]] | None = None
) -> list[_Candidate]:
    """The log's usable requests (``records``: already read, e.g. from traces, numbered as in ``path``)."""
    problems: list[Problem] = []
    found: list[_Candidate] = []
    name = path.name
    max_image = settings.max_image_bytes()
    for number, record in _records(path) if records is None else records:
        if isinstance(record, ValueError):
            problems.append(Problem(name, number, None, str(record)))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(name, number, None, "must be a JSON object"))
            continue
        before = len(problems)
        raw_inline: list[bytes] = []
        prompt: Any = None
        if _field(record, "messages") not in (None, ""):
            prompt, why = _messages(_field(record, "messages"), raw_inline)
            if why:
                problems.append(Problem(name, number, "messages", why))
        elif _field(record, prompt_field) not in (None, ""):
            prompt = _field(record, prompt_field)
        else:
            problems.append(Problem(name, number, prompt_field, "missing (and no messages)"))
        if prompt is not None:
            flaw = prompt_flaw(prompt)
            if flaw is not None:
                where = "messages" if isinstance(prompt, list) else prompt_field
                problems.append(Problem(name, number, where + flaw.at, flaw.message))
        scenario = _field(record, by)
        if scenario in (None, ""):
            problems.append(Problem(name, number, by, "missing scenario (named by --by)"))
        elif (why := id_problem(scenario)) is not None:
            problems.append(Problem(name, number, by, why))
        optional: dict[str, str | None] = {}
        for key in ("reference", "criteria"):
            value = _field(record, key)
            if value not in (None, "") and (why := text_problem(value)) is not None:
                problems.append(Problem(name, number, key, why))
            optional[key] = value if isinstance(value, str) and value else None
        checks = _field(record, "checks")
        if isinstance(checks, str):  # CSV: a JSON list in the cell
            try:
                checks = json.loads(checks) if checks.strip() else None
            except ValueError:
                pass  # left a string: refused just below
        if checks is not None and (flaw := checks_flaw(checks)) is not None:
            problems.append(Problem(name, number, "checks" + flaw.at, flaw.message))
        images = _field(record, "images") or []
        if isinstance(images, str):  # CSV: a JSON list or one path
            try:
                images = json.loads(images) if images.startswith("[") else [images]
            except ValueError:
                pass  # left a string: refused just below
        if (why := images_list_problem(images)) is not None:
            problems.append(Problem(name, number, "images", why))
            images = []
        for image in images:
            checked = check_image(path.parent, image, max_bytes=max_image)
            if isinstance(checked, str):
                problems.append(Problem(name, number, "images", checked))
        inline: list[tuple[CheckedImage, bytes]] = []
        for data in raw_inline:
            checked = check_image_data(data, "an inline image (data URL)", max_bytes=max_image)
            if isinstance(checked, str):
                problems.append(Problem(name, number, "messages", checked))
            else:
                inline.append((checked, data))
        if len(problems) == before:
            found.append(
                _Candidate(
                    number,
                    str(scenario).strip(),
                    prompt,
                    optional["reference"],
                    optional["criteria"],
                    list(images),
                    inline,
                    checks,
                )
            )
    if problems:
        raise ValidationError(problems, hint="Fix these lines in the logs (or filter them out) and run again.")
    if not found:
        raise GenerationError(f"{path}: no requests found in the log file")
    return found


def allocate(available: dict[str, int], n: int, min_per_scenario: int) -> dict[str, int]:
    """How many prompts to take per scenario: at least ``min_per_scenario`` (or all a scenario has), the
    rest in proportion to traffic, never more than available. Raises GenerationError if the minimums
    alone exceed ``n``."""
    total = sum(available.values())
    if n >= total:
        return dict(available)
    floors = {s: min(min_per_scenario, a) for s, a in available.items()}
    if sum(floors.values()) > n:
        raise GenerationError(
            f"--n {n} is too small for {len(available)} scenarios with --min-per-scenario {min_per_scenario} "
            f"({sum(floors.values())} prompts needed); raise --n or lower --min-per-scenario"
        )

    def share(scale: float) -> dict[str, float]:
        return {s: min(max(scale * a, floors[s]), a) for s, a in available.items()}

    low, high = 0.0, 1.0  # water-filling: find the scale at which the clamped shares sum to n
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if sum(share(mid).values()) < n else (low, mid)
    shares = share(high)
    counts = {s: int(v) for s, v in shares.items()}
    # Largest remainder: hand out the units lost to rounding, ties broken by name for reproducibility.
    order = sorted(available, key=lambda s: (-(shares[s] - counts[s]), s))
    for scenario in order:
        if sum(counts.values()) >= n:
            break
        if counts[scenario] < available[scenario]:
            counts[scenario] += 1
    return counts


def _key(candidate: _Candidate) -> str:
    images = candidate.images + [checked.digest for checked, _ in candidate.inline_images]
    canonical = json.dumps([candidate.prompt, images], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def build_eval_set(
    logs: Path,
    out: Path,
    *,
    n: int,
    by: str = "scenario",
    seed: int = 0,
    min_per_scenario: int = 5,
    prompt_field: str = "prompt",
    source: str | None = None,
    requests: Path | None = None,
    scenario_field: str | None = None,
) -> EvalSetSummary:
    """Sample ``n`` prompts from request logs into a SAMPLES file at ``out`` (written atomically).

    Exact duplicate prompts are kept once (first occurrence). Sample ids are content hashes, so the same
    prompt keeps its id across runs. Images inlined as data URLs in the logs are saved under
    ``<out folder>/images/``. Raises ValidationError for unusable log lines, GenerationError for bad sizes.

    ``source`` reads ``logs`` as traces exported by a tool (:mod:`.traces`: openai, openai-batch with its input
    file as ``requests``, langfuse, langsmith), the scenario from ``scenario_field`` or the source's own; their
    problems are located in ``logs`` as well.
    """
    if n <= 0 or min_per_scenario < 0:
        raise GenerationError("--n must be positive and --min-per-scenario zero or more")
    if out.resolve() == logs.resolve():
        raise GenerationError("--out must not be the log file itself")
    records = None
    if source is not None:
        from reviewer_app.generation.traces import read_traces

        read = read_traces(logs, source, scenario_field=scenario_field, requests=requests)
        records = [(t.line, {"messages": t.messages, "scenario": t.scenario}) for t in read.traces]
        by = "scenario"
    candidates = _read_candidates(logs, by, prompt_field, records)
    seen: set[str] = set()
    unique: dict[str, list[_Candidate]] = {}
    rows_in_logs: dict[str, int] = {}
    duplicates: dict[str, int] = {}
    for candidate in candidates:
        candidate.key = _key(candidate)
        rows_in_logs[candidate.scenario] = rows_in_logs.get(candidate.scenario, 0) + 1
        if candidate.key in seen:
            duplicates[candidate.scenario] = duplicates.get(candidate.scenario, 0) + 1
            continue
        seen.add(candidate.key)
        unique.setdefault(candidate.scenario, []).append(candidate)
    counts = allocate({s: len(c) for s, c in unique.items()}, n, min_per_scenario)
    chosen: list[_Candidate] = []
    for scenario in sorted(unique):
        pool = sorted(unique[scenario], key=lambda c: c.key)  # independent of log order
        picked = random.Random(f"{seed}:{scenario}").sample(pool, counts[scenario])
        chosen += sorted(picked, key=lambda c: c.line)
    write_jsonl_atomic(out, [_to_sample(c, logs.parent, out.parent).to_json() for c in chosen])
    rows = [ScenarioRow(s, rows_in_logs[s], duplicates.get(s, 0), counts.get(s, 0)) for s in sorted(rows_in_logs)]
    return EvalSetSummary(rows, out)


def _to_sample(candidate: _Candidate, logs_dir: Path, out_dir: Path) -> Sample:
    images = [place_image(logs_dir / p, out_dir) for p in candidate.images]
    for checked, data in candidate.inline_images:
        target = out_dir / "images" / f"{checked.digest[:24]}.{checked.ext}"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        images.append(target.relative_to(out_dir).as_posix())
    return Sample(
        f"s-{candidate.key[:12]}",
        candidate.scenario,
        candidate.prompt,
        candidate.reference,
        candidate.criteria,
        tuple(images),
        candidate.checks,
    )


def prompt_key(messages: list[dict[str, Any]]) -> tuple[Any, str] | str:
    """The prompt and sample id build-eval-set gives these chat messages (trailing assistant turns dropped, a
    single user turn as plain text, inline images by digest): so a model's logged answers, loaded as a batch,
    share their sample ids with an eval set built from the same logs. A reason instead when it cannot."""
    inline: list[bytes] = []
    prompt, why = _messages(messages, inline)
    if why is not None:
        return why
    digests = []
    for data in inline:
        checked = check_image_data(data, "image", max_bytes=settings.max_image_bytes())
        if isinstance(checked, str):
            return checked
        digests.append(checked.digest)
    canonical = json.dumps([prompt, digests], ensure_ascii=False, sort_keys=True)
    return prompt, "s-" + hashlib.sha256(canonical.encode()).hexdigest()[:12]

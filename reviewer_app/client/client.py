"""The client's one class: a typed method per API resource, over one ``httpx.Client`` (kept alive between
calls). Lists are walked page by page; files are streamed to disk as they arrive, never held whole."""

from __future__ import annotations

import contextlib
import json
import mimetypes
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

import httpx
import pandas as pd
from pydantic import BaseModel

from reviewer_app.errors import ApiError, BlindReviewError, NotFoundError
from reviewer_app.wire import (
    PROBLEM_JSON,
    AssignResult,
    BatchInfo,
    BatchStatusInfo,
    DeleteResult,
    DeliveryOut,
    DisputeInfo,
    FeedbackResult,
    ImportResult,
    JudgeInfo,
    JudgeRunInfo,
    LoadResult,
    Me,
    NewLink,
    NewWebhook,
    PersonInfo,
    PoolInfo,
    RevokeResult,
    TitleInfo,
    WebhookOut,
    error_from_problem,
)
from reviewer_app.wire.signing import verify

__all__ = ["BlindReview", "verify_webhook"]

M = TypeVar("M", bound=BaseModel)
PREFIX = "/api/v1"
PAGE = 500
_CHUNK = 1024 * 1024

Params = Mapping[str, Any]


class BlindReview:
    """The API at ``base_url`` (the server's address, as reviewers open it; ``/api/v1`` is added), acting with
    ``token`` (``blind-review api-token NAME``). ``timeout``: seconds to wait for each answer (reports of big
    batches take a while: the default is generous)."""

    def __init__(
        self, base_url: str, token: str, *, timeout: float = 600.0, transport: httpx.BaseTransport | None = None
    ) -> None:
        root = base_url.rstrip("/")
        root = root if root.endswith(PREFIX) else root + PREFIX
        self._http = httpx.Client(
            base_url=root,
            headers={"Authorization": f"Bearer {token}", "User-Agent": "blind-review-client/1"},
            timeout=timeout,
            transport=transport,
        )

    # -- plumbing -------------------------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> BlindReview:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            if "params" in kwargs:
                kwargs["params"] = _clean(kwargs["params"])
            answer = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ApiError(
                0, f"cannot reach {self._http.base_url}: {exc}; is `blind-review serve` running there?"
            ) from exc
        if answer.is_error:
            raise _error(answer)
        return answer

    def _json(self, method: str, path: str, model: type[M], **kwargs: Any) -> M:
        return model.model_validate(self._request(method, path, **kwargs).json())

    def _json_list(self, method: str, path: str, model: type[M], **kwargs: Any) -> list[M]:
        """An answer that is a JSON list (not paged: see :meth:`_all`), each item as ``model``."""
        return [model.model_validate(item) for item in self._request(method, path, **kwargs).json()]

    def _all(self, path: str, model: type[M], params: Params | None = None) -> list[M]:
        out: list[M] = []
        offset: int | None = 0
        while offset is not None:
            page = self._request("GET", path, params={**(params or {}), "limit": PAGE, "offset": offset}).json()
            out += [model.model_validate(item) for item in page["items"]]
            offset = page["next_offset"]
        return out

    def _download(self, path: str, out: str | Path, params: Params | None = None) -> Path:
        """Stream the answer at ``path`` into ``out`` (written beside it, then renamed: a cut connection leaves
        no half file under the name)."""
        target = Path(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(target.name + ".part")
        try:
            with self._http.stream("GET", path, params=_clean(params)) as answer:
                if answer.is_error:
                    answer.read()
                    raise _error(answer)
                with part.open("wb") as handle:
                    for chunk in answer.iter_bytes(_CHUNK):
                        handle.write(chunk)
            part.replace(target)
        except httpx.TransportError as exc:
            raise ApiError(0, f"the download of {path} was cut off: {exc}; nothing was written to {target}") from exc
        finally:
            part.unlink(missing_ok=True)
        return target

    @contextlib.contextmanager
    def _frame_file(self, path: str, params: Params) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(prefix="blind-review-") as folder:
            yield self._download(path, Path(folder) / "data.parquet", params)

    # -- who am I -------------------------------------------------------------------------------------------

    def me(self) -> Me:
        """The person this token acts for, and their role now."""
        return self._json("GET", "/me", Me)

    # -- batches ----------------------------------------------------------------------------------------------

    def batches(self, *, archived: bool = False) -> list[BatchInfo]:
        """Every batch (or every archived one), oldest first."""
        return self._all("/batches", BatchInfo, {"archived": archived})

    def batch(self, name: str) -> BatchStatusInfo:
        """A batch's status: counts, who it is open to, whether it is complete, progress."""
        return self._json("GET", f"/batches/{_part(name)}", BatchStatusInfo)

    def load_batch(
        self,
        name: str,
        files: Sequence[str | Path],
        rubric: str | Path | None = None,
        *,
        on_leak: str = "mask",
        follow_up: str | None = None,
        anchor_share: float | None = None,
        open_now: bool = False,
        reviewers: Sequence[str] = (),
    ) -> LoadResult:
        """Load batch files (and images, or zips of them) with a rubric, as ``load-batch`` does. Loading the
        same content again gives the existing batch (``already_loaded``) and writes nothing."""
        data: dict[str, Any] = {"name": name, "on_leak": on_leak, "open": _flag(open_now)}
        if follow_up:
            data["follow_up"] = follow_up
        if anchor_share is not None:
            data["anchor_share"] = str(anchor_share)
        if reviewers:
            data["reviewers"] = list(reviewers)
        with contextlib.ExitStack() as stack:
            parts = [("files", _part_file(stack, Path(f))) for f in files]
            if rubric is not None:
                parts.append(("rubric", _part_file(stack, Path(rubric))))
            return self._json("POST", "/batches", LoadResult, data=data, files=parts)

    def open_batch(self, name: str) -> BatchStatusInfo:
        return self._json("POST", f"/batches/{_part(name)}/open", BatchStatusInfo)

    def close_batch(self, name: str) -> BatchStatusInfo:
        return self._json("POST", f"/batches/{_part(name)}/close", BatchStatusInfo)

    def archive_batch(self, name: str) -> BatchStatusInfo:
        return self._json("POST", f"/batches/{_part(name)}/archive", BatchStatusInfo)

    def restore_batch(self, name: str) -> BatchStatusInfo:
        return self._json("POST", f"/batches/{_part(name)}/restore", BatchStatusInfo)

    def delete_batch(self, name: str, *, confirm: str) -> DeleteResult:
        """Delete the batch and all its ratings for good; ``confirm`` is its name again."""
        return self._json("DELETE", f"/batches/{_part(name)}", DeleteResult, params={"confirm": confirm})

    def titles(self, name: str) -> list[TitleInfo]:
        return self._json_list("GET", f"/batches/{_part(name)}/titles", TitleInfo)

    def set_titles(
        self, name: str, *, display_name: str | None = None, scenarios: Mapping[str, str] | None = None
    ) -> list[TitleInfo]:
        body = {"display_name": display_name, "scenarios": dict(scenarios or {})}
        return self._json_list("PUT", f"/batches/{_part(name)}/titles", TitleInfo, json=body)

    def set_batch_reviewers(self, name: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> BatchStatusInfo:
        body = {"add": list(add), "remove": list(remove)}
        return self._json("PATCH", f"/batches/{_part(name)}/reviewers", BatchStatusInfo, json=body)

    def assign(self, name: str, reviewers: Sequence[str] | None = None, *, rebalance: bool = False) -> AssignResult:
        """Plan who reviews what: k reviewers per item (default: the batch's reviewers, or every reviewer)."""
        body = {"reviewers": None if reviewers is None else list(reviewers), "rebalance": rebalance}
        return self._json("POST", f"/batches/{_part(name)}/assign", AssignResult, json=body)

    def leaks(self, name: str) -> list[dict[str, Any]]:
        """The batch's outputs that name a model or vendor."""
        text = self._request("GET", f"/batches/{_part(name)}/leaks", params={"format": "jsonl"}).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def allocation(self, name: str) -> PoolInfo:
        """An adaptive batch's pool: each scenario's state as the server's last refresh wrote it."""
        return self._json("GET", f"/batches/{_part(name)}/allocation", PoolInfo)

    def refresh_allocation(self, name: str) -> PoolInfo:
        """Refresh an adaptive batch's pool now (admins)."""
        return self._json("POST", f"/batches/{_part(name)}/allocation/refresh", PoolInfo)

    # -- people -----------------------------------------------------------------------------------------------

    def people(self, role: str | None = None) -> list[PersonInfo]:
        return self._all("/people", PersonInfo, {"role": role})

    def add_person(self, name: str, role: str = "reviewer") -> NewLink:
        """Add a person; the answer holds their sign-in link, the one time it exists."""
        return self._json("POST", "/people", NewLink, json={"name": name, "role": role})

    def new_link(self, name: str) -> NewLink:
        return self._json("POST", f"/people/{_part(name)}/link", NewLink)

    def revoke(self, name: str) -> RevokeResult:
        return self._json("POST", f"/people/{_part(name)}/revoke", RevokeResult)

    # -- ratings, reports, exports ------------------------------------------------------------------------------

    def import_ratings(self, batch: str, path: str | Path) -> ImportResult:
        """Import a ratings file (as ``export-ratings`` writes it); nothing is written on any problem."""
        with contextlib.ExitStack() as stack:
            file = _part_file(stack, Path(path))
            return self._json("POST", f"/batches/{_part(batch)}/ratings", ImportResult, files={"file": file})

    def report(
        self,
        batch: str,
        *,
        rounds: int = 1000,
        seed: int | None = None,
        weights: str | None = None,
        judge: str | None = None,
        adjudicated: bool = False,
    ) -> dict[str, Any]:
        """The report as JSON (its schema is the report's ``schema.json``); ``adjudicated``: ranked with the
        adjudicators' rulings."""
        params = _clean({"format": "json", "rounds": rounds, "seed": seed, "weights": weights, "judge": judge,
                         "adjudicated": adjudicated})  # fmt: skip
        report: dict[str, Any] = self._request("GET", f"/batches/{_part(batch)}/report", params=params).json()
        return report

    def disputes(self, batch: str) -> list[DisputeInfo]:
        """The items and questions the panel disagreed on beyond the rubric's threshold, with their rulings
        (``ruling`` empty while open), unblinded (every page)."""
        return self._all(f"/batches/{_part(batch)}/disputes", DisputeInfo)

    def report_file(
        self,
        batch: str,
        out: str | Path,
        *,
        format: str = "html",
        rounds: int = 1000,
        seed: int | None = None,
        weights: str | None = None,
        judge: str | None = None,
        adjudicated: bool = False,
    ) -> Path:
        """The report as a file (html, md, csv, json or parquet) written to ``out``."""
        params = {"format": format, "rounds": rounds, "seed": seed, "weights": weights, "judge": judge,
                  "adjudicated": adjudicated}  # fmt: skip
        return self._download(f"/batches/{_part(batch)}/report", out, params)

    def export_ratings(self, batch: str, out: str | Path, *, format: str = "csv", with_judges: bool = False) -> Path:
        """Every answer of the batch, unblinded, streamed into ``out`` (csv, jsonl or parquet)."""
        params = {"format": format, "with_judges": with_judges}
        return self._download(f"/batches/{_part(batch)}/ratings", out, params)

    def ratings_frame(self, batch: str, *, with_judges: bool = False) -> pd.DataFrame:
        """Every answer of the batch as a DataFrame (read from the typed Parquet export)."""
        with self._frame_file(
            f"/batches/{_part(batch)}/ratings", {"format": "parquet", "with_judges": with_judges}
        ) as f:
            return pd.read_parquet(f)

    def report_frame(self, batch: str, *, rounds: int = 1000, seed: int | None = None) -> pd.DataFrame:
        """The report's tables (the csv's rows, typed) as a DataFrame."""
        params = {"format": "parquet", "rounds": rounds, "seed": seed}
        with self._frame_file(f"/batches/{_part(batch)}/report", params) as f:
            return pd.read_parquet(f)

    def export_preferences(
        self,
        batch: str,
        out: str | Path,
        *,
        format: str = "jsonl",
        ties: str = "leave-out",
        source: str = "auto",
        min_agreement: float = 0.0,
        adjudicated: bool = False,
    ) -> Path:
        """Preference records (prompt, chosen, rejected) into ``out``: jsonl, parquet, or ``hf`` (a zip of the
        Hugging Face dataset folder); ``adjudicated``: rulings take the panel's place on the items they rule."""
        params = {"format": format, "ties": ties, "source": source, "min_agreement": min_agreement,
                  "adjudicated": adjudicated}  # fmt: skip
        return self._download(f"/batches/{_part(batch)}/preferences", out, params)

    def preferences_frame(self, batch: str, **options: Any) -> pd.DataFrame:
        """The preference records as a DataFrame (same options as :meth:`export_preferences`)."""
        with self._frame_file(f"/batches/{_part(batch)}/preferences", {**options, "format": "parquet"}) as f:
            return pd.read_parquet(f)

    # -- versions -----------------------------------------------------------------------------------------------

    def compare(
        self,
        baseline: str,
        candidate: str,
        *,
        match: Sequence[str] = (),
        tolerance: float | None = None,
        tolerance_share: float | None = None,
        rounds: int = 1000,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """The comparison of ``candidate`` with ``baseline`` as JSON (regressions, improvements, drift)."""
        params = {
            "baseline": baseline,
            "candidate": candidate,
            "match": list(match),
            "tolerance": tolerance,
            "tolerance_share": tolerance_share,
            "rounds": rounds,
            "seed": seed,
        }
        result: dict[str, Any] = self._request("GET", "/compare", params=_clean(params)).json()
        return result

    def history(self, model: str, *, also: Sequence[str] = (), rounds: int = 1000) -> dict[str, Any]:
        """A model over its follow-up rounds, as JSON."""
        params = _clean({"also": list(also), "rounds": rounds})
        result: dict[str, Any] = self._request("GET", f"/models/{_part(model)}/history", params=params).json()
        return result

    # -- LLM judge ------------------------------------------------------------------------------------------------

    def start_judge(
        self,
        batch: str,
        model: str,
        *,
        samples: str | int = "all",
        repeats: int = 1,
        concurrency: int = 8,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        prompt: str | None = None,
        retries: int = 4,
        timeout: float = 300.0,
    ) -> JudgeRunInfo:
        """Start an LLM judge on the batch in the server (``model`` as ``blind-review judge --model`` takes it;
        ``prompt`` a template's text); poll :meth:`judge_run` or wait with :meth:`wait_for_judge`."""
        body = {"model": model, "samples": samples, "repeats": repeats, "concurrency": concurrency,
                "temperature": temperature, "max_tokens": max_tokens, "seed": seed, "prompt": prompt,
                "retries": retries, "timeout": timeout}  # fmt: skip
        return self._json("POST", f"/batches/{_part(batch)}/judge-runs", JudgeRunInfo, json=body)

    def judge_run(self, run_id: str) -> JudgeRunInfo:
        return self._json("GET", f"/judge-runs/{_part(run_id)}", JudgeRunInfo)

    def wait_for_judge(self, run_id: str, *, timeout: float = 3600.0, every: float = 1.0) -> JudgeRunInfo:
        """Poll the run until it is no longer running (finished or stopped); ApiError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.judge_run(run_id)
            if run.state != "running":
                return run
            if time.monotonic() > deadline:
                raise ApiError(0, f"judge run {run_id} still running after {timeout:g} s; poll judge_run() later")
            time.sleep(every)

    def judge_runs(self, batch: str) -> list[JudgeRunInfo]:
        return self._json_list("GET", f"/batches/{_part(batch)}/judge-runs", JudgeRunInfo)

    def judges(self, batch: str) -> list[JudgeInfo]:
        """The judges with stored judgements on the batch (name one in :meth:`report`'s ``judge``)."""
        return self._json_list("GET", f"/batches/{_part(batch)}/judges", JudgeInfo)

    # -- webhooks -------------------------------------------------------------------------------------------------

    def add_webhook(self, url: str, events: Sequence[str] = ("*",), *, label: str = "") -> NewWebhook:
        """Register ``url`` for ``events``; the answer holds the signing secret, the one time it is shown."""
        return self._json("POST", "/webhooks", NewWebhook, json={"url": url, "events": list(events), "label": label})

    def webhooks(self, *, include_removed: bool = False) -> list[WebhookOut]:
        return self._json_list("GET", "/webhooks", WebhookOut, params={"include_removed": include_removed})

    def remove_webhook(self, webhook_id: int) -> None:
        self._request("DELETE", f"/webhooks/{webhook_id}")

    def test_webhook(self, webhook_id: int) -> str:
        """Queue a ping for one webhook; returns its event id (the server's loop sends it)."""
        event: str = self._request("POST", f"/webhooks/{webhook_id}/test").json()["event_id"]
        return event

    def webhook_deliveries(self, *, webhook_id: int | None = None) -> list[DeliveryOut]:
        """The delivery log, newest first (every page)."""
        return self._all("/webhooks/deliveries", DeliveryOut, {"webhook_id": webhook_id})

    # -- production -----------------------------------------------------------------------------------------------

    def send_feedback(self, events: Sequence[Mapping[str, Any]], *, scale: str = "-1,1") -> FeedbackResult:
        """Production feedback events (model, timestamp, feedback; optional scenario, latency_ms, ttft_ms,
        request_id); a request_id sent again adds nothing."""
        return self._json("POST", "/feedback", FeedbackResult, json={"events": list(events), "scale": scale})

    def import_feedback(self, path: str | Path, *, scale: str = "-1,1") -> FeedbackResult:
        with contextlib.ExitStack() as stack:
            file = _part_file(stack, Path(path))
            return self._json("POST", "/feedback/file", FeedbackResult, params={"scale": scale}, files={"file": file})

    def monitor(
        self, *, window: str = "1d", models: Sequence[str] = (), canaries: Sequence[str] = ()
    ) -> dict[str, Any]:
        """The production monitor as JSON; ``canaries`` as NEW=CURRENT."""
        params = _clean({"window": window, "model": list(models), "canary": list(canaries)})
        result: dict[str, Any] = self._request("GET", "/monitor", params=params).json()
        return result


def verify_webhook(secret: str, body: bytes, headers: Mapping[str, str], *, tolerance: int = 300) -> dict[str, Any]:
    """Check a webhook delivery as received (its raw body and headers) against the hook's secret and return its
    JSON; raises :class:`~reviewer_app.wire.signing.SignatureError` when it is not genuine or too old."""
    verify(secret, body, headers, tolerance=tolerance)
    event: dict[str, Any] = json.loads(body)
    return event


def _error(answer: httpx.Response) -> BlindReviewError:
    kind = answer.headers.get("content-type", "")
    if kind.startswith((PROBLEM_JSON, "application/json")):
        try:
            body = answer.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            return error_from_problem(answer.status_code, body)
    text = answer.text.strip().splitlines()[0][:200] if answer.text.strip() else answer.reason_phrase
    return ApiError(answer.status_code, f"HTTP {answer.status_code} from {answer.request.url}: {text}")


def _part(name: str) -> str:
    """A name as one path segment (a batch name may hold spaces or slashes)."""
    from urllib.parse import quote

    return quote(name, safe="")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _clean(params: Params | None) -> dict[str, Any]:
    """Query parameters without the unset ones (None, empty lists)."""
    return {k: v for k, v in (params or {}).items() if v is not None and v != []}


def _part_file(stack: contextlib.ExitStack, path: Path) -> tuple[str, IO[bytes], str]:
    """A file for a multipart upload, streamed from disk (httpx reads it as it sends)."""
    if not path.is_file():
        raise NotFoundError(f"{path}: no such file; check the path")
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return path.name, stack.enter_context(path.open("rb")), kind

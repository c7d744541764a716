"""Results for leads: the report, the ratings and preferences exports, version comparison and a model's
history, as the CLI's ``report``, ``export-ratings``, ``export-preferences``, ``compare`` and ``history`` make
them, and the disputes ``disputes`` lists. Importing ratings (an admin's) is here too, beside their export."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, File, Query, UploadFile
from starlette.responses import Response

from reviewer_app.adjudication import dispute_table
from reviewer_app.api.auth import Admin, EngineDep, Lead
from reviewer_app.api.files import check_request_size, file_answer, run_on_upload, streamed_text
from reviewer_app.api.paging import PageQuery, page_of
from reviewer_app.api.routes.rendered import MEDIA, TextFormat, rendered, rendered_responses
from reviewer_app.batches.output_files import file_stem
from reviewer_app.exports import export_preferences
from reviewer_app.ratings.export import export_ratings
from reviewer_app.ratings.files import import_ratings
from reviewer_app.reporting.compare import render_comparison
from reviewer_app.reporting.formats import render
from reviewer_app.reporting.history import render_history
from reviewer_app.results.batch_reports import batch_report, parse_weights, write_report
from reviewer_app.versions.batch_compare import compare_batches
from reviewer_app.versions.compare import DEFAULT_TOLERANCE, DEFAULT_TOLERANCE_SHARE
from reviewer_app.versions.history import model_history
from reviewer_app.wire import DisputeInfo, ImportResult, Page

router = APIRouter(tags=["results"])


@router.get(
    "/batches/{batch}/report",
    summary="The batch's report",
    response_class=Response,
    responses=rendered_responses("json", "csv", "md", "html", "parquet"),
)
def report(
    engine: EngineDep,
    _: Lead,
    batch: str,
    format: Literal["json", "csv", "md", "html", "parquet"] = "json",
    rounds: Annotated[int, Query(ge=1, le=100_000)] = 1000,
    seed: int | None = None,
    weights: Annotated[str | None, Query(description="composite weights, e.g. extraction=2,summary=1")] = None,
    judge: Annotated[str | None, Query(description="the judge the 'Judge vs panel' section is about")] = None,
    adjudicated: Annotated[
        bool, Query(description="rank with the adjudicators' rulings (stated in the report)")
    ] = False,
) -> Response:
    """Agreement, rankings with 95% intervals, the composite and diagnostics, as `blind-review report` makes it
    (JSON by default: the report's JSON schema; csv, md and html as files; parquet the csv's table, typed)."""
    result = batch_report(engine, batch=batch, rounds=rounds, weights=parse_weights(weights), seed=seed, judge=judge,
                          adjudicated=adjudicated)  # fmt: skip
    return rendered(
        format,
        f"{file_stem(result.batch)}-report.{format}",
        lambda: render(result, format),
        lambda path: write_report(result, format, path),
    )


@router.get("/batches/{batch}/disputes", summary="The batch's disagreements and their rulings")
def disputes(engine: EngineDep, _: Lead, batch: str, paging: PageQuery) -> Page[DisputeInfo]:
    """Every item and question the panel disagreed on beyond the rubric's ``[adjudication]`` threshold, with what
    it answered and the ruling (empty while open), as `blind-review disputes` lists them; unblinded. Ruling is
    done blind on the Adjudicate page, not here."""
    table, _rule = dispute_table(engine, batch)
    return page_of([DisputeInfo.model_validate(r) for r in table.to_dict(orient="records")], paging)


@router.get(
    "/batches/{batch}/ratings",
    summary="Export the batch's ratings (streamed)",
    response_class=Response,
    responses=rendered_responses("csv", "jsonl", "parquet"),
)
def ratings(
    engine: EngineDep,
    _: Lead,
    batch: str,
    format: Literal["csv", "jsonl", "parquet"] = "csv",
    with_judges: Annotated[bool, Query(description="also the LLM judges' answers, marked rater_kind judge")] = False,
) -> Response:
    """Every answer (ratings and can't-judge), unblinded, as `blind-review export-ratings` writes it. CSV and
    JSONL are streamed as the database reads them; Parquet is written whole, then sent."""
    filename = f"{file_stem(batch)}-ratings.{format}"
    if format == "parquet":
        return file_answer(lambda path: _export_to(engine, batch, path, with_judges), filename, MEDIA["parquet"])
    return streamed_text(
        lambda out: export_ratings(engine, batch, format, None, stream=out, with_judges=with_judges),
        filename,
        MEDIA[format],
    )


def _export_to(engine: EngineDep, batch: str, path: Path, with_judges: bool) -> Path:
    export_ratings(engine, batch, "parquet", path, with_judges=with_judges)
    return path


@router.post(
    "/batches/{batch}/ratings",
    summary="Import ratings (a ratings file as export-ratings writes it)",
    dependencies=[Depends(check_request_size)],
)
async def import_batch_ratings(
    engine: EngineDep, _: Admin, batch: str, file: Annotated[UploadFile, File(description="ratings .csv or .jsonl")]
) -> ImportResult:
    """Check every row as `blind-review import-ratings` does; nothing is written on any problem (422, located)."""
    done = await run_on_upload(file, lambda path: import_ratings(engine, batch, path))
    return ImportResult(
        batch=done.batch,
        ratings=done.ratings,
        items=done.items,
        reviewers=list(done.reviewers),
        created_reviewers=list(done.created_reviewers),
        cant_judge=done.cant_judge,
        comments=done.comments,
        summary=done.lines(),
    )


@router.get(
    "/batches/{batch}/preferences",
    summary="Export preference pairs (DPO-style prompt, chosen, rejected)",
    response_class=Response,
    responses=rendered_responses("jsonl", "parquet", "zip"),
)
def preferences(
    engine: EngineDep,
    _: Lead,
    batch: str,
    format: Literal["jsonl", "parquet", "hf"] = "jsonl",
    ties: Literal["leave-out", "mark"] = "leave-out",
    source: Literal["auto", "pairwise", "ratings"] = "auto",
    min_agreement: Annotated[float, Query(ge=0, le=1)] = 0.0,
    adjudicated: Annotated[
        bool, Query(description="an adjudicator's ruling takes the panel's place on the items it rules")
    ] = False,
) -> Response:
    """As `blind-review export-preferences` writes them; ``hf`` is the Hugging Face folder, sent as a zip."""
    stem = file_stem(batch)

    def export(out: Path, fmt: str) -> None:
        export_preferences(engine, batch, out, fmt=fmt, ties=ties, source=source, min_agreement=min_agreement,
                           adjudicated=adjudicated)  # fmt: skip

    def write(path: Path) -> Path:
        if format != "hf":
            export(path, format)
            return path
        import shutil

        folder = path.with_suffix("")
        export(folder, "hf")
        return Path(shutil.make_archive(str(folder), "zip", root_dir=folder.parent, base_dir=folder.name))

    suffix = "zip" if format == "hf" else format
    return file_answer(write, f"{stem}-preferences.{suffix}", MEDIA[suffix])


@router.get(
    "/compare",
    summary="Did the new version regress? (compare two batches)",
    response_class=Response,
    responses=rendered_responses("json", "csv", "md", "html"),
)
def compare(
    engine: EngineDep,
    _: Lead,
    baseline: str,
    candidate: str,
    format: TextFormat = "json",
    match: Annotated[list[str] | None, Query(description="OLD=NEW for a renamed model")] = None,
    tolerance: Annotated[float, Query(description="smaller changes are 'no change' (own points)")] = DEFAULT_TOLERANCE,
    tolerance_share: Annotated[
        float, Query(description="the same for overall and win rates")
    ] = DEFAULT_TOLERANCE_SHARE,
    rounds: Annotated[int, Query(ge=1, le=100_000)] = 1000,
    seed: int | None = None,
) -> Response:
    """Per scenario, dimension and model: the verdict with its 95% interval, the panel's shift measured on
    anchors, and behaviour drift, as `blind-review compare` makes it."""
    result = compare_batches(
        engine,
        baseline,
        candidate,
        match=match or (),
        tolerance=tolerance,
        tolerance_share=tolerance_share,
        rounds=rounds,
        seed=seed,
    )
    return rendered(
        format, f"{file_stem(result.baseline, result.candidate)}.{format}", lambda: render_comparison(result, format)
    )


@router.get(
    "/models/{model}/history",
    summary="A model over its follow-up rounds",
    response_class=Response,
    responses=rendered_responses("json", "csv", "md", "html"),
)
def history(
    engine: EngineDep,
    _: Lead,
    model: str,
    format: TextFormat = "json",
    also: Annotated[list[str] | None, Query(description="names a renamed version had before")] = None,
    rounds: Annotated[int, Query(ge=1, le=100_000)] = 1000,
) -> Response:
    result = model_history(engine, model, also=also or (), rounds=rounds)
    return rendered(
        format, f"{file_stem(result.model, fallback='model')}-history.{format}", lambda: render_history(result, format)
    )

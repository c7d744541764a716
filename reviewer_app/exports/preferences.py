"""``export-preferences``: a batch's panel verdicts as DPO-style preference records (``prompt``, ``chosen``,
``rejected`` and where each came from), as JSONL, Parquet or a Hugging Face dataset folder.

Unblinded by nature (every record names its models): for leads and the command line, like the ratings export;
the reviewer's side never imports it (``tests/test_import_graph.py``). The verdicts come from
:mod:`.pairwise_votes` (a pairwise batch) or :mod:`.rating_votes` (a rating batch), the texts from the batch as
loaded (:mod:`.records`), the files from :mod:`.writers` and :mod:`.hf_folder`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Engine

from reviewer_app.analysis import counts_for_score, overrule, ruled_rows
from reviewer_app.batches import batch_rubric, find_batch
from reviewer_app.domain.enums import Mode
from reviewer_app.errors import ExportError, Problem
from reviewer_app.exports.hf_folder import dataset_card, folder_files
from reviewer_app.exports.options import PREFERENCE_FORMATS, PREFERENCE_SOURCES, TIE_RULES
from reviewer_app.exports.pairwise_votes import pairwise_votes
from reviewer_app.exports.rating_votes import rating_votes
from reviewer_app.exports.records import batch_prompts, preference_records
from reviewer_app.exports.summary import PreferenceExport
from reviewer_app.exports.writers import (
    check_file_out,
    check_folder_out,
    record_schema,
    write_jsonl,
    write_parquet,
    write_text,
)
from storage.engine import read_session
from storage.gc_pause import cycle_collection_paused
from storage.repositories import exports as texts_repo
from storage.repositories.adjudication import rulings_frame
from storage.repositories.results.frames import ratings_frame


@cycle_collection_paused()
def export_preferences(
    engine: Engine,
    batch_name: str,
    out: Path,
    *,
    fmt: str = "jsonl",
    ties: str = "leave-out",
    source: str = "auto",
    min_agreement: float = 0.0,
    adjudicated: bool = False,
) -> PreferenceExport:
    """Write the batch's preferences to ``out`` (a file; for ``fmt="hf"`` a folder) and say what was written.

    ``source``: ``pairwise`` (a pairwise batch's verdicts), ``ratings`` (a rating batch's mean overall scores)
    or ``auto`` (the batch's mode). ``ties``: ``leave-out`` drops ties, ``mark`` keeps them with ``tie`` True.
    ``min_agreement`` (0-1) leaves out records whose panel agreed less, and any without an agreement.
    ``adjudicated``: an adjudicator's ruling takes the place of every panel answer on its item and question, as
    in the report made with rulings (``report --adjudicated``), so the votes and agreement of such a record
    count the ruling in each reviewer's place; the record says so (``adjudicated`` True). Default: the panel as
    it answered.

    Raises NotFoundError for an unknown batch; ExportError for an option out of range, a source the batch's
    mode does not have, an ``out`` of the wrong kind, or a batch with no panel ratings that count yet."""
    _check_options(fmt, ties, source, min_agreement)
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    mode_source = "pairwise" if batch.mode == Mode.PAIRWISE else "ratings"
    if source not in ("auto", mode_source):
        raise ExportError(
            [Problem.argument("from", f"batch {batch.name!r} is a {batch.mode} batch: it has no {source} to export; "
                              f"use --from {mode_source} (or auto)")]
        )  # fmt: skip
    (check_folder_out if fmt == "hf" else check_file_out)(out)
    with read_session(engine) as session:
        ratings = ratings_frame(session, batch.id, python_strings=True)
        stored_prompts = texts_repo.sample_prompts(session, batch.id)
        texts = texts_repo.output_texts(session, batch.id)
        rulings = rulings_frame(session, batch.id) if adjudicated else None
    if ratings.empty or not counts_for_score(ratings, anchors=False).any():
        raise ExportError(
            [],
            hint=f"batch {batch.name!r} has no panel ratings yet, so no preferences: collect ratings "
            "(`blind-review assign`, `serve`) or import them (`blind-review import-ratings`), then export again",
        )
    rubric = batch_rubric(batch)
    if rulings is not None:
        ratings = overrule(ratings, rulings, pairwise=mode_source == "pairwise").assign(
            ruled=ruled_rows(ratings, rulings)
        )
    votes = pairwise_votes(ratings, rubric) if mode_source == "pairwise" else rating_votes(ratings, rubric)
    kept, tied, below = _kept(_in_sample_order(votes, list(stored_prompts)), ties, min_agreement)
    prompts, conversation = batch_prompts(stored_prompts)
    records = preference_records(batch.name, mode_source, kept, prompts, texts)
    summary = PreferenceExport(
        batch=batch.name,
        source=mode_source,
        fmt=fmt,
        path=out,
        ties=ties,
        min_agreement=min_agreement,
        records=len(records),
        tied=tied,
        below_agreement=below,
        adjudicated=adjudicated,
        ruled=sum(bool(r["adjudicated"]) for r in records),
        models=tuple(sorted({r["chosen_model"] for r in records} | {r["rejected_model"] for r in records})),
        scenarios=tuple(dict.fromkeys(r["scenario"] for r in records)),
    )
    if fmt == "jsonl":
        write_jsonl(records, out)
        return summary
    schema = record_schema([r["prompt"] for r in records], conversation)
    if fmt == "parquet":
        write_parquet(records, schema, out)
        return summary
    card, data = folder_files(out)
    write_parquet(records, schema, data)
    write_text(dataset_card(summary, schema, conversation), card)
    return summary


def _check_options(fmt: str, ties: str, source: str, min_agreement: float) -> None:
    """Every option a caller can get wrong, all at once (one line each)."""
    problems = []
    if fmt not in PREFERENCE_FORMATS:
        problems.append(Problem.argument("format", f"must be one of {', '.join(PREFERENCE_FORMATS)}, not {fmt!r}"))
    if ties not in TIE_RULES:
        problems.append(Problem.argument("ties", f"must be one of {', '.join(TIE_RULES)}, not {ties!r}"))
    if source not in PREFERENCE_SOURCES:
        problems.append(Problem.argument("from", f"must be one of {', '.join(PREFERENCE_SOURCES)}, not {source!r}"))
    if not (isinstance(min_agreement, int | float) and math.isfinite(min_agreement) and 0 <= min_agreement <= 1):
        problems.append(
            Problem.argument(
                "min_agreement",
                f"must be a share of the panel from 0 to 1 (0.75: three in four agreed), not {min_agreement!r}",
            )
        )
    if problems:
        raise ExportError(problems)


def _kept(votes: pd.DataFrame, ties: str, min_agreement: float) -> tuple[pd.DataFrame, int, int]:
    """The preferences that go in, the number of ties found, and how many ``min_agreement`` left out (of those
    the tie rule kept)."""
    tie = votes["tie"].astype(bool)
    tied = int(tie.sum())
    if ties == "leave-out":
        votes = votes[~tie.to_numpy()]
    if min_agreement <= 0:
        return votes, tied, 0
    agreement = pd.to_numeric(votes["agreement"], errors="coerce")
    enough = (agreement >= min_agreement - 1e-12).to_numpy()  # 2/3 of a panel meets --min-agreement 0.6667
    return votes[enough], tied, int((~enough).sum())


def _in_sample_order(votes: pd.DataFrame, samples: list[str]) -> pd.DataFrame:
    """The preferences in the order the batch file has its samples, and within a sample by the pair's model
    names (then repeats): a file that reads like the batch, the same however the answers came in."""
    place = votes["sample_id"].map({key: i for i, key in enumerate(samples)})
    chosen, rejected = votes["chosen_model"].astype(str), votes["rejected_model"].astype(str)
    first = chosen.where(chosen <= rejected, rejected)
    second = rejected.where(chosen <= rejected, chosen)
    keys = pd.DataFrame({"place": place, "first": first, "second": second, "repeat": votes["chosen_repeat"]})
    order = keys.sort_values(["place", "first", "second", "repeat"], kind="stable").index
    return votes.loc[order].reset_index(drop=True)

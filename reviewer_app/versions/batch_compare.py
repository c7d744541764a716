"""Compare a candidate batch (a new version's outputs, usually a follow-up round) with its baseline batch.

Reads both batches' frames through storage, checks that the two can be compared (one rubric's mode and
dimensions, shared samples, a ``--match`` that names real models), pairs the models and hands the frames to
the statistics: ``aggregation.compare.compare_ratings`` (verdicts) and ``aggregation.drift.drift_rows``
(behaviour drift, from the outputs alone, so it is there before anyone reviews). No SQL here.

The result, :class:`VersionComparison`, is what every front end renders (``reporting.compare``, the
"Compare versions" page, ``blind-review compare``). Model names are unblinded: leads only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy.engine import Engine

from reviewer_app.analysis.prepare import ANCHOR, counts_for_score
from reviewer_app.batches.catalog import batch_rubric, no_such_batch
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.rubric import Dimension, Rubric
from reviewer_app.domain.versions import Comparison, VersionComparison
from reviewer_app.errors import ReportError
from reviewer_app.versions.compare import DEFAULT_ROUNDS, DEFAULT_TOLERANCE, DEFAULT_TOLERANCE_SHARE, compare_ratings
from reviewer_app.versions.drift import drift_rows
from reviewer_app.versions.pairing import pair_models, parse_match
from reviewer_app.webhooks import emit
from storage.engine import read_session
from storage.gc_pause import cycle_collection_paused
from storage.models import Batch
from storage.repositories.batches.batches import get_batch_by_name
from storage.repositories.results.outputs import checks_frame, outputs_frame
from storage.repositories.versions import compare_ratings_frame

if TYPE_CHECKING:
    from sqlmodel import Session

__all__ = [
    "NO_ANCHORS_NOTE",
    "SAMPLES_NOTE",
    "VERDICT_NOTE",
    "compare_batches",
    "default_pair",
    "write_comparison",
]

NO_ANCHORS_NOTE = (
    "No anchors: a change of the panel cannot be measured (panel_shift is null). Verdicts allow for a new panel "
    "by the variance between reviewers' leniency (panel_adjustment 'reviewer variance': the interval is widened "
    "by panel_sd), or are inconclusive where it cannot be estimated ('not adjusted'). A whole panel stricter or "
    "more lenient than the reviewers differ among themselves is only measured by anchors (load the follow-up "
    "with --anchor-share)."
)
VERDICT_NOTE = (
    "Verdicts are decided on a seed-free 95% interval (decision_low to decision_high: corrected difference ± t × "
    "SE, the cluster-robust SE over samples and, without anchors, the panel's variance) and Holm's adjustment "
    "across the rows (p_adjusted, family-wise 5%); 'change' is a significant change of any size, Holm-adjusted "
    "too; ci_low to ci_high is the bootstrap interval shown in the charts."
)
SAMPLES_NOTE = (
    "Scores are means over the samples both versions were rated on, so a baseline score can differ from the "
    "baseline report's score for the same model."
)


def default_pair(batches: Sequence[Batch]) -> tuple[int, int]:
    """The pair a lead most likely wants to compare, as indexes into ``batches`` (oldest first): the newest
    follow-up and the batch it follows up (a valid pair: shared samples, one rubric). Without a follow-up whose
    baseline is listed, the two newest batches. Needs at least two batches."""
    where = {b.id: i for i, b in enumerate(batches)}
    for i in range(len(batches) - 1, -1, -1):
        baseline = where.get(batches[i].baseline_batch_id)
        if baseline is not None and baseline != i:
            return baseline, i
    return len(batches) - 2, len(batches) - 1


def compare_batches(
    engine: Engine,
    baseline_name: str,
    candidate_name: str,
    *,
    match: Iterable[str] | Mapping[str, str] = (),
    tolerance: float = DEFAULT_TOLERANCE,
    tolerance_share: float = DEFAULT_TOLERANCE_SHARE,
    rounds: int = DEFAULT_ROUNDS,
    seed: int | None = None,
    refusal_phrases: Sequence[str] = (),
) -> VersionComparison:
    """Compare batch ``candidate_name`` with batch ``baseline_name``.

        ``match`` pairs renamed versions: ``["OLD=NEW", ...]`` as the CLI's ``--match`` gives them, or a mapping
        OLD -> NEW; other models pair by name. The bootstrap seed is the candidate batch's unless ``seed`` is
        given (verdicts depend on neither). Drift's refusal rate uses the default phrase list, the candidate's
    rubric's ``refusal_phrases`` (a follow-up's is its baseline's) and ``refusal_phrases``.

        Raises NotFoundError for an unknown batch; ReportError when the two batches are one, use different
        rubric modes or dimensions (naming which), share no sample, or the settings are unusable;
        ValidationError (field ``match``) when ``match`` is malformed or names a model not in its batch (the
        message lists the batch's models), or when no model pairs at all. Without ratings on either side there
        are no verdict rows (drift is still there) and a note says why."""
    if baseline_name == candidate_name:
        raise ReportError(f"baseline and candidate are both {baseline_name!r}; compare a batch with another one")
    if rounds < 100:
        raise ReportError(f"--rounds {rounds} is too few for a 95% interval; use at least 100 (default 1000)")
    if tolerance < 0 or tolerance_share < 0:
        raise ReportError("--tolerance and --tolerance-share must not be negative (defaults 0.25 and 0.05)")
    mapping = dict(match) if isinstance(match, Mapping) else parse_match(match)
    with cycle_collection_paused():
        result = _compare(
            engine,
            baseline_name,
            candidate_name,
            mapping=mapping,
            tolerance=tolerance,
            tolerance_share=tolerance_share,
            rounds=rounds,
            seed=seed,
            refusal_phrases=refusal_phrases,
        )
    _emit_regressions(engine, result)
    return result


def _emit_regressions(engine: Engine, result: VersionComparison) -> None:
    """A ``compare.regression`` webhook event when the comparison found any (once per set of regressions)."""
    found = [r for r in result.comparison.rows if r.verdict == "regression"]
    if not found:
        return
    rows = [
        {"scenario": r.scenario, "dimension": r.dimension, "model": r.model, "baseline_model": r.baseline_model,
         "change": r.corrected, "ci_low": r.ci_low, "ci_high": r.ci_high, "unit": r.unit}
        for r in found
    ]  # fmt: skip
    key = ";".join(f"{r.scenario}/{r.dimension}/{r.model}" for r in found)
    emit(
        engine,
        "compare.regression",
        {"baseline": result.baseline, "candidate": result.candidate, "regressions": rows},
        dedup_key=f"regression:{result.baseline}:{result.candidate}:{hashlib.sha256(key.encode()).hexdigest()}",
    )


def _compare(
    engine: Engine,
    baseline_name: str,
    candidate_name: str,
    *,
    mapping: Mapping[str, str],
    tolerance: float,
    tolerance_share: float,
    rounds: int,
    seed: int | None,
    refusal_phrases: Sequence[str],
) -> VersionComparison:
    """:func:`compare_batches` after its settings are checked."""
    with read_session(engine) as session:
        base_row, cand_row = _batch(session, baseline_name), _batch(session, candidate_name)
        assert base_row.id is not None and cand_row.id is not None
        rubric, cand_rubric = batch_rubric(base_row), batch_rubric(cand_row)
        _check_rubrics(rubric, cand_rubric, base_row.name, cand_row.name)
        base_out, cand_out = _outputs(session, base_row.id), _outputs(session, cand_row.id)
        checks = checks_frame(session, base_row.id), checks_frame(session, cand_row.id)
        base_keys, cand_keys = set(_own(base_out)["sample_id"]), set(_own(cand_out)["sample_id"])
        shared = base_keys & cand_keys
        if not shared:
            raise ReportError(
                f"batches {base_row.name!r} ({len(base_keys)} samples) and {cand_row.name!r} ({len(cand_keys)} "
                "samples) share no sample id: a comparison is paired on the samples both were made from; load "
                "the new outputs with the baseline's sample ids"
            )
        pairs = pair_models(
            _own(base_out)["model"],
            _own(cand_out)["model"],
            mapping,
            baseline_label=f"baseline batch {base_row.name!r}",
            candidate_label=f"candidate batch {cand_row.name!r}",
        )
        base_ratings = compare_ratings_frame(session, base_row.id)
        cand_ratings = compare_ratings_frame(session, cand_row.id)
        run_seed = cand_row.seed if seed is None else seed
    if ANCHOR not in cand_ratings:
        cand_ratings[ANCHOR] = False
    has_anchors = bool(cand_ratings[ANCHOR].fillna(False).astype(bool).any())
    notes = [] if has_anchors else [NO_ANCHORS_NOTE]
    unrated = [
        name for name, frame in ((base_row.name, base_ratings), (cand_row.name, cand_ratings)) if not _rated(frame)
    ]
    if unrated:
        notes.append(
            f"No ratings yet in {' and '.join(repr(n) for n in unrated)}: verdicts come once both batches are "
            "reviewed; the drift below is from the outputs alone."
        )
        comparison = Comparison(
            mode=Mode(rubric.mode),
            pairs=pairs,
            rows=(),
            tolerance=tolerance,
            tolerance_share=tolerance_share,
            seed=run_seed,
            rounds=rounds,
        )
    else:
        comparison = compare_ratings(
            base_ratings,
            cand_ratings,
            rubric,
            pairs,
            seed=run_seed,
            rounds=rounds,
            tolerance=tolerance,
            tolerance_share=tolerance_share,
        )
    notes += [VERDICT_NOTE, SAMPLES_NOTE]
    phrases = (*cand_rubric.refusal_phrases, *refusal_phrases)
    drift = drift_rows(base_out, cand_out, pairs, refusal_phrases=phrases, checks=checks)
    paired_base, paired_cand = {p.baseline for p in pairs}, {p.candidate for p in pairs}
    return VersionComparison(
        baseline=base_row.name,
        candidate=cand_row.name,
        comparison=comparison,
        drift=tuple(drift),
        unpaired_baseline=tuple(sorted(set(_own(base_out)["model"]) - paired_base)),
        unpaired_candidate=tuple(sorted(set(_own(cand_out)["model"]) - paired_cand)),
        shared_samples=len(shared),
        baseline_only_samples=len(base_keys - cand_keys),
        candidate_only_samples=len(cand_keys - base_keys),
        has_anchors=has_anchors,
        notes=tuple(notes),
    )


def write_comparison(result: VersionComparison, fmt: str, out: Path) -> Path:
    """Render ``result`` as ``fmt`` (json, csv, md, html) into ``out``; raises ReportError if it can't."""
    from reviewer_app.batches.output_files import write_rendered
    from reviewer_app.reporting.compare import FORMATS, render_comparison

    return write_rendered(lambda: render_comparison(result, fmt), fmt, FORMATS, out)


def _batch(session: Session, name: str) -> Batch:
    row = get_batch_by_name(session, name)
    if row is None:
        raise no_such_batch(session, name)
    return row


def _outputs(session: Session, batch_id: int) -> pd.DataFrame:
    """The batch's outputs frame with each output's text (drift's refusal rate and identical share need it),
    read in one query, names as plain Python strings (the pairing's and drift's keys)."""
    return outputs_frame(session, batch_id, with_text=True)


def _own(outputs: pd.DataFrame) -> pd.DataFrame:
    """The batch's own outputs (not anchors: a follow-up batch may hold the baseline's outputs again)."""
    if ANCHOR in outputs:
        return outputs[~outputs[ANCHOR].fillna(False).astype(bool)]
    return outputs


def _rated(ratings: pd.DataFrame) -> bool:
    """Whether some rating counts for a score (not gold, first showing, not an anchor)."""
    return not ratings.empty and bool(counts_for_score(ratings, anchors=False).any())


def _check_rubrics(base: Rubric, cand: Rubric, base_name: str, cand_name: str) -> None:
    """Both batches must be reviewed under one rubric's mode and dimensions; says what differs."""
    problems = []
    if base.mode != cand.mode:
        problems.append(f"mode {base.mode} in {base_name!r} but {cand.mode} in {cand_name!r}")
    b_dims, c_dims = {d.name: d for d in base.dimensions}, {d.name: d for d in cand.dimensions}
    only_b, only_c = sorted(set(b_dims) - set(c_dims)), sorted(set(c_dims) - set(b_dims))
    if only_b:
        problems.append(f"dimension(s) {', '.join(only_b)} only in {base_name!r}")
    if only_c:
        problems.append(f"dimension(s) {', '.join(only_c)} only in {cand_name!r}")
    changed = [name for name in sorted(set(b_dims) & set(c_dims)) if _scale(b_dims[name]) != _scale(c_dims[name])]
    if changed:
        problems.append(f"dimension(s) {', '.join(changed)} on another scale or direction")
    if problems:
        raise ReportError(
            f"batches {base_name!r} and {cand_name!r} cannot be compared: "
            + "; ".join(problems)
            + ". A follow-up batch uses its baseline's rubric (`load-batch --follow-up`)."
        )


def _scale(d: Dimension) -> tuple[Any, ...]:
    return (str(d.scale), d.min, d.max, d.higher_is_better, tuple(d.choices))

"""Plans for leads and admins (``blind-review plan``): the variance components from a pilot batch read through
storage, or stated ones parsed from the command line, then :func:`reviewer_app.analysis.planning.plan_study`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Engine

from reviewer_app.analysis.planning import pilot_components, plan_study
from reviewer_app.analysis.power import Components
from reviewer_app.analysis.prepare import OVERALL
from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.domain.plans import Plan
from reviewer_app.errors import ReportError
from storage.engine import read_session
from storage.repositories.results.frames import ratings_frame

__all__ = ["parse_components", "parse_ks", "plan_from_assumptions", "plan_from_pilot"]

_PARTS = ("sample", "output", "reviewer", "residual")


def parse_components(text: str) -> Components:
    """``output=0.4,reviewer=0.1,residual=0.6[,sample=0.3]`` (variances, squared score units) as components;
    ReportError saying what is wrong otherwise. ``sample`` defaults to 0 (it cancels in paired differences)."""
    values: dict[str, float] = {"sample": 0.0}
    for part in (p for p in text.split(",") if p.strip()):
        name, sep, raw = part.partition("=")
        name = name.strip()
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not sep or name not in _PARTS or value < 0:
            raise ReportError(
                f"--assume: {part.strip()!r} is not NAME=VARIANCE with NAME one of {', '.join(_PARTS)} and a "
                "variance >= 0, e.g. --assume output=0.4,reviewer=0.1,residual=0.6"
            )
        values[name] = value
    missing = [p for p in _PARTS[1:] if p not in values]
    if missing:
        raise ReportError(
            f"--assume needs {', '.join(missing)} too (sample is optional), e.g. output=0.4,reviewer=0.1,residual=0.6"
        )
    return Components(**values)


def parse_ks(text: str) -> list[int]:
    """``1,2,3`` as reviewers per output; ReportError for anything else."""
    try:
        ks = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        ks = []
    if not ks or min(ks) < 1:
        raise ReportError(f"--k {text!r}: expected reviewers per output as whole numbers of 1 or more, e.g. --k 1,2,3")
    return ks


def plan_from_pilot(
    engine: Engine,
    batch: str,
    *,
    gap: float,
    ks: Sequence[int],
    target: float = 0.8,
    dimension: str = OVERALL,
    models: int | None = None,
) -> Plan:
    """The plan with each scenario's components measured on the pilot batch's ratings of ``dimension``; the
    number of models defaults to the pilot's. NotFoundError for an unknown batch, ReportError when the pilot
    cannot be measured or the design makes no sense."""
    row = find_batch(engine, batch)
    assert row.id is not None
    rubric = batch_rubric(row)
    with read_session(engine) as session:
        ratings = ratings_frame(session, row.id, python_strings=True)
    if rubric.mode == "pairwise":
        raise ReportError("plan measures a rating batch; a pairwise pilot's win rates are not planned yet")
    try:
        components = pilot_components(ratings, rubric, dimension) if len(ratings) else {}
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    if not components:
        raise ReportError(
            f"batch {row.name!r} has too few ratings to measure: each scenario needs ratings of 3 samples and 2 "
            "models at least"
        )
    n_models = models or int(ratings["model_a"].nunique())
    source = f"pilot batch {row.name}, {dimension}"
    return _plan(components, n_models, gap, ks, target, source)


def plan_from_assumptions(
    components: Components, *, scenarios: Sequence[str], models: int, gap: float, ks: Sequence[int], target: float = 0.8
) -> Plan:
    """The plan with the same stated components in every scenario named."""
    return _plan(dict.fromkeys(scenarios or ["all"], components), models, gap, ks, target, "stated assumptions")


def _plan(
    components: dict[str, Components], models: int, gap: float, ks: Sequence[int], target: float, source: str
) -> Plan:
    if not gap > 0:
        raise ReportError(f"--gap {gap:g}: the gap to separate must be above 0 (in the dimension's points)")
    try:
        return plan_study(components, models=models, gap=gap, ks=list(ks), target=target, source=source)
    except ValueError as exc:
        raise ReportError(str(exc)) from None

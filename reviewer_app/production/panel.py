"""Panel against production: whether production feedback orders a batch's models as its reviewers do.

Each pair of models in both is tested on production feedback as the monitor tests two windows
(``monitor_stats``), Holm-adjusted over the pairs, and said in a sentence against the panel's verdict.
Pure: a batch report's rows and the feedback frame in, a ``PanelProduction`` out (``feedback`` reads them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from reviewer_app.analysis.inference import ALPHA, holm
from reviewer_app.domain.production import THUMBS, PanelProduction, ProductionModel, ProductionPair, scale_label
from reviewer_app.domain.report_rankings import PairRow, RankingRow
from reviewer_app.production.monitor_stats import Sample, feedback_test, finite_or_none, mean_ci, wilson


def _p_text(p: float) -> str:
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.2g}"


def panel_vs_production(
    ranking: Sequence[RankingRow],
    pairs: Sequence[PairRow],
    feedback: pd.DataFrame,
    *,
    dimension: str | None = None,
) -> PanelProduction:
    """Whether production feedback and the panel order the models of a batch the same way.

    ``ranking`` and ``pairs`` are a batch report's overall rows (``OverallReport.ranking`` / ``.pairs``);
    ``dimension`` picks the ranking's dimension (default: "overall" when present, else the first row's).
    ``feedback`` is the feedback frame (``storage.repositories.feedback.feedback_frame``). Models in both are
    compared on the feedback scale most of their events use (other scales are left out, with a note): every
    pair is tested as the monitor tests two windows, Holm-adjusted over the pairs, and said in a sentence
    against the panel's verdict (a pair the panel separates, its ``PairRow.separated``)."""
    dims = list(dict.fromkeys(r.dimension for r in ranking))
    dim = dimension or ("overall" if "overall" in dims else (dims[0] if dims else "overall"))
    ranked = sorted((r for r in ranking if r.dimension == dim), key=lambda r: (r.rank, r.model))
    fb_models = {str(m) for m in feedback["model"].unique()} if len(feedback) else set()
    both = [r for r in ranked if r.model in fb_models]
    notes: list[str] = []
    if not both:
        return PanelProduction(
            dimension=dim, scale="", models=(), pairs=(), notes=("No model of the batch has production feedback.",)
        )
    mine = feedback[feedback["model"].isin([r.model for r in both])]
    scales = mine.groupby(["scale_min", "scale_max"], observed=True).size().sort_values(ascending=False, kind="stable")
    scale_min, scale_max = (float(v) for v in scales.index[0])
    if len(scales) > 1:
        notes.append(f"Production feedback on other scales than {scale_label(scale_min, scale_max)} is left out.")
    mine = mine[(mine["scale_min"] == scale_min) & (mine["scale_max"] == scale_max)]
    thumbs = (scale_min, scale_max) == THUMBS
    fb = mine["feedback"].to_numpy(dtype=float)
    names = mine["model"].astype(str).to_numpy()
    samples: dict[str, Sample] = {}
    models: list[ProductionModel] = []
    for r in both:
        values = fb[names == r.model]
        if not len(values):
            notes.append(f"{r.model} has no production feedback on this scale.")
            continue
        n = len(values)
        s = Sample(n, int((values > 0).sum()), float(values.mean()), float(values.var(ddof=1)) if n > 1 else 0.0, ())
        samples[r.model] = s
        if thumbs:
            lo, hi = wilson(np.array([s.up]), np.array([n]))
            mean = s.up / n
        else:
            lo, hi = mean_ci(np.array([s.mean]), np.array([s.var]), np.array([n]))
            mean = s.mean
        models.append(
            ProductionModel(
                model=r.model,
                panel_rank=r.rank,
                panel_score=r.score,
                scale=scale_label(scale_min, scale_max),
                n=n,
                mean=mean,
                ci_low=finite_or_none(float(lo[0])),
                ci_high=finite_or_none(float(hi[0])),
            )
        )
    panel = {frozenset((p.model_a, p.model_b)): p for p in pairs if p.dimension == dim}
    tested = []
    for a, b in combinations([m.model for m in models], 2):  # a is the panel's higher (or equal) rank
        sa, sb = samples[a], samples[b]
        test, p = feedback_test(sa, sb, thumbs)
        ma, mb = (sa.up / sa.n, sb.up / sb.n) if thumbs else (sa.mean, sb.mean)
        tested.append((a, b, ma, mb, test, p if math.isfinite(p) else 1.0))
    adjusted = holm(np.array([t[5] for t in tested], dtype=float))
    out_pairs = []
    for (a, b, ma, mb, test, p), q in zip(tested, adjusted, strict=True):
        row = panel.get(frozenset((a, b)))
        panel_higher = row.model_a if row is not None and row.separated else None
        significant = bool(q < ALPHA)
        if significant:
            higher, lower = (a, b) if ma >= mb else (b, a)
            head = f"Production feedback puts {higher} above {lower} (significant, {test}, Holm-adjusted {_p_text(q)})"
            if panel_higher == higher:
                agreement, tail = "agree", f"; your reviewers also rank {higher} above {lower}."
            elif panel_higher == lower:
                agreement, tail = "disagree", f"; your reviewers rank {lower} above {higher}: they disagree."
            else:
                agreement, tail = "panel sees no difference", "; your reviewers see no difference."
        else:
            higher, lower = (a, b) if panel_higher in (None, a) else (b, a)
            head = (
                f"Production feedback shows no significant difference between {higher} and {lower} ({test}, "
                f"Holm-adjusted {_p_text(q)})"
            )
            if panel_higher is not None:
                agreement, tail = "production sees no difference", f"; your reviewers rank {higher} above {lower}."
            else:
                agreement, tail = "both see no difference", "; your reviewers see no difference either."
        diff = (ma - mb) if higher == a else (mb - ma)
        out_pairs.append(
            ProductionPair(
                higher=higher,
                lower=lower,
                production_diff=diff,
                test=test,
                p_value=p,
                p_adjusted=float(q),
                production_significant=significant,
                panel_higher=panel_higher,
                agreement=agreement,
                sentence=head + tail,
            )
        )
    return PanelProduction(
        dimension=dim,
        scale=scale_label(scale_min, scale_max),
        models=tuple(models),
        pairs=tuple(out_pairs),
        notes=tuple(notes),
    )

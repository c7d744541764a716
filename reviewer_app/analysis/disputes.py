"""Disagreements worth a second look: which items go to the adjudication queue, and what rulings do to a report.

An item is disputed on a question when its panel's first showings (no gold item, repeat or anchor) disagree
beyond the rubric's ``[adjudication]`` threshold (``domain.rubric.Adjudication``): in rating mode scores
``spread`` or more apart (default: more than half the scale apart, 3 or more on 1-5), any two different
answers on a binary or categorical question the rubric names; in pairwise mode opposite verdicts (one reviewer
for each answer). The queue (``reviewer_app.adjudication``) and the report's adjudication section both read
:func:`find_disputes`, so what a lead is asked to rule on and what the report counts are the same items.

A ruling replaces every panel answer of its item on its question (:func:`overrule`) rather than standing in
as one more answer: the sample keeps its weight in the cluster bootstrap, and the ranking reads the ruling as
the item's answer, which is what adjudication means in annotation practice (Potato, Prodigy's review recipe,
INCEpTION's curation: the curated answer is the gold one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import anchor_mask, canonical_outcome, counts_for_score, numeric_values
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report_adjudication import AdjudicatedItem, AdjudicationScenario, AdjudicationSection
from reviewer_app.domain.rubric import Dimension, Rubric
from reviewer_app.domain.scales import spec_of

__all__ = [
    "DISPUTE_COLUMNS",
    "RULING_COLUMNS",
    "adjudication_section",
    "dispute_rule",
    "find_disputes",
    "named_votes",
    "overrule",
    "pairwise_value_text",
    "ruled_rows",
]

DISPUTE_COLUMNS = ["item_id", "scenario", "sample_id", "model_a", "model_b", "dimension", "answers", "panel"]
RULING_COLUMNS = ["item_id", "dimension", "value", "reason", "adjudicator", "updated_at"]
_SIDES = {"a": "left", "b": "right"}  # canonical answer -> the side it is on when the pair is not swapped
_PAIRWISE_WORDS = {"tie": "tie", "both_bad": "both bad"}


def _threshold(dim: Dimension, spread: float | None) -> tuple[float, bool] | None:
    """(points, strict) for a scored dimension (disputed when max - min >= points, > when strict); None for a
    question whose answers are disputed by any difference (``ScaleSpec.dispute_threshold``)."""
    return spec_of(dim.scale).dispute_threshold(dim, spread)


def _checked(rubric: Rubric) -> list[str]:
    """The questions looked at: the rubric's list, else every one with a threshold (Likert, continuous; every
    question in pairwise mode, the caller's frame says which)."""
    if rubric.adjudication.dimensions:
        return list(rubric.adjudication.dimensions)
    if rubric.mode == Mode.PAIRWISE:
        return []
    return [d.name for d in rubric.dimensions if _threshold(d, None) is not None]


def dispute_rule(rubric: Rubric) -> str:
    """The rubric's rule, in words for a page and the report."""
    if rubric.mode == Mode.PAIRWISE:
        which = ", ".join(rubric.adjudication.dimensions) or "every question"
        minority = rubric.adjudication.minority
        if minority is None:
            return f"opposite verdicts (at least one reviewer for each answer) on {which}"
        return (f"opposite verdicts, the smaller side at least {minority:.0%} of the reviewers who picked a side, "
                f"on {which}")  # fmt: skip
    parts = []
    for name in _checked(rubric):
        dim = _dimension(rubric, name)
        if dim is None:
            continue
        rule = _threshold(dim, rubric.adjudication.spread)
        if rule is None:
            parts.append(f"{name}: any two different answers")
        else:
            points, strict = rule
            apart = f"more than {_number(points)}" if strict else f"{_number(points)} or more"
            parts.append(f"{name}: scores {apart} points apart")
    return "; ".join(parts) or "no question is looked at"


def _dimension(rubric: Rubric, name: str) -> Dimension | None:
    try:
        return rubric.dimension(name)
    except KeyError:
        return None


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _panel(frame: pd.DataFrame) -> pd.DataFrame:
    """The first showings that count: not gold, not a repeat, not an anchor."""
    keep = counts_for_score(frame, anchors=False) & ~anchor_mask(frame)
    out: pd.DataFrame = frame[keep]
    return out


def find_disputes(ratings: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Every (item, question) the panel disputes (:data:`DISPUTE_COLUMNS`), by scenario and sample.

    ``ratings`` is ``ratings_frame``'s. ``panel`` says what the reviewers answered, in a rating batch the answers
    lowest first ("1, 4, 5"), in a pairwise one the votes per answer in the item's canonical order ("a 2, b 1").
    """
    if ratings.empty:
        return pd.DataFrame(columns=DISPUTE_COLUMNS)
    panel = _panel(ratings)
    checked = _checked(rubric)
    if checked:
        panel = panel[panel["dimension"].isin(checked)]
    elif rubric.mode == Mode.RATING:
        return pd.DataFrame(columns=DISPUTE_COLUMNS)  # no Likert or continuous question, and none named
    if panel.empty:
        return pd.DataFrame(columns=DISPUTE_COLUMNS)
    if rubric.mode == Mode.PAIRWISE:
        return _pairwise_disputes(panel, rubric.adjudication.minority)
    found = []
    for name, part in panel.groupby("dimension", sort=True):
        dim = _dimension(rubric, str(name))
        if dim is None:
            continue
        rule = _threshold(dim, rubric.adjudication.spread)
        groups = part.groupby("item_id", sort=False)
        if rule is None:
            disputed = groups["value"].nunique() > 1
        else:
            scores = numeric_values(part["value"]).groupby(part["item_id"], sort=False)
            spread = scores.max() - scores.min()
            points, strict = rule
            disputed = spread > points if strict else spread >= points - 1e-9
        items = disputed[disputed].index
        if len(items):
            chosen = part[part["item_id"].isin(items)]
            found.append(_rows(chosen, _rating_panel(chosen, dim)))
    if not found:
        return pd.DataFrame(columns=DISPUTE_COLUMNS)
    return _sorted(pd.concat(found, ignore_index=True))


def _rating_panel(part: pd.DataFrame, dim: Dimension) -> pd.Series:
    """Per (item, question), the answers as text, lowest first ("1, 4, 5"; a category's in text order): whole
    columns sorted once, then joined per group (a function per group took 1.4 s for 7,800 disputes)."""
    key = numeric_values(part["value"]) if dim.numeric() else part["value"].astype(str)
    ordered = part.assign(_key=key.to_numpy()).sort_values(["item_id", "dimension", "_key"], kind="stable")
    text: pd.Series = ordered["value"].astype(str).groupby([ordered["item_id"], ordered["dimension"]]).agg(", ".join)
    return text


def _pairwise_disputes(panel: pd.DataFrame, minority: float | None) -> pd.DataFrame:
    """Items with votes for both sides (and, with ``minority``, the smaller side at least that share of them)."""
    panel = panel.assign(value=canonical_outcome(panel))
    counts = _vote_counts(panel)
    a, b = counts["a"].to_numpy(), counts["b"].to_numpy()
    both = (a > 0) & (b > 0)
    if minority is not None:
        both &= np.minimum(a, b) >= minority * (a + b) - 1e-9
    disputed = counts[both]
    if disputed.empty:
        return pd.DataFrame(columns=DISPUTE_COLUMNS)
    keys = pd.MultiIndex.from_frame(panel[["item_id", "dimension"]])
    part = panel[keys.isin(disputed.index)]
    return _sorted(_rows(part, _votes_text(disputed)))


_PAIRWISE_ORDER = ["a", "b", "tie", "both_bad"]


def _vote_counts(panel: pd.DataFrame) -> pd.DataFrame:
    """Per (item, question), how many answered each canonical answer (a column each, in canonical order)."""
    counts = panel.groupby(["item_id", "dimension", "value"], sort=False).size().unstack("value", fill_value=0)
    return counts.reindex(columns=_PAIRWISE_ORDER, fill_value=0)


def _votes_text(counts: pd.DataFrame) -> pd.Series:
    """Per (item, question), the votes per answer in canonical order ("a 2, b 1, tie 1"), from a table of counts
    with a column per answer."""
    pieces = [
        np.where(counts[v].to_numpy() > 0, f"{_PAIRWISE_WORDS.get(v, v)} " + counts[v].astype(str).to_numpy(), "")
        for v in _PAIRWISE_ORDER
    ]
    text = [", ".join(p for p in row if p) for row in zip(*pieces, strict=True)]
    return pd.Series(text, index=counts.index, dtype=object)


def _rows(part: pd.DataFrame, panel: pd.Series) -> pd.DataFrame:
    """One row per disputed (item, question) of ``part``, with ``panel`` (indexed by item and question) as text."""
    out = part.groupby(["item_id", "dimension"], sort=False).agg(
        scenario=("scenario", "first"),
        sample_id=("sample_id", "first"),
        model_a=("model_a", "first"),
        model_b=("model_b", "first"),
        answers=("value", "size"),
    )
    out["panel"] = panel.reindex(out.index).to_numpy()
    return out.reset_index()[DISPUTE_COLUMNS]


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.assign(item_id=frame["item_id"].astype(np.int64), answers=frame["answers"].astype(np.int64))
    return frame.sort_values(["scenario", "sample_id", "item_id", "dimension"], kind="stable").reset_index(drop=True)


def overrule(main: pd.DataFrame, rulings: pd.DataFrame, *, pairwise: bool) -> pd.DataFrame:
    """``main`` with every answer on a ruled (item, question) replaced by the ruling (:func:`ruled_rows` says
    which rows those are).

    A pairwise ruling is canonical ("a", "b", "tie", "both_bad"); a rating stores the side a reviewer saw, so it
    goes back into each row's own view (its ``swapped`` flag) and :func:`canonical_outcome` reads it as the
    ruling again."""
    where = _ruling_of_row(main, rulings)
    hit = where >= 0
    if not hit.any():
        return main
    value = rulings["value"].astype(str).to_numpy(dtype=object)[where[hit]]
    if pairwise:
        swapped = main["swapped"].astype(bool).to_numpy()[hit]
        seen = np.array([_SIDES.get(v, v) for v in value], dtype=object)
        flip = swapped & np.isin(value, ["a", "b"])
        seen[flip] = np.where(value[flip] == "a", "right", "left")
        value = seen
    out = main.copy()
    values = out["value"].to_numpy(dtype=object).copy()
    values[hit] = value
    out["value"] = values
    return out


def ruled_rows(main: pd.DataFrame, rulings: pd.DataFrame) -> np.ndarray:
    """Which rows of ``main`` :func:`overrule` replaces: those on an (item, question) with a ruling."""
    out: np.ndarray = _ruling_of_row(main, rulings) >= 0
    return out


def _ruling_of_row(main: pd.DataFrame, rulings: pd.DataFrame) -> np.ndarray:
    """Per row of ``main``, the position of its (item, question)'s ruling in ``rulings``, or -1."""
    if rulings.empty or main.empty:
        return np.full(len(main), -1)
    ruled = pd.MultiIndex.from_frame(rulings[["item_id", "dimension"]].astype({"item_id": np.int64}))
    keys = pd.MultiIndex.from_frame(main[["item_id", "dimension"]].astype({"item_id": np.int64}))
    out: np.ndarray = ruled.get_indexer(keys)
    return out


def pairwise_value_text(value: str, model_a: str, model_b: str) -> str:
    """A canonical pairwise answer in a lead's words: the better model's name, "tie" or "both bad"."""
    return {"a": model_a, "b": model_b}.get(value, _PAIRWISE_WORDS.get(value, value))


def adjudication_section(
    ratings: pd.DataFrame, rulings: pd.DataFrame, rubric: Rubric, *, used: bool
) -> AdjudicationSection | None:
    """The report's adjudication section: disputes and rulings per scenario, every ruling with its reason, and
    whether the rankings used them. None when the panel disputes nothing and nothing was ruled."""
    disputes = find_disputes(ratings, rubric)
    if disputes.empty and rulings.empty:
        return None
    about = ratings.drop_duplicates("item_id").set_index("item_id")
    items: list[AdjudicatedItem] = []
    panels = dict(zip(_keys(disputes), disputes["panel"].astype(str), strict=True))
    for r in rulings.sort_values(["item_id", "dimension"]).to_dict(orient="records"):
        item = int(r["item_id"])
        if item not in about.index:
            continue
        row = about.loc[item]
        models = tuple(str(m) for m in (row["model_a"], row["model_b"]) if isinstance(m, str) and m)
        dimension = str(r["dimension"])
        panel = panels.get((item, dimension)) or _panel_now(ratings, item, dimension, rubric)
        ruling = str(r["value"])
        if rubric.mode == Mode.PAIRWISE:
            ruling = pairwise_value_text(ruling, models[0], models[1])
            panel = named_votes(panel, models)
        at = pd.Timestamp(r["updated_at"])
        items.append(
            AdjudicatedItem(
                scenario=str(row["scenario"]),
                sample_id=str(row["sample_id"]),
                models=models,
                dimension=dimension,
                panel=panel,
                ruling=ruling,
                reason=str(r["reason"]),
                adjudicator=str(r["adjudicator"]),
                ruled_at="" if pd.isna(at) else at.isoformat(timespec="seconds"),
            )
        )
    items.sort(key=lambda i: (i.scenario, i.sample_id, i.models, i.dimension))
    if rubric.mode == Mode.PAIRWISE:
        named = zip(disputes["panel"], disputes["model_a"], disputes["model_b"], strict=True)
        disputes = disputes.assign(panel=[named_votes(p, (a, b)) for p, a, b in named])
    scenarios = []
    for scen in sorted(set(disputes["scenario"]) | {i.scenario for i in items}):
        mine = disputes[disputes["scenario"] == scen]
        ruled = sum(1 for i in items if i.scenario == scen)
        scenarios.append(AdjudicationScenario(scenario=str(scen), disputed=len(mine), ruled=ruled))
    disputed, ruled = len(disputes), len(items)
    ruled_ids = set(_keys(rulings))
    open_ = sum(1 for key in _keys(disputes) if key not in ruled_ids)
    return AdjudicationSection(
        rule=dispute_rule(rubric),
        used=used,
        disputed=disputed,
        ruled=ruled,
        scenarios=tuple(scenarios),
        items=tuple(items),
        summary=_summary(disputed, ruled, open_, used),
    )


def _keys(frame: pd.DataFrame) -> list[tuple[int, str]]:
    """(item id, question) of each row of a disputes or rulings frame."""
    return list(zip(frame["item_id"].astype(int).tolist(), frame["dimension"].astype(str).tolist(), strict=True))


def _panel_now(ratings: pd.DataFrame, item: int, dimension: str, rubric: Rubric) -> str:
    """What the panel answers on a ruled item it no longer disputes (more answers came in since the ruling)."""
    part = _panel(ratings)
    part = part[(part["item_id"] == item) & (part["dimension"] == dimension)]
    if part.empty:
        return ""
    if rubric.mode == Mode.PAIRWISE:
        return str(_votes_text(_vote_counts(part.assign(value=canonical_outcome(part)))).iloc[0])
    dim = _dimension(rubric, dimension)
    return str(_rating_panel(part, dim).iloc[0]) if dim is not None else ", ".join(part["value"].astype(str))


def named_votes(panel: str, models: tuple[str, ...]) -> str:
    """ "a 2, b 1" in the models' names: "m1 2, m2 1"."""
    names = {"a": models[0], "b": models[1]} if len(models) == 2 else {}
    out = []
    for part in panel.split(", ") if panel else []:
        word, _, count = part.rpartition(" ")
        out.append(f"{names.get(word, word)} {count}")
    return ", ".join(out)


def _summary(disputed: int, ruled: int, open_: int, used: bool) -> str:
    head = (
        f"{disputed} disagreement{'s' if disputed != 1 else ''} beyond the rubric's threshold (an item on a question)"
    )
    head += f"; {ruled} ruled, {open_} still open."
    if used and ruled:
        rulings = f"ruling{'s' if ruled != 1 else ''}"
        return head + f" The rankings use the {ruled} {rulings} in place of the panel's answers on those items."
    if ruled:
        return head + " The rankings are the panel's as it answered; a report made with rulings would use them."
    return head

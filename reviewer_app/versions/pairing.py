"""Which model of a follow-up batch is compared with which of its baseline: by name, or as the user says.

The CLI's ``--match OLD=NEW`` (and the page's matching form) go through :func:`parse_match`; then
:func:`pair_models` applies the rule. Both raise :class:`~reviewer_app.errors.ValidationError` worded by the
argument ``match``, so the CLI names it ``--match`` and a page its widget. The pairs feed
``aggregation.compare.compare_ratings`` and ``aggregation.drift.drift_rows``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reviewer_app.domain.versions import ModelPair
from reviewer_app.errors import Problem, ValidationError

__all__ = ["pair_models", "parse_match"]


def parse_match(specs: Iterable[str]) -> dict[str, str]:
    """``["OLD=NEW", ...]`` (the CLI's ``--match``) as a mapping OLD -> NEW.

    Raises ValidationError (field ``match``) for a spec without "=", with an empty side, or naming a model
    twice on either side."""
    mapping: dict[str, str] = {}
    problems: list[Problem] = []
    seen_new: set[str] = set()
    for spec in specs:
        old, sep, new = (part.strip() for part in spec.partition("="))
        if not sep or not old or not new:
            problems.append(Problem.argument("match", f"{spec!r} is not OLD=NEW (a baseline model = its new name)"))
        elif old in mapping:
            problems.append(Problem.argument("match", f"{old!r} is matched twice; give each baseline model once"))
        elif new in seen_new:
            problems.append(Problem.argument("match", f"{new!r} is matched twice; give each new model once"))
        else:
            mapping[old] = new
            seen_new.add(new)
    if problems:
        raise ValidationError(problems)
    return mapping


def pair_models(
    baseline_models: Iterable[str],
    candidate_models: Iterable[str],
    match: Mapping[str, str] | None = None,
    *,
    baseline_label: str = "the baseline",
    candidate_label: str = "the follow-up",
) -> tuple[ModelPair, ...]:
    """Pair each candidate model with its baseline: by ``match`` (OLD -> NEW, for renamed versions) first,
    then the remaining models by equal name. A model named in ``match`` does not also pair by name.

    Pairs come in the order of the baseline's models (sorted). Raises ValidationError (field ``match``) when
    ``match`` names a model that is not in its batch (the message lists the batch's models), or when no
    model pairs at all (then the models of both batches are listed so the user can write ``--match``)."""
    base = sorted(set(baseline_models))
    cand = sorted(set(candidate_models))
    match = dict(match or {})
    problems = [
        Problem.argument("match", f"{old!r} is not a model of {baseline_label} (its models: {_names(base)})")
        for old in match
        if old not in base
    ]
    problems += [
        Problem.argument("match", f"{new!r} is not a model of {candidate_label} (its models: {_names(cand)})")
        for new in match.values()
        if new not in cand
    ]
    if problems:
        raise ValidationError(problems)
    taken = set(match.values())
    pairs = [
        ModelPair(b, match[b]) if b in match else ModelPair(b, b)
        for b in base
        if b in match or (b in cand and b not in taken)
    ]
    if not pairs:
        raise ValidationError(
            [
                Problem.argument(
                    "match",
                    f"no model of {candidate_label} ({_names(cand)}) has the name of one of {baseline_label} "
                    f"({_names(base)}); pair renamed versions with OLD=NEW",
                )
            ]
        )
    return tuple(pairs)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"

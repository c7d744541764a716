"""The rubric: how reviewers score, how many see each item, and what is checked silently.

A rubric is a TOML file (see README, "Rubric"). It is parsed into frozen dataclasses so the rest of the
code never reads TOML, and stored with the batch (as its TOML text and as JSON) so a batch always carries
the rubric it was reviewed under.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reviewer_app.domain.check_base import CheckDefinitionError
from reviewer_app.domain.checks import parse_checks
from reviewer_app.domain.enums import Mode, PairwiseChoice, PairwiseGranularity, Scale
from reviewer_app.domain.rubric import (
    ALLOCATIONS,
    LEVELS,
    PAIRWISE_DIMENSION,
    PAIRWISE_GRANULARITY,
    SCALES,
    Adjudication,
    Allocation,
    Dimension,
    GoldItem,
    Rubric,
)
from reviewer_app.domain.scales import Bad, spec_of
from reviewer_app.errors import Problem, RubricError

KNOWN_SETTINGS = frozenset(
    {
        "mode",
        "overlap",
        "dimensions",
        "scenarios",
        "pairwise_granularity",
        "show_reference",
        "show_criteria",
        "show_checks",
        "instructions",
        "leak_words",
        "refusal_phrases",
        "gold",
        "repeats",
        "seed",
        "allocation",
        "adjudication",
    }
)
SCALE_NAMES = ", ".join(f'"{s}"' for s in SCALES)  # for messages: "likert", "binary", ...
DIMENSION_KEYS = ("name", "description", "scale", "level", "min", "max", "labels", "choices", "higher_is_better")


@dataclass(frozen=True)
class _Head:
    """The settings every other part of the rubric is checked against (as written: checked, not yet typed)."""

    mode: str
    overlap: int
    granularity: str

    @property
    def pairwise_overall(self) -> bool:
        return self.mode == Mode.PAIRWISE and self.granularity == PairwiseGranularity.OVERALL


def parse_rubric_text(text: str, source: str = "rubric.toml") -> Rubric:
    """Parse and check a rubric; every problem is reported at once in a :class:`RubricError`.

    ``source`` names the file in the problems. Each part of the rubric is checked on its own (a problem in
    one does not hide those in another), and the :class:`Rubric` is built only when none was found.
    """
    raw = _read_toml(text, source)
    problems: list[Problem] = []

    def bad(fieldname: str | None, message: str) -> None:
        problems.append(Problem(source, None, fieldname, message))

    for key in raw:
        if key not in KNOWN_SETTINGS:
            bad(key, f"unknown setting; the known ones are {', '.join(sorted(KNOWN_SETTINGS))}")
    head = _parse_head(raw, bad)
    dims, named = _parse_dimensions(raw.get("dimensions", []), head, bad)
    scenario_dims, weights, scenario_checks = _parse_scenarios(raw.get("scenarios", {}), head, named, bad)
    leak_words = _parse_leak_words(raw.get("leak_words", []), bad)
    refusal_phrases = _parse_refusal_phrases(raw.get("refusal_phrases", []), bad)
    gold = _parse_gold(raw.get("gold", []), head.mode, dims, bad)
    share, gap = _parse_repeats(raw.get("repeats", {}), bad)
    seed = _parse_seed(raw.get("seed"), bad)
    allocation = _parse_allocation(raw.get("allocation", "uniform"), bad)
    adjudication = _parse_adjudication(raw.get("adjudication", {}), head, dims, bad)
    _check_display(raw, bad)
    if problems:
        raise RubricError(problems)
    return Rubric(
        mode=Mode(head.mode),
        overlap=head.overlap,
        dimensions=tuple(dims),
        scenario_dimensions=scenario_dims,
        scenario_weights=weights,
        pairwise_granularity=PairwiseGranularity(head.granularity),
        show_reference=bool(raw.get("show_reference", True)),
        show_criteria=bool(raw.get("show_criteria", True)),
        show_checks=bool(raw.get("show_checks", False)),
        scenario_checks=scenario_checks,
        instructions=str(raw.get("instructions", "")),
        leak_words=leak_words,
        refusal_phrases=refusal_phrases,
        gold=gold,
        repeat_share=share,
        repeat_min_gap=gap,
        seed=seed,
        allocation=allocation,
        adjudication=adjudication,
    )


def _read_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _toml_error_line(str(exc))
        raise RubricError(
            [Problem(source, line, None, f"not valid TOML ({exc}); check quotes, brackets and '=' signs")]
        ) from exc


def _parse_head(raw: dict[str, Any], bad: Bad) -> _Head:
    mode = raw.get("mode", Mode.RATING)
    if mode not in tuple(Mode):
        bad("mode", f'must be "rating" or "pairwise", not {mode!r}')
    overlap = raw.get("overlap", 1)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 1:
        bad("overlap", f"must be a whole number of reviewers per item, at least 1, not {overlap!r}")
        overlap = 1
    granularity = raw.get("pairwise_granularity", PairwiseGranularity.OVERALL)
    if granularity not in PAIRWISE_GRANULARITY:
        bad("pairwise_granularity", f'must be "overall" or "per_dimension", not {granularity!r}')
    return _Head(str(mode), overlap, str(granularity))


def _parse_dimensions(raw_dims: Any, head: _Head, bad: Bad) -> tuple[list[Dimension], set[str]]:
    """The dimensions reviewers answer, and the names the rubric defines (which ``[scenarios]`` may use).

    In pairwise mode with overall granularity (or no dimensions) the one question is "which is better?"."""
    if not isinstance(raw_dims, list):
        bad("dimensions", "must be a list of [[dimensions]] tables")
        raw_dims = []
    if not raw_dims and head.mode == Mode.RATING:
        bad("dimensions", "a rating rubric needs at least one [[dimensions]] table")
    dims: list[Dimension] = []
    named: set[str] = set()
    for i, d in enumerate(raw_dims, start=1):
        where = f"dimensions[{i}]"
        dim = _parse_dimension(d, where, bad, head.mode)
        if dim is None:
            continue
        if dim.name in named:
            bad(f"{where}.name", f"{dim.name!r} is defined twice")
        named.add(dim.name)
        dims.append(dim)
    if head.mode == Mode.PAIRWISE and (head.granularity == PairwiseGranularity.OVERALL or not dims):
        dims = [PAIRWISE_DIMENSION]
    return dims, named


def _parse_scenarios(
    scenarios: Any, head: _Head, named: set[str], bad: Bad
) -> tuple[dict[str, tuple[str, ...]], dict[str, float], dict[str, tuple[dict[str, Any], ...]]]:
    """``[scenarios.NAME]``: the dimensions that apply to a scenario, its composite weight, and the automatic
    checks every output of it goes through (kept as their canonical definitions)."""
    scenario_dims: dict[str, tuple[str, ...]] = {}
    weights: dict[str, float] = {}
    checks: dict[str, tuple[dict[str, Any], ...]] = {}
    if not isinstance(scenarios, dict):
        bad("scenarios", "must be a table of [scenarios.NAME] tables")
        return scenario_dims, weights, checks
    for name, conf in scenarios.items():
        if not isinstance(conf, dict):
            bad(f"scenarios.{name}", "must be a table with 'dimensions', 'weight' and/or 'checks'")
            continue
        if "checks" in conf:
            try:
                parsed = parse_checks(conf["checks"], where=f"scenarios.{name}.checks")
            except CheckDefinitionError as exc:
                bad(exc.field, exc.message)
            else:
                checks[name] = tuple(c.to_json() for c in parsed)
        if "dimensions" in conf:
            names = conf["dimensions"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                bad(f"scenarios.{name}.dimensions", "must be a list of dimension names")
            else:
                if head.pairwise_overall:
                    bad(
                        f"scenarios.{name}.dimensions",
                        'per-scenario dimensions need pairwise_granularity = "per_dimension"',
                    )
                for n in names:
                    if n not in named:
                        bad(f"scenarios.{name}.dimensions", f"{n!r} is not one of the [[dimensions]]")
                scenario_dims[name] = tuple(names)
        if "weight" in conf:
            w = conf["weight"]
            if not isinstance(w, int | float) or isinstance(w, bool) or w < 0:
                bad(f"scenarios.{name}.weight", f"must be a number >= 0, not {w!r}")
            else:
                weights[name] = float(w)
        for key in conf:
            if key not in ("dimensions", "weight", "checks"):
                bad(f"scenarios.{name}.{key}", "unknown setting; use 'dimensions', 'weight' or 'checks'")
    return scenario_dims, weights, checks


def _parse_leak_words(leak_words: Any, bad: Bad) -> tuple[str, ...]:
    if not isinstance(leak_words, list) or not all(isinstance(w, str) and w.strip() for w in leak_words):
        bad("leak_words", "must be a list of non-empty words")
        return ()
    return tuple(w.strip() for w in leak_words)


REFUSAL_PHRASE_MAX = 200  # characters; drift looks for a phrase in an output's first 300 only


def _parse_refusal_phrases(phrases: Any, bad: Bad) -> tuple[str, ...]:
    """``refusal_phrases``: extra phrases that mark a refusal in a comparison's drift table (the default list
    is ``aggregation.drift.DEFAULT_REFUSAL_PHRASES``); matched case-insensitively at an output's start."""
    hint = 'a list of phrases, e.g. refusal_phrases = ["I am not permitted to", "Als KI kann ich"]'
    if not isinstance(phrases, list):
        bad("refusal_phrases", f"must be {hint}, not {phrases!r}")
        return ()
    out = []
    for k, phrase in enumerate(phrases):
        where = f"refusal_phrases[{k}]"
        if not isinstance(phrase, str) or not phrase.strip():
            bad(where, f"must be a non-empty phrase (text in quotes), not {phrase!r}")
        elif len(phrase.strip()) > REFUSAL_PHRASE_MAX:
            bad(where, f"is {len(phrase.strip())} characters long; a refusal phrase has at most {REFUSAL_PHRASE_MAX}")
        elif any(ord(ch) < 32 for ch in phrase):
            bad(where, f"{phrase!r} holds a control character (a line break or tab); write it on one line")
        else:
            out.append(phrase.strip())
    return tuple(dict.fromkeys(out))


def _parse_repeats(repeats: Any, bad: Bad) -> tuple[float, int]:
    """``[repeats]``: the share of items shown twice and the least gap between the two showings."""
    if not isinstance(repeats, dict):
        bad("repeats", "must be a table with 'share' (0 to 0.5) and optional 'min_gap'")
        return 0.0, 5
    share = repeats.get("share", 0.0)
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0 <= share <= 0.5:
        bad("repeats.share", f"must be a number from 0 to 0.5 (the share of items shown twice), not {share!r}")
        share = 0.0
    gap = repeats.get("min_gap", 5)
    if not isinstance(gap, int) or gap < 1:
        bad("repeats.min_gap", f"must be a whole number >= 1, not {gap!r}")
        gap = 5
    return float(share), int(gap)


def _parse_allocation(raw: Any, bad: Bad) -> Allocation:
    """``allocation = "adaptive"``, or the table ``[allocation]`` with ``mode``, ``uniform_share`` (0.05 to 1),
    ``tolerance`` (on the 0-1 overall score, above 0 and below 0.5) and ``close_settled``."""
    if isinstance(raw, str):
        raw = {"mode": raw}
    if not isinstance(raw, dict):
        bad("allocation", 'must be "uniform" or "adaptive", or an [allocation] table with mode = "adaptive"')
        return Allocation()
    for key in raw:
        if key not in ("mode", "uniform_share", "tolerance", "close_settled"):
            bad(
                f"allocation.{key}", "unknown setting; the known ones are close_settled, mode, tolerance, uniform_share"
            )
    mode = raw.get("mode", "uniform")
    if mode not in ALLOCATIONS:
        bad("allocation.mode", f'must be "uniform" or "adaptive", not {mode!r}')
        mode = "uniform"
    share = raw.get("uniform_share", 0.2)
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0.05 <= share <= 1:
        bad(
            "allocation.uniform_share",
            f"must be a number from 0.05 to 1 (the share of samples released at random), not {share!r}; "
            "below 0.05 a scenario the adaptive rule stopped preferring too early would hardly be looked at again",
        )
        share = 0.2
    tolerance = raw.get("tolerance")
    if tolerance is not None and (
        not isinstance(tolerance, int | float) or isinstance(tolerance, bool) or not 0 < tolerance < 0.5
    ):
        bad(
            "allocation.tolerance",
            f"must be a number above 0 and below 0.5 on the 0-1 overall score (0.05 is 5% of the range), "
            f"not {tolerance!r}",
        )
        tolerance = None
    close = raw.get("close_settled", False)
    if not isinstance(close, bool):
        bad("allocation.close_settled", "must be true or false")
        close = False
    return Allocation(
        mode=str(mode),
        uniform_share=float(share),
        tolerance=None if tolerance is None else float(tolerance),
        close_settled=close,
    )


def _parse_adjudication(raw: Any, head: _Head, dims: list[Dimension], bad: Bad) -> Adjudication:
    """The table ``[adjudication]``: ``spread`` (rating mode: the points apart that send an item to the queue,
    above 0), ``minority`` (pairwise mode: the smaller side's least share, above 0 up to 0.5), ``dimensions``
    (the rubric's own names) and ``adjudicators`` (people's names)."""
    known = "adjudicators, dimensions, minority, spread"
    if not isinstance(raw, dict):
        bad("adjudication", f"must be an [adjudication] table with any of {known}")
        return Adjudication()
    for key in raw:
        if key not in ("spread", "minority", "dimensions", "adjudicators"):
            bad(f"adjudication.{key}", f"unknown setting; the known ones are {known}")
    spread = raw.get("spread")
    if spread is not None:
        if head.mode == Mode.PAIRWISE:
            bad("adjudication.spread", "is for rating mode; in pairwise mode opposite verdicts go to the queue")
            spread = None
        elif not isinstance(spread, int | float) or isinstance(spread, bool) or spread <= 0:
            bad("adjudication.spread", f"must be a number above 0 (points apart on the scale, e.g. 3), not {spread!r}")
            spread = None
    minority = raw.get("minority")
    if minority is not None:
        if head.mode != Mode.PAIRWISE:
            bad("adjudication.minority", "is for pairwise mode; in rating mode set spread (points apart)")
            minority = None
        elif not isinstance(minority, int | float) or isinstance(minority, bool) or not 0 < minority <= 0.5:
            bad(
                "adjudication.minority",
                "must be a share above 0 and at most 0.5 (the smaller side's share of the reviewers who picked a "
                f"side, e.g. 0.4: 3-2 goes to the queue, 4-1 does not), not {minority!r}",
            )
            minority = None
    names = [d.name for d in dims] or ["overall"]
    chosen = _names_list(raw.get("dimensions", []), "adjudication.dimensions", bad)
    for name in chosen:
        if name not in names:
            bad("adjudication.dimensions", f"{name!r} is not a dimension of this rubric (it has {', '.join(names)})")
    people = _names_list(raw.get("adjudicators", []), "adjudication.adjudicators", bad)
    return Adjudication(
        spread=None if spread is None else float(spread),
        dimensions=tuple(chosen),
        adjudicators=tuple(people),
        minority=None if minority is None else float(minority),
    )


def _names_list(raw: Any, where: str, bad: Bad) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(x, str) and x.strip() for x in raw):
        bad(where, 'must be a list of names, e.g. ["alice", "bob"]')
        return []
    return [x.strip() for x in raw]


def _parse_seed(seed: Any, bad: Bad) -> int | None:
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        bad("seed", f"must be a whole number >= 0, not {seed!r}")
        return None
    return seed if isinstance(seed, int) else None


def _check_display(raw: dict[str, Any], bad: Bad) -> None:
    """What reviewers are shown besides the outputs: reference, criteria, instructions."""
    for flag in ("show_reference", "show_criteria", "show_checks"):
        if flag in raw and not isinstance(raw[flag], bool):
            bad(flag, "must be true or false")
    if "instructions" in raw and not isinstance(raw["instructions"], str):
        bad("instructions", "must be text")


def load_rubric(path: Path) -> tuple[Rubric, str]:
    """Read a rubric file; returns the rubric and its text (stored with the batch)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RubricError([Problem(str(path), None, None, f"cannot be read ({exc.strerror}); check the path")]) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RubricError([Problem(str(path), line, None, "is not UTF-8 text; save it as UTF-8")]) from exc
    return parse_rubric_text(text, source=str(path)), text


def _toml_error_line(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None


def _parse_dimension(d: Any, where: str, bad: Bad, mode: str) -> Dimension | None:
    """One ``[[dimensions]]`` table, or None when it is too broken to check further (problems recorded)."""
    if not isinstance(d, dict):
        bad(where, "must be a table with name, description, scale and level")
        return None
    name = d.get("name")
    if not isinstance(name, str) or not name.strip():
        bad(f"{where}.name", "missing; every dimension needs a short name")
        return None
    where = f"dimensions.{name}"
    for key in d:
        if key not in DIMENSION_KEYS:
            bad(
                f"{where}.{key}",
                "unknown setting for a dimension (a top-level setting must come before the first [[dimensions]] table)",
            )
    description = d.get("description", "")
    if not isinstance(description, str):
        bad(f"{where}.description", "must be text")
        description = ""
    if mode == Mode.PAIRWISE:
        # In pairwise mode every dimension is answered with left / right / tie / both bad.
        return replace(PAIRWISE_DIMENSION, name=name, description=description)
    scale = d.get("scale")
    if scale not in SCALES:
        bad(f"{where}.scale", f"must be one of {SCALE_NAMES}, not {scale!r}")
        return None
    raw_level = d.get("level")
    level = next((lv for lv in LEVELS if lv == raw_level), None)
    if level is None:
        if raw_level is not None:
            bad(f"{where}.level", f"must be one of {', '.join(LEVELS)}, not {raw_level!r}")
            return None
        level = spec_of(scale).default_level
    higher = d.get("higher_is_better", True)
    spec = spec_of(scale)
    if not isinstance(higher, bool):
        bad(f"{where}.higher_is_better", f"must be true or false, not {higher!r}")
        higher = True
    elif "higher_is_better" in d and not spec.numeric:
        bad(f"{where}.higher_is_better", "applies to scores (likert, binary, continuous), not to categorical choices")
    fields = spec.read(d, level, where, bad)
    if fields is None:
        return None
    return Dimension(
        name=name, description=description, scale=Scale(scale), level=level, higher_is_better=higher, **fields
    )


def _parse_gold(raw: Any, mode: str, dims: list[Dimension], bad: Bad) -> tuple[GoldItem, ...]:
    if not isinstance(raw, list):
        bad("gold", "must be a list of [[gold]] tables")
        return ()
    by_name = {d.name: d for d in dims}
    out: list[GoldItem] = []
    for i, g in enumerate(raw, start=1):
        where = f"gold[{i}]"
        if not isinstance(g, dict):
            bad(where, "must be a table with sample_id, model(s) and expected")
            continue
        sample_id = g.get("sample_id")
        if not isinstance(sample_id, str | int) or isinstance(sample_id, bool):
            bad(f"{where}.sample_id", "missing")
            continue
        if mode == Mode.RATING:
            model = g.get("model")
            if not isinstance(model, str):
                bad(f"{where}.model", "missing; name the model whose output is the gold item")
                continue
            models: tuple[str, ...] = (model,)
        else:
            ms = g.get("models")
            if not isinstance(ms, list) or len(ms) != 2 or not all(isinstance(m, str) for m in ms):
                bad(f"{where}.models", 'a pairwise gold item names two models: models = ["a", "b"]')
                continue
            models = (ms[0], ms[1])
        expected = g.get("expected")
        if not isinstance(expected, dict) or not expected:
            bad(f"{where}.expected", "must be a table of dimension = expected answer, e.g. { correctness = 5 }")
            continue
        exp: dict[str, str] = {}
        for dname, value in expected.items():
            dim = by_name.get(dname)
            if dim is None:
                bad(f"{where}.expected", f"{dname!r} is not one of the dimensions")
                continue
            text = _gold_value(value, mode)
            if not dim.accepts(text):
                bad(f"{where}.expected.{dname}", f"{value!r} is not an allowed answer ({dim.value_hint()})")
                continue
            exp[dname] = text
        out.append(GoldItem(sample_id=str(sample_id), models=models, expected=exp))
    return tuple(out)


def _gold_value(value: Any, mode: str) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if mode == Mode.PAIRWISE and value in ("a", "b"):
        # Gold answers name the models in the order written; "a" is models[0] on the left.
        return PairwiseChoice.LEFT if value == "a" else PairwiseChoice.RIGHT
    return str(value)

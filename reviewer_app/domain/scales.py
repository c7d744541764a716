"""One spec per scale type: everything a scale means, in one class, looked up by the dimension's ``scale``.

A scale's rules used to be ``if/elif`` chains in seven places (the rubric reader, the dimension's checks, the
form, the labels a reviewer reads, agreement's value domain, the ranking's ordinal levels, the charts'
bounds), so a new scale type meant edits in eight modules of four packages. Each place now asks the spec
(as argilla has one validator class per question type). A new scale is a member of ``enums.Scale``, a class
here registered in ``SPECS``, and, if it is answered some other way than by picking one value or typing a
number, its widget in ``ui/components/rating_form.py``.

Specs take the dimension's fields (``min``, ``max``, ``labels``, ``choices``, ``level``) through a small
protocol, so this module needs neither the rubric's dataclass (no import circle with ``rubric.py``) nor
anything outside ``domain``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from reviewer_app.domain.enums import Level, Scale

__all__ = ["SPECS", "Bad", "ScaleSpec", "Scaled", "spec_of"]

Bad = Callable[[str | None, str], None]  # records a problem with a field of the rubric ("dimensions.x.min", …)


class Scaled(Protocol):
    """The fields of a dimension a scale's rules read (``Dimension`` and the report's ``MethodsDimension``)."""

    @property
    def min(self) -> int | float | None: ...
    @property
    def max(self) -> int | float | None: ...


class Dimensional(Scaled, Protocol):
    @property
    def level(self) -> Level: ...
    @property
    def labels(self) -> dict[str, str]: ...
    @property
    def choices(self) -> tuple[str, ...]: ...


class ScaleSpec:
    """The rules of one scale type. Subclasses set the class attributes and override what differs."""

    scale: ClassVar[Scale]
    default_level: ClassVar[Level]
    numeric: ClassVar[bool] = True  # carries a score; categorical answers only get agreement
    typed: ClassVar[bool] = False  # answered by typing a number into a box rather than by picking a value
    # its ends are the scale's own (a Likert's 1 and 5, a binary's 0 and 1), not a cap a rubric chose, so its
    # share of the scale can be averaged with others' into the 0-1 overall
    fixed_ends: ClassVar[bool] = True

    def read(self, raw: Mapping[str, Any], level: Level, where: str, bad: Bad) -> dict[str, Any] | None:
        """The dimension's fields this scale takes from its rubric table (``min``, ``labels``…), checked;
        None when they are too broken to build the dimension (the problems are recorded with ``bad``)."""
        raise NotImplementedError

    def values(self, dim: Dimensional) -> list[str]:
        """Every answer, as stored text, lowest first; empty where they cannot be listed (a continuous scale)."""
        raise NotImplementedError

    def accepts(self, dim: Dimensional, value: str) -> bool:
        """Whether ``value`` (stored text) is an answer on this scale."""
        return value in self.values(dim)

    def hint(self, dim: Dimensional) -> str:
        """The answers the scale takes, in words for a message: "1, 2, 3, 4, 5" or "a number from 0 to 200"."""
        return ", ".join(self.values(dim))

    def form_order(self, dim: Dimensional) -> list[str]:
        """The answers in the order the form offers them."""
        return self.values(dim)

    def label(self, dim: Dimensional, value: str) -> str:
        """What a reviewer reads for a stored value."""
        return value

    def json_value(self, value: str) -> int | float | str:
        """A stored answer as a JSON export writes it: a score as a number (a whole-number scale's as an int,
        a continuous scale's as a float), any other answer as its text. Text that is not a number (which no
        check lets in) stays text rather than failing an export."""
        return value

    def bounds(self, dim: Scaled) -> tuple[float, float] | None:
        """Lowest and highest possible score, where a chart's axis ends; None for answers that are not scores."""
        if dim.min is None or dim.max is None:
            return None
        return float(dim.min), float(dim.max)

    def ordinal_scores(self, dim: Dimensional) -> list[float] | None:
        """The scores as an ordered, listed domain (agreement's values, the ranking's ordinal levels); None
        where the scores cannot be listed or are not scores."""
        return None

    def agreement_domain(self, dim: Dimensional) -> tuple[Level, list[Any] | None]:
        """The level and ordered value domain Krippendorff's alpha uses (None: the values seen)."""
        return dim.level, self.ordinal_scores(dim)

    def dispute_threshold(self, dim: Scaled, spread: float | None) -> tuple[float, bool] | None:
        """When a panel's answers disagree enough for adjudication (``analysis.disputes``): (points, strict),
        disputed at max - min >= points (> when strict); None: any two different answers, and the question is
        looked at only when the rubric's ``[adjudication]`` names it (a binary or categorical answer)."""
        return None


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(kind: type[int] | type[float], value: str) -> int | float | str:
    try:
        return kind(value)
    except ValueError:
        return value


class Likert(ScaleSpec):
    """Whole-number scores from min to max (at most 21 points), each with an optional anchor label."""

    scale = Scale.LIKERT
    default_level = "ordinal"

    def dispute_threshold(self, dim: Scaled, spread: float | None) -> tuple[float, bool] | None:
        """The rubric's ``spread``, else more than half the scale apart in whole points (3 on 1-5, 4 on 1-7)."""
        if spread is not None:
            return spread, False
        lo, hi = self.bounds(dim) or (0.0, 0.0)
        return math.floor((hi - lo) / 2) + 1, False

    def read(self, raw: Mapping[str, Any], level: Level, where: str, bad: Bad) -> dict[str, Any] | None:
        lo, hi = raw.get("min"), raw.get("max")
        if not _whole(lo) or not _whole(hi):
            bad(f"{where}.min/max", "a likert scale needs whole-number min and max, e.g. min = 1, max = 5")
            return None
        assert isinstance(lo, int) and isinstance(hi, int)
        if hi <= lo or hi - lo > 20:
            bad(f"{where}.min/max", f"max must be above min and the scale at most 21 points (got {lo}..{hi})")
            return None
        labels: dict[str, str] = {}
        raw_labels = raw.get("labels", {})
        if not isinstance(raw_labels, dict):
            bad(f"{where}.labels", 'must be a table like { 1 = "wrong", 5 = "right" }')
        else:
            for k, v in raw_labels.items():
                try:
                    score = int(k)
                except ValueError:
                    bad(f"{where}.labels", f"key {k!r} is not a score")
                    continue
                if not lo <= score <= hi:
                    bad(f"{where}.labels", f"score {score} is outside {lo}..{hi}")
                labels[str(score)] = str(v)
        return {"min": lo, "max": hi, "labels": labels}

    def values(self, dim: Dimensional) -> list[str]:
        assert dim.min is not None and dim.max is not None
        return [str(v) for v in range(int(dim.min), int(dim.max) + 1)]

    def label(self, dim: Dimensional, value: str) -> str:
        return f"{value} — {dim.labels[value]}" if value in dim.labels else value

    def ordinal_scores(self, dim: Dimensional) -> list[float] | None:
        return [float(v) for v in self.values(dim)]

    def json_value(self, value: str) -> int | float | str:
        return _number(int, value)


class Binary(ScaleSpec):
    """Yes (1) or no (0); the words shown can be replaced by labels."""

    scale = Scale.BINARY
    default_level = "nominal"

    def read(self, raw: Mapping[str, Any], level: Level, where: str, bad: Bad) -> dict[str, Any] | None:
        raw_labels = raw.get("labels", {})
        if not isinstance(raw_labels, dict):
            return {}
        return {"labels": {str(k): str(v) for k, v in raw_labels.items() if str(k) in ("0", "1")}}

    def values(self, dim: Dimensional) -> list[str]:
        return ["0", "1"]

    def form_order(self, dim: Dimensional) -> list[str]:
        return ["1", "0"]  # "Yes" first reads more naturally

    def label(self, dim: Dimensional, value: str) -> str:
        return dim.labels.get(value, "Yes" if value == "1" else "No")

    def bounds(self, dim: Scaled) -> tuple[float, float] | None:
        return 0.0, 1.0

    def ordinal_scores(self, dim: Dimensional) -> list[float] | None:
        return [0.0, 1.0]

    def json_value(self, value: str) -> int | float | str:
        return _number(int, value)


class Categorical(ScaleSpec):
    """One of two or more named choices: agreement only, never a score."""

    scale = Scale.CATEGORICAL
    default_level = "nominal"
    numeric = False

    def read(self, raw: Mapping[str, Any], level: Level, where: str, bad: Bad) -> dict[str, Any] | None:
        choices = raw.get("choices")
        if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) for c in choices):
            bad(f"{where}.choices", 'a categorical scale needs a list of at least two choices, e.g. ["yes", "no"]')
            return None
        if len(set(choices)) != len(choices):
            bad(f"{where}.choices", "has the same choice twice")
        if level in ("interval", "ratio"):
            bad(f"{where}.level", f"a categorical scale cannot be {level}; use nominal or ordinal")
        return {"choices": tuple(choices)}

    def values(self, dim: Dimensional) -> list[str]:
        return list(dim.choices)

    def bounds(self, dim: Scaled) -> tuple[float, float] | None:
        return None

    def agreement_domain(self, dim: Dimensional) -> tuple[Level, list[Any] | None]:
        return ("ordinal" if dim.level == "ordinal" else "nominal"), list(dim.choices)


class Continuous(ScaleSpec):
    """Any finite number from min to max (MQM error scores, 0-100 direct assessment), interval or ratio."""

    scale = Scale.CONTINUOUS
    default_level = "interval"
    typed = True
    fixed_ends = False

    def dispute_threshold(self, dim: Scaled, spread: float | None) -> tuple[float, bool] | None:
        """The rubric's ``spread``, else more than half the range apart."""
        if spread is not None:
            return spread, False
        lo, hi = self.bounds(dim) or (0.0, 0.0)
        return (hi - lo) / 2, True

    def read(self, raw: Mapping[str, Any], level: Level, where: str, bad: Bad) -> dict[str, Any] | None:
        lo, hi = raw.get("min"), raw.get("max")
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in (lo, hi))
        if not numbers:
            bad(f"{where}.min/max", "a continuous scale needs numeric min and max, e.g. min = 0.0, max = 100.0")
            return None
        assert isinstance(lo, int | float) and isinstance(hi, int | float)
        if hi <= lo:
            bad(f"{where}.min/max", f"max must be above min (got {lo}..{hi})")
            return None
        if level not in ("interval", "ratio"):
            bad(f"{where}.level", f"a continuous scale is interval or ratio, not {level}")
            return None
        if level == "ratio" and lo < 0:
            bad(f"{where}.level", f"a ratio scale needs min >= 0 (a true zero), not {lo}")
            return None
        if "labels" in raw:
            bad(f"{where}.labels", "a continuous scale has no labels; say what the numbers mean in the description")
        return {"min": lo, "max": hi}

    def values(self, dim: Dimensional) -> list[str]:
        return []

    def accepts(self, dim: Dimensional, value: str) -> bool:
        """Any finite number from min to max ("12.5", "3", "1e1")."""
        assert dim.min is not None and dim.max is not None
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return math.isfinite(number) and dim.min <= number <= dim.max

    def hint(self, dim: Dimensional) -> str:
        return f"a number from {dim.min:g} to {dim.max:g}"

    def json_value(self, value: str) -> int | float | str:
        number = _number(float, value)
        return number if isinstance(number, str) or math.isfinite(number) else value


SPECS: Mapping[Scale, ScaleSpec] = {spec.scale: spec for spec in (Likert(), Binary(), Categorical(), Continuous())}


def spec_of(scale: Scale | str) -> ScaleSpec:
    """The spec of a scale type (``Scale`` or its stored text)."""
    return SPECS[Scale(scale)]


_MISSING = [s for s in Scale if s not in SPECS]
if _MISSING:  # a member added to Scale without its spec fails at import, not on some page much later
    raise RuntimeError(f"scale type(s) without a spec in domain/scales.py: {', '.join(_MISSING)}")

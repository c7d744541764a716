"""One spec per scale type: each scale's rules in its class, and no scale chains left anywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reviewer_app.domain.enums import Scale
from reviewer_app.domain.rubric import Dimension
from reviewer_app.domain.scales import SPECS, spec_of

ROOT = Path(__file__).resolve().parents[2]
LIKERT = Dimension("q", "", Scale.LIKERT, "ordinal", min=1, max=5, labels={"1": "wrong", "5": "right"})
BINARY = Dimension("ok", "", Scale.BINARY, "nominal", labels={"1": "Follows"})
CATEGORICAL = Dimension("tone", "", Scale.CATEGORICAL, "ordinal", choices=("low", "mid", "high"))
CONTINUOUS = Dimension("mqm", "", Scale.CONTINUOUS, "ratio", min=0, max=25, higher_is_better=False)


def test_every_scale_type_has_a_spec():
    assert set(SPECS) == set(Scale)
    assert all(spec_of(str(s)).scale is s for s in Scale)


@pytest.mark.parametrize(
    ("dim", "values", "form", "hint", "bounds", "domain"),
    [
        (
            LIKERT,
            ["1", "2", "3", "4", "5"],
            ["1", "2", "3", "4", "5"],
            "1, 2, 3, 4, 5",
            (1.0, 5.0),
            [1.0, 2.0, 3.0, 4.0, 5.0],
        ),
        (BINARY, ["0", "1"], ["1", "0"], "0, 1", (0.0, 1.0), [0.0, 1.0]),
        (CATEGORICAL, ["low", "mid", "high"], ["low", "mid", "high"], "low, mid, high", None, ["low", "mid", "high"]),
        (CONTINUOUS, [], [], "a number from 0 to 25", (0.0, 25.0), None),
    ],
)
def test_a_scale_answers_for_its_dimension(dim, values, form, hint, bounds, domain):
    spec = spec_of(dim.scale)
    assert dim.allowed_values() == values
    assert spec.form_order(dim) == form
    assert dim.value_hint() == hint
    assert spec.bounds(dim) == bounds
    assert spec.agreement_domain(dim) == (dim.level, domain)
    assert dim.numeric() is (dim.scale != Scale.CATEGORICAL)
    assert spec.typed is (dim.scale == Scale.CONTINUOUS)


def test_labels_a_reviewer_reads():
    assert [spec_of(Scale.LIKERT).label(LIKERT, v) for v in ("1", "3")] == ["1 — wrong", "3"]
    assert [spec_of(Scale.BINARY).label(BINARY, v) for v in ("1", "0")] == ["Follows", "No"]
    assert spec_of(Scale.CATEGORICAL).label(CATEGORICAL, "mid") == "mid"


@pytest.mark.parametrize(
    ("value", "ok"), [("12.5", True), ("0", True), ("1e1", True), ("25.0001", False), ("nan", False), ("x", False)]
)
def test_a_continuous_scale_takes_any_finite_number_in_range(value, ok):
    assert CONTINUOUS.accepts(value) is ok


def test_categorical_agreement_is_never_interval():
    nominal = Dimension("tone", "", Scale.CATEGORICAL, "interval", choices=("a", "b"))
    assert spec_of(Scale.CATEGORICAL).agreement_domain(nominal) == ("nominal", ["a", "b"])


def _scale_chains(path: Path) -> list[int]:
    """Lines comparing against a scale member (``dim.scale == Scale.BINARY``, ``in (Scale.LIKERT, …)``)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                members = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                if any(
                    isinstance(m, ast.Attribute) and isinstance(m.value, ast.Name) and m.value.id == "Scale"
                    for m in members
                ):
                    lines.append(node.lineno)
    return lines


def test_no_scale_rules_outside_the_specs():
    """A new scale type touches its spec, not chains scattered over the packages: nothing but
    ``domain/scales.py`` compares a dimension's scale against a member of ``Scale``."""
    found = {
        f"{p.relative_to(ROOT)}:{line}"
        for p in (ROOT / "reviewer_app").rglob("*.py")
        if p.name != "scales.py"
        for line in _scale_chains(p)
    }
    assert not found, f"scale rules outside domain/scales.py (give the spec a method instead): {sorted(found)}"


def test_the_chain_finder_finds_a_chain(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f(dim):\n    return dim.scale == Scale.BINARY or dim.scale in (Scale.LIKERT,)\n")
    assert _scale_chains(probe) == [2, 2]

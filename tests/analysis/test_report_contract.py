"""The typed report and schema.json describe the same thing; aggregation stays pure statistics."""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
import types
import typing
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import jsonschema
import numpy as np
import pytest

from reviewer_app.analysis.report import build_report
from reviewer_app.domain import report, report_panel, report_rankings
from reviewer_app.domain.report import Report, report_to_dict
from reviewer_app.domain.report_fields import OMIT_IF_NONE
from reviewer_app.reporting.formats import load_schema, render
from tests.analysis.test_report import _rating_batch
from tests.support.simulated_panels import pairwise_panel

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema()
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


# The modules of the report's own types (its sections, and the top-level Report); the benchmark and production
# types live in their own modules, and the report's fields hold them.
SECTION_MODULES = (report, report_rankings, report_panel)


def _held(tp: Any) -> list[type]:
    """The dataclasses a type annotation names (through unions, tuples and dicts)."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return [tp]
    return [cls for arg in typing.get_args(tp) for cls in _held(arg)]


def _report_types() -> dict[str, type]:
    """Every type the report is made of, by name: Report, and each dataclass its fields hold, however deep."""
    found: dict[str, type] = {}
    todo: list[type] = [Report]
    while todo:
        cls = todo.pop()
        if cls.__name__ not in found:
            found[cls.__name__] = cls
            hints = typing.get_type_hints(cls)  # the fields' (not the ClassVar COLUMNS')
            todo += [held for f in dataclasses.fields(cls) for held in _held(hints[f.name])]
    return found


REPORT_TYPES = _report_types()


def _object_defs() -> list[tuple[str, dict[str, Any]]]:
    """Every object the schema describes, named by the type it mirrors (the root object is Report)."""
    defs = [(name, node) for name, node in SCHEMA["$defs"].items() if node.get("type") == "object"]
    return [("Report", SCHEMA), *defs]


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        node = SCHEMA["$defs"][name] if name != "#" else SCHEMA
    return node


def _omitted(field: dataclasses.Field[Any]) -> bool:
    return bool(field.metadata.get(OMIT_IF_NONE))


def _json_types(node: dict[str, Any]) -> set[str]:
    if "type" in node:
        return set(node["type"]) if isinstance(node["type"], list) else {node["type"]}
    values = node.get("enum", [node["const"]] if "const" in node else [])
    return {JSON_TYPES[type(v)] if v is not None else "null" for v in values}


def _problems(node: dict[str, Any], tp: Any, where: str, *, nullable: bool = True) -> list[str]:
    """Why the schema ``node`` does not describe values of the Python type ``tp`` (empty if it does)."""
    node = _resolve(node)
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        out = (
            [] if not nullable or "null" in _json_types(node) else [f"{where}: may be None but the schema has no null"]
        )
        return out + _problems(node, rest[0], where, nullable=nullable)
    if dataclasses.is_dataclass(tp):
        expected = SCHEMA if tp is Report else SCHEMA["$defs"].get(tp.__name__)
        return [] if node is expected else [f"{where}: should refer to #/$defs/{tp.__name__}"]
    if typing.get_origin(tp) is tuple:
        if "array" not in _json_types(node):
            return [f"{where}: a tuple but not an array in the schema"]
        return _problems(node["items"], args[0], f"{where}[]")
    if typing.get_origin(tp) is dict:
        if "object" not in _json_types(node):
            return [f"{where}: a dict but not an object in the schema"]
        return _problems(node["additionalProperties"], args[1], f"{where}{{}}")
    if typing.get_origin(tp) is Literal or (isinstance(tp, type) and issubclass(tp, StrEnum)):
        values = set(args) if typing.get_origin(tp) is Literal else {m.value for m in tp}
        return [] if set(node.get("enum", [])) == values else [f"{where}: enum {node.get('enum')} != {sorted(values)}"]
    if JSON_TYPES.get(tp) not in _json_types(node):
        return [f"{where}: {tp.__name__} but the schema says {sorted(_json_types(node))}"]
    return []


@pytest.mark.parametrize(("name", "node"), _object_defs(), ids=[name for name, _ in _object_defs()])
def test_schema_objects_mirror_the_report_types(name, node):
    cls = REPORT_TYPES.get(name)
    assert cls is not None and dataclasses.is_dataclass(cls), f"schema object {name} is no type the report holds"
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    properties = node["properties"]
    assert set(properties) - set(fields) == set(), "documented in schema.json but not a field"
    assert set(fields) - set(properties) == set(), "a field that schema.json does not document"
    for required in node.get("required", []):
        # Required means always present: a field left out while None cannot be required (None itself is
        # written as null, which the property's own schema must then allow; checked below).
        assert not _omitted(fields[required]), f"{name}.{required} is required but left out when None"
    problems = [
        p
        for field, f in fields.items()
        for p in _problems(properties[field], hints[field], field, nullable=not _omitted(f))
    ]
    assert problems == [], "\n".join(problems)


def test_every_report_type_is_in_the_schema():
    described = {name for name, _ in _object_defs()}
    # Every dataclass of the report's modules is a part of it (none is left over), and so are the benchmark
    # and production types its fields hold.
    defined = {
        name
        for module in SECTION_MODULES
        for name, value in vars(module).items()
        if dataclasses.is_dataclass(value) and value.__module__ == module.__name__
    }
    assert defined <= set(REPORT_TYPES)
    assert set(REPORT_TYPES) == described


def test_table_columns_name_fields_of_their_row():
    for name, cls in REPORT_TYPES.items():
        columns = getattr(cls, "COLUMNS", None)
        if columns is not None:
            fields = {f.name for f in dataclasses.fields(cls)}
            assert {c.name for c in columns} <= fields, name


def _pairwise_report() -> Report:
    ratings, outputs, rubric = pairwise_panel(
        np.random.default_rng(1), {"x": {"A": 0.5, "B": -0.5}, "y": {"A": 0.0, "B": 0.2}}, n_samples=20, n_reviewers=3
    )
    return build_report(ratings, outputs, rubric, batch="duel", seed=5, rounds=200)


@pytest.mark.parametrize("mode", ["rating", "pairwise"])
def test_typed_report_round_trips_to_json_that_validates(mode):
    if mode == "rating":
        ratings, outputs, rubric = _rating_batch()
        report = build_report(ratings, outputs, rubric, batch="pilot", seed=5, rounds=200)
    else:
        report = _pairwise_report()
    as_dict = report_to_dict(report)
    jsonschema.Draft202012Validator(SCHEMA).validate(as_dict)
    assert json.loads(render(report, "json")) == as_dict
    # Left out, not null: the other mode's position measure, and win rates outside pairwise mode.
    assert ("position_bias" in as_dict["beside"]) == (mode == "pairwise")
    assert ("position_effect" in as_dict["beside"]) == (mode == "rating")
    assert ("win_rates" in as_dict["overall"]) == (mode == "pairwise")


def test_reviewers_table_columns_are_described_once():
    report = _pairwise_report()
    md, html = render(report, "md"), render(report, "html")
    assert "| reviewer | ratings | leniency | alpha change without | gold | self-consistency | s/item | flagged |" in md
    headers = "".join(f"<th>{c.header}</th>" for c in report_panel.ReviewerRow.COLUMNS)
    assert headers in html


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize(
    ("package", "ours_allowed", "others_allowed"),
    [
        ("analysis", ("reviewer_app.analysis", "reviewer_app.domain"), {"numpy", "pandas", "krippendorff", "scipy"}),
        ("domain", ("reviewer_app.domain",), None),  # None: any third-party package
    ],
)
def test_packages_import_only_what_they_may(package, ours_allowed, others_allowed):
    ours = ("reviewer_app", "storage", "tests")
    bad = {}
    paths = sorted((ROOT / "reviewer_app" / package).glob("*.py"))
    assert len(paths) > 3, f"reviewer_app/{package} has no modules: has it moved?"
    for path in paths:
        for name in _imports(path):
            top = name.split(".")[0]
            if name.startswith(ours_allowed) or top in sys.stdlib_module_names:
                continue
            if top not in ours and (others_allowed is None or top in others_allowed):
                continue
            bad.setdefault(path.name, []).append(name)
    assert bad == {}

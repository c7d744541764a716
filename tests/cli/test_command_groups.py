"""The CLI is built one way: every command in a command group module of ``cli/``, registered by ``main`` in the
order of ``blind-review --help``, through ``_common.add_command`` (so every handler has the one error
handling). The tests read the parser ``main`` builds, each group registered on its own, and the source."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path
from types import ModuleType
from typing import cast

from reviewer_app.cli.main import COMMAND_GROUPS, build_parser

CLI = Path(__file__).resolve().parents[2] / "reviewer_app" / "cli"

# Each group and its commands, in the order `blind-review --help` lists them. A new command goes in its group
# here too; moving or reordering one is a change users see, so it shows up in this list.
EXPECTED: dict[str, list[str]] = {
    "reviewer_app.cli.database": ["init"],
    "reviewer_app.cli.batches": [
        "load-batch",
        "list-batches",
        "leaks",
        "archive-batch",
        "restore-batch",
        "set-titles",
        "delete-batch",
    ],
    "reviewer_app.cli.people": ["add-reviewer", "new-link", "revoke", "api-token"],
    "reviewer_app.cli.review": ["assign", "batch-reviewers", "open-batch", "close-batch"],
    "reviewer_app.cli.ratings": ["import-ratings", "export-ratings", "export-preferences"],
    "reviewer_app.cli.serve": ["serve", "demo"],
    "reviewer_app.cli.report": ["report", "disputes"],
    "reviewer_app.cli.plan": ["plan", "allocation"],
    "reviewer_app.cli.compare": ["compare"],
    "reviewer_app.cli.history": ["history"],
    "reviewer_app.cli.feedback": ["import-feedback", "monitor"],
    "reviewer_app.cli.webhooks": ["add-webhook", "webhooks", "remove-webhook", "test-webhook", "deliver-webhooks"],
    "reviewer_app.cli.generation": ["build-eval-set", "import-traces", "generate", "rerun"],
    "reviewer_app.cli.judge": ["judge"],
}
NOT_GROUPS = {"__init__", "__main__", "_common", "main"}


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return cast(dict[str, argparse.ArgumentParser], sub.choices)


def test_help_lists_every_command_in_the_agreed_order() -> None:
    expected = [name for names in EXPECTED.values() for name in names]
    assert list(_commands(build_parser())) == expected
    listed = [
        line.split()[0]
        for line in build_parser().format_help().splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    ]
    assert listed == expected


def test_every_command_is_defined_and_handled_in_its_group() -> None:
    """Each group, registered into a parser of its own, adds exactly its commands, run by its own functions
    wrapped in the shared error handling; ``main`` adds none of its own (the two lists are the same)."""
    assert [cast(ModuleType, g).__name__ for g in COMMAND_GROUPS] == list(EXPECTED)
    for group in COMMAND_GROUPS:
        module = cast(ModuleType, group).__name__
        parser = argparse.ArgumentParser()
        group.register(parser.add_subparsers(dest="command"))
        commands = _commands(parser)
        assert list(commands) == EXPECTED[module]
        for name, command in commands.items():
            handler = command.get_default("handler")
            assert handler is not None, f"{name}: no handler"
            inner = getattr(handler, "__wrapped__", None)
            assert inner is not None, f"{name}: its handler is not wrapped by _common.guarded (use add_command)"
            assert inner.__module__ == module, f"{name}: handled by {inner.__module__}, not its group {module}"


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [
        n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Import | ast.ImportFrom)
    ]


def test_every_module_of_cli_is_a_registered_group_and_adds_commands_only_through_add_command() -> None:
    groups = {p.stem for p in CLI.glob("*.py")} - NOT_GROUPS
    assert {f"reviewer_app.cli.{g}" for g in groups} == set(EXPECTED), "a module of cli/ that main does not register"
    for path in sorted(CLI.glob("*.py")):
        calls = [
            n
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_parser"
        ]
        assert path.stem == "_common" or not calls, f"{path.name} calls add_parser: add commands with add_command"


def test_command_modules_import_only_the_shared_helpers_of_cli() -> None:
    """No group imports ``main`` or another group, nor anything private of ``_common``: groups stand alone."""
    for path in sorted(CLI.glob("*.py")):
        if path.stem in ("main", "__main__"):
            continue
        for node in _imports(path):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
                assert not any(n.startswith("reviewer_app.cli") for n in names), f"{path.name}: import {names}"
                continue
            if node.module is None or not node.module.startswith("reviewer_app.cli"):
                continue
            assert node.module == "reviewer_app.cli._common", f"{path.name} imports {node.module}"
            private = [a.name for a in node.names if a.name.startswith("_")]
            assert not private, f"{path.name} imports private {private} of _common"

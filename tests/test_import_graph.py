"""The layers, read from the source: which module may import which (blindness by structure).

The arrows point one way: ``views -> services -> storage``, everyone -> ``domain``. The reviewer's page in
particular must not be able to reach anything that reads model identities or unblinded ratings: not by a
direct import, and not through a chain of imports either. The graph is built with ``ast`` from the files
(nothing is imported), counting every import statement, also those inside functions, since a lazy import
runs all the same; only imports under ``if TYPE_CHECKING:`` are left out, since they never run. Importing
``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``; the graph has those edges too. A failure names
the chain of imports, file and line of each step.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("reviewer_app", "storage")

# What the reviewer's page must never reach: the unblinded side of the application.
UNBLINDING = (
    "reviewer_app.aggregation",
    "reviewer_app.reporting",
    "reviewer_app.services.batch_reports",
    "reviewer_app.services.ratings_io",
)
REVIEW_PAGE = ("reviewer_app.views.review", "reviewer_app.components")
STREAMLIT_ALLOWED = ("reviewer_app.views", "reviewer_app.components", "reviewer_app.app", "reviewer_app.server")


@dataclass(frozen=True)
class Edge:
    target: str  # a module of ours, or the top-level name of anything else ("streamlit", "json")
    where: str  # file:line of the import statement


def _under(name: str, prefixes: str | tuple[str, ...]) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@cache
def modules() -> dict[str, Path]:
    """Every module of ours, by dotted name (a package is its ``__init__``)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@cache
def graph() -> dict[str, tuple[Edge, ...]]:
    """module -> what it imports: our modules (with the packages whose ``__init__`` that runs) and the
    top-level names of everything else."""
    ours = modules()

    def targets(name: str) -> list[str]:
        if name.split(".")[0] not in PACKAGES:
            return [name.split(".")[0]]
        parts = name.split(".")
        out = [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in ours]
        return out or [name]

    edges: dict[str, tuple[Edge, ...]] = {}
    for module, path in ours.items():
        found: list[Edge] = []
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(ROOT))
        type_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in type_only:  # `if TYPE_CHECKING:` imports never run: they are for the type checker
                continue
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, node, path.name == "__init__.py")
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` only mod.
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in ours else base for a in node.names]
            for name in names:
                found += [Edge(t, f"{where}:{node.lineno}") for t in targets(name) if t != module]
        edges[module] = tuple(dict.fromkeys(found))
    return edges


def chain(path: list[tuple[str, Edge | None]]) -> str:
    """``a -> b (file:line) -> c (file:line)``."""
    return " -> ".join(m if e is None else f"{m} ({e.where})" for m, e in path)


def reach(
    starts: list[str], follow: Callable[[str], bool] = lambda m: True
) -> dict[str, list[tuple[str, Edge | None]]]:
    """Every module reachable from ``starts`` (through modules for which ``follow`` is true), each with the
    shortest import chain that gets there."""
    ours = modules()
    paths: dict[str, list[tuple[str, Edge | None]]] = {s: [(s, None)] for s in starts}
    todo = deque(starts)
    while todo:
        module = todo.popleft()
        if not follow(module) and module not in starts:
            continue
        for edge in graph().get(module, ()):
            if edge.target in ours and edge.target not in paths:
                paths[edge.target] = [*paths[module], (edge.target, edge)]
                todo.append(edge.target)
    return paths


def _direct(where: str | tuple[str, ...], forbidden: Callable[[str], bool]) -> list[str]:
    return [
        f"{module} imports {edge.target} ({edge.where})"
        for module, edges in graph().items()
        if _under(module, where)
        for edge in edges
        if forbidden(edge.target)
    ]


def test_the_graph_sees_every_module_and_resolves_imports() -> None:
    found = modules()
    assert "reviewer_app.views.review" in found and "storage.engine" in found and "reviewer_app" in found
    app = {e.target for e in graph()["reviewer_app.app"]}
    assert {"streamlit", "reviewer_app.views.review", "reviewer_app.services.reviewers"} <= app
    # The lead's results page does show the report: the search below must find that chain.
    assert any(_under(m, UNBLINDING) for m in reach(["reviewer_app.views.results"]))


def _ours_except(allowed: tuple[str, ...]) -> Callable[[str], bool]:
    # "reviewer_app" alone is the (empty) package __init__ that any import of reviewer_app.* runs.
    return lambda t: _under(t, PACKAGES) and t != "reviewer_app" and not _under(t, allowed)


def test_domain_depends_on_nothing_of_ours() -> None:
    bad = _direct("reviewer_app.domain", _ours_except(("reviewer_app.domain",)))
    assert not bad, "reviewer_app/domain may import only reviewer_app.domain:\n  " + "\n  ".join(bad)


def test_aggregation_depends_only_on_domain() -> None:
    bad = _direct("reviewer_app.aggregation", _ours_except(("reviewer_app.aggregation", "reviewer_app.domain")))
    assert not bad, "reviewer_app/aggregation may import only reviewer_app.domain of ours:\n  " + "\n  ".join(bad)


def _page_modules() -> list[str]:
    return [m for m in modules() if _under(m, REVIEW_PAGE)]


def test_review_page_imports_nothing_unblinding_directly() -> None:
    """views/review.py and the components, and the views and components they import, import neither the
    unblinded side of the application nor storage."""
    on_page = reach(_page_modules(), follow=lambda m: _under(m, ("reviewer_app.views", "reviewer_app.components")))
    bad = [
        f"{chain([*path, (edge.target, edge)])}"
        for module, path in sorted(on_page.items())
        if _under(module, ("reviewer_app.views", "reviewer_app.components"))
        for edge in graph()[module]
        if _under(edge.target, (*UNBLINDING, "storage"))
    ]
    assert not bad, "the review page imports what it must not:\n  " + "\n  ".join(bad)


def test_review_page_cannot_reach_anything_unblinding() -> None:
    """Nothing the review page imports, however indirectly, is aggregation, reporting or the unblinded
    exports (services may use storage; they may not pull in the statistics or the exports)."""
    bad = [chain(path) for module, path in sorted(reach(_page_modules()).items()) if _under(module, UNBLINDING)]
    assert not bad, "the review page reaches unblinded code through:\n  " + "\n  ".join(bad)


def test_only_the_pages_import_streamlit() -> None:
    bad = [
        f"{module} imports streamlit ({edge.where})"
        for module, edges in graph().items()
        if not _under(module, STREAMLIT_ALLOWED)
        for edge in edges
        if edge.target == "streamlit"
    ]
    assert not bad, "only views/, components/ and app.py may import streamlit:\n  " + "\n  ".join(bad)


def test_views_never_touch_the_database_layer() -> None:
    bad = _direct("reviewer_app.views", lambda t: t in ("sqlmodel", "sqlalchemy") or _under(t, "storage"))
    assert not bad, "views go through services, never sqlmodel, sqlalchemy or storage:\n  " + "\n  ".join(bad)

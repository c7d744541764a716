"""The house's plan, read from the source: which package may import which (blindness by structure).

Each capability is a package of ``reviewer_app`` (see docs/architecture.md), and the packages form a layered
graph with no circle: :data:`ALLOWED` lists, for each, the packages of ours it may import, and a test finds any
circle among packages. The reviewer's page in particular must not be able to reach anything that reads model
identities or unblinded ratings: not by a direct import, and not through a chain of imports either, down to the
storage repositories (``storage/repositories/<capability>``, which follow the same arrows). The graph is built
with ``ast`` from the files (nothing is imported), counting every import statement, also those inside
functions, since a lazy import runs all the same, and those under ``if TYPE_CHECKING:``: they never run, but a
type-only import is still an arrow a reader follows and a promise of what the module works with, so the
layering and the blindness rules count them alike. Importing ``a.b.c`` also runs ``a/__init__.py`` and
``a/b/__init__.py``; the graph has those edges too. A failure names the chain of imports, file and line of
each step.
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
    "reviewer_app.analysis",
    "reviewer_app.reporting",
    "reviewer_app.results",
    "reviewer_app.ratings",
    "reviewer_app.exports",
    "reviewer_app.versions",
    "reviewer_app.production",
)
# Each package of ours and the packages of ours it may import (besides itself). Listed from the bottom up:
# a package may import only packages listed above it, so no circle can form (test below).
BASE = ("reviewer_app.domain", "reviewer_app.errors", "reviewer_app.settings", "storage")  # what services stand on
ALLOWED: dict[str, tuple[str, ...]] = {
    "reviewer_app.errors": (),
    "reviewer_app.domain": (),
    "reviewer_app.settings": ("reviewer_app.errors",),
    "storage": ("reviewer_app.domain", "reviewer_app.errors"),
    # What the REST API and its client say to each other, and the client: a pipeline's process needs nothing else.
    "reviewer_app.wire": ("reviewer_app.errors",),
    "reviewer_app.client": ("reviewer_app.errors", "reviewer_app.wire"),
    "reviewer_app.reporting": ("reviewer_app.domain",),
    "reviewer_app.analysis": ("reviewer_app.domain",),
    "reviewer_app.generation": ("reviewer_app.domain", "reviewer_app.errors", "reviewer_app.settings"),
    "reviewer_app.people": BASE,
    # Webhooks: the outbox every service may emit to (loads, comparisons, the monitor, the watcher in results),
    # signed with the wire's scheme; it reads no ratings or model names.
    "reviewer_app.webhooks": (*BASE, "reviewer_app.wire"),
    "reviewer_app.batches": (*BASE, "reviewer_app.generation", "reviewer_app.people", "reviewer_app.webhooks"),
    "reviewer_app.review": (*BASE, "reviewer_app.people", "reviewer_app.batches"),
    # The judge's run (it tells the webhooks when it ends); its prompt and answer schema stand on much less
    # (JUDGE_PROMPT, below).
    "reviewer_app.judge": (*BASE, "reviewer_app.generation", "reviewer_app.batches", "reviewer_app.review",
                           "reviewer_app.webhooks"),
    "reviewer_app.ratings": (*BASE, "reviewer_app.batches", "reviewer_app.review", "reviewer_app.judge"),
    # Preference records: the panel's verdicts (analysis' scoring rules) on the batch's texts.
    "reviewer_app.exports": (*BASE, "reviewer_app.analysis", "reviewer_app.batches"),
    "reviewer_app.production": (*BASE, "reviewer_app.analysis", "reviewer_app.reporting", "reviewer_app.batches",
                                "reviewer_app.webhooks"),
    "reviewer_app.results": (
        *BASE, "reviewer_app.analysis", "reviewer_app.reporting", "reviewer_app.batches", "reviewer_app.production",
        "reviewer_app.judge", "reviewer_app.webhooks",
    ),
    # Adjudication: the report's own rule of what is disputed (analysis, on the results' ratings frame), shown blind
    # as the reviewer's page shows an item (review's blind view).
    "reviewer_app.adjudication": (*BASE, "reviewer_app.analysis", "reviewer_app.batches", "reviewer_app.review",
                                  "reviewer_app.results"),
    "reviewer_app.versions": (
        *BASE, "reviewer_app.analysis", "reviewer_app.reporting", "reviewer_app.batches", "reviewer_app.generation",
        "reviewer_app.results", "reviewer_app.webhooks",
    ),
    "reviewer_app.demo": (*BASE, "reviewer_app.batches", "reviewer_app.people", "reviewer_app.review",
                          "reviewer_app.production", "reviewer_app.judge", "reviewer_app.ratings"),
}  # fmt: skip
# May import any package of ours; nothing imports them (the pages' server mounts the REST API: front end to front end).
FRONT_ENDS = ("reviewer_app.ui", "reviewer_app.cli", "reviewer_app.api")

REVIEW_PAGE = ("reviewer_app.ui.views.review", "reviewer_app.ui.components")
# The reviewer's side: the page and the services it stands on, every module of them (also one the page does not
# import today), and what it must never reach in storage: the repositories of the unblinded capabilities, which
# read model names (the export's ``export_chunks``, the report's and comparison's frames, a model's history,
# production feedback, the demo's ``shown_models``). The rooms of storage mirror the packages of reviewer_app.
REVIEW_SIDE = (*REVIEW_PAGE, "reviewer_app.review", "reviewer_app.people")
REPOSITORIES = "storage.repositories"
UNBLINDED_REPOSITORIES = tuple(
    f"{REPOSITORIES}.{package.rsplit('.', 1)[1]}" for package in (*UNBLINDING, "reviewer_app.demo")
)
# The LLM judge's prompt and answer schema: built from the reviewer's blind view, they must reach no more than a
# reviewer's page does, and less: the domain's types, the errors and the settings (the data directory's images).
JUDGE_PROMPT = ("reviewer_app.judge.prompt", "reviewer_app.judge.schema")
JUDGE_PROMPT_MAY_REACH = ("reviewer_app.judge", "reviewer_app.domain", "reviewer_app.errors", "reviewer_app.settings")
STREAMLIT_ALLOWED = (
    "reviewer_app.ui.views",
    "reviewer_app.ui.components",
    "reviewer_app.ui.app",
    "reviewer_app.ui.server",
)


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
def graph(*, with_type_only: bool = False) -> dict[str, tuple[Edge, ...]]:
    """module -> what it imports: our modules (with the packages whose ``__init__`` that runs) and the
    top-level names of everything else; imports under ``if TYPE_CHECKING:`` only ``with_type_only``."""
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
            if id(node) in type_only and not with_type_only:  # they never run: they are for the type checker
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
    starts: list[str], follow: Callable[[str], bool] = lambda m: True, *, with_type_only: bool = True
) -> dict[str, list[tuple[str, Edge | None]]]:
    """Every module reachable from ``starts`` (through modules for which ``follow`` is true), each with the
    shortest import chain that gets there; type-only imports count unless ``with_type_only=False``."""
    ours = modules()
    paths: dict[str, list[tuple[str, Edge | None]]] = {s: [(s, None)] for s in starts}
    todo = deque(starts)
    while todo:
        module = todo.popleft()
        if not follow(module) and module not in starts:
            continue
        for edge in graph(with_type_only=with_type_only).get(module, ()):
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
    assert "reviewer_app.ui.views.review" in found and "storage.engine" in found and "reviewer_app" in found
    app = {e.target for e in graph()["reviewer_app.ui.app"]}
    assert {"streamlit", "reviewer_app.ui.views.review", "reviewer_app.people.people"} <= app
    # The lead's results page does show the report: the search below must find that chain.
    assert any(_under(m, UNBLINDING) for m in reach(["reviewer_app.ui.views.results"]))
    # ... and reads it from the results' repositories, which the reviewer's side must not reach.
    assert any(_under(m, UNBLINDED_REPOSITORIES) for m in reach(["reviewer_app.ui.views.results"]))
    # Type-only imports are arrows too: the review page's ``Engine`` is one.
    runtime = {e.target for e in graph()["reviewer_app.ui.views.review"]}
    typed = {e.target for e in graph(with_type_only=True)["reviewer_app.ui.views.review"]}
    assert "sqlalchemy" in typed - runtime


def _ours_except(allowed: tuple[str, ...]) -> Callable[[str], bool]:
    # "reviewer_app" alone is the (empty) package __init__ that any import of reviewer_app.* runs.
    return lambda t: _under(t, PACKAGES) and t != "reviewer_app" and not _under(t, allowed)


def test_domain_depends_on_nothing_of_ours() -> None:
    bad = _direct("reviewer_app.domain", _ours_except(("reviewer_app.domain",)))
    assert not bad, "reviewer_app/domain may import only reviewer_app.domain:\n  " + "\n  ".join(bad)


def package_of(module: str) -> str:
    """The capability a module belongs to: ``storage``, a top module of ``reviewer_app`` (errors, settings),
    or ``reviewer_app.<package>``; ``reviewer_app`` itself for the package's empty ``__init__``."""
    parts = module.split(".")
    return parts[0] if parts[0] == "storage" or len(parts) == 1 else ".".join(parts[:2])


def package_edges(edges: dict[str, tuple[Edge, ...]]) -> dict[tuple[str, str], Edge]:
    """(importing package, imported package) -> the first import that makes the arrow."""
    ours = modules()
    out: dict[tuple[str, str], Edge] = {}
    for module, found in sorted(edges.items()):
        for edge in found:
            a, b = package_of(module), package_of(edge.target)
            if edge.target in ours and a != b and b != "reviewer_app":
                out.setdefault((a, b), edge)
    return out


def circles(arrows: set[tuple[str, str]]) -> list[list[str]]:
    """Every package on a circle of ``arrows``, as one circle each (depth-first search)."""
    succ: dict[str, list[str]] = {}
    for a, b in sorted(arrows):
        succ.setdefault(a, []).append(b)
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in succ.get(node, []):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(succ):
        if node not in state:
            visit(node)
    return found


def test_the_circle_finder_finds_a_back_arrow() -> None:
    """The check below must be able to fail: one arrow back up the layers is a circle it names."""
    arrows = {("reviewer_app.versions", "reviewer_app.analysis"), ("reviewer_app.analysis", "reviewer_app.domain")}
    assert circles(arrows) == []
    back = ("reviewer_app.domain", "reviewer_app.versions")
    assert circles(arrows | {back}) == [
        ["reviewer_app.analysis", "reviewer_app.domain", "reviewer_app.versions", "reviewer_app.analysis"]
    ]


def test_no_circle_among_packages_type_only_imports_included() -> None:
    arrows = package_edges(graph(with_type_only=True))
    found = circles(set(arrows))
    where = []
    for circle in found:
        steps = ", ".join(arrows[(a, b)].where for a, b in zip(circle, circle[1:], strict=False))
        where.append(f"{' -> '.join(circle)}  ({steps})")
    assert not found, "packages import each other in a circle:\n  " + "\n  ".join(where)


def test_every_package_imports_only_the_layers_below_it() -> None:
    """docs/architecture.md's arrows, checked: each package imports only what :data:`ALLOWED` gives it, and no
    package imports a front end (the pages, the CLI)."""
    packages = {package_of(m) for m in modules()} - {"reviewer_app"}
    assert packages - set(ALLOWED) <= set(FRONT_ENDS), f"a package without rules: {packages - set(ALLOWED)}"
    order = list(ALLOWED)
    assert all(order.index(b) < order.index(a) for a, deps in ALLOWED.items() for b in deps), "ALLOWED: not layered"
    bad = [
        f"{a} imports {b} ({edge.where})"
        for (a, b), edge in sorted(package_edges(graph(with_type_only=True)).items())
        if not _under(a, FRONT_ENDS) and b not in ALLOWED.get(a, ())
    ]
    assert not bad, "an arrow the plan does not have (docs/architecture.md):\n  " + "\n  ".join(bad)


def test_reporting_renders_without_reading_storage() -> None:
    bad = _direct("reviewer_app.reporting", lambda t: _under(t, "storage") or t in ("sqlalchemy", "sqlmodel"))
    assert not bad, "reporting renders the domain's results and reads nothing:\n  " + "\n  ".join(bad)


def _page_modules() -> list[str]:
    return [m for m in modules() if _under(m, REVIEW_PAGE)]


def _review_side_modules() -> list[str]:
    return [m for m in modules() if _under(m, REVIEW_SIDE)]


def test_review_page_imports_nothing_unblinding_directly() -> None:
    """views/review.py and the components, and the views and components they import, import neither the
    unblinded side of the application nor storage."""
    on_page = reach(
        _page_modules(), follow=lambda m: _under(m, ("reviewer_app.ui.views", "reviewer_app.ui.components"))
    )
    bad = [
        f"{chain([*path, (edge.target, edge)])}"
        for module, path in sorted(on_page.items())
        if _under(module, ("reviewer_app.ui.views", "reviewer_app.ui.components"))
        for edge in graph(with_type_only=True)[module]
        if _under(edge.target, (*UNBLINDING, "storage"))
    ]
    assert not bad, "the review page imports what it must not:\n  " + "\n  ".join(bad)


def test_review_page_cannot_reach_anything_unblinding() -> None:
    """Nothing the review page imports, however indirectly (type-only imports included), is the statistics,
    reporting, results, versions, production or the ratings files."""
    bad = [chain(path) for module, path in sorted(reach(_page_modules()).items()) if _under(module, UNBLINDING)]
    assert not bad, "the review page reaches unblinded code through:\n  " + "\n  ".join(bad)


def test_review_side_cannot_reach_an_unblinded_repository() -> None:
    """Services may use storage, but nothing the reviewer's side imports (the page, its components, and every
    module of ``review`` and ``people``), however indirectly and type-only imports included, is a repository
    that reads model names for the unblinded side: not the ratings export (``export_chunks``), the report's
    frames, a comparison or a model's history, production feedback or the demo's ``shown_models``."""
    bad = [
        chain(path)
        for module, path in sorted(reach(_review_side_modules()).items())
        if _under(module, UNBLINDED_REPOSITORIES)
    ]
    assert not bad, "the reviewer's side reaches an unblinded repository through:\n  " + "\n  ".join(bad)


def test_the_judges_prompt_builder_reaches_only_the_blind_view() -> None:
    """The judge's prompt is built from what a reviewer's page receives (``ReviewItemView``) and nothing else:
    nothing the prompt builder and the answer schema import, however indirectly and type-only imports
    included, is the unblinded side (statistics, reports, results, ratings, versions, production), storage (any
    repository, or the tables that hold model names), the database layer or another service package."""
    assert all(m in modules() for m in JUDGE_PROMPT), "the judge's prompt builder moved: update JUDGE_PROMPT"
    reached = reach(list(JUDGE_PROMPT))
    bad = [
        chain(path)
        for module, path in sorted(reached.items())
        if module != "reviewer_app" and not _under(module, JUDGE_PROMPT_MAY_REACH)  # "reviewer_app": its __init__
    ]
    assert not bad, "the judge's prompt builder reaches beyond the blind view through:\n  " + "\n  ".join(bad)
    database = [
        f"{module} imports {edge.target} ({edge.where})"
        for module in reached
        for edge in graph(with_type_only=True).get(module, ())
        if edge.target in ("sqlalchemy", "sqlmodel", "httpx", "streamlit")
    ]
    assert not database, "the judge's prompt builder reads nothing:\n  " + "\n  ".join(database)


def _room_of(module: str) -> str | None:
    """The capability a repository module serves (``storage.repositories.review.claims`` -> ``review``); None
    for ``query`` (the pieces every room shares) and for modules of storage outside ``repositories``."""
    if not _under(module, REPOSITORIES) or module == REPOSITORIES:
        return None
    room = module.split(".")[2]
    return None if room == "query" else room


def test_repositories_are_rooms_of_the_capabilities_and_follow_their_arrows() -> None:
    """Every repository module is ``query`` or belongs to a capability of reviewer_app
    (``storage/repositories/<capability>.py`` or ``<capability>/``), and a room imports only rooms of the
    capabilities its own may import (:data:`ALLOWED`), besides ``query``: so what the reviewer's side may not
    reach in reviewer_app it cannot reach in storage either."""
    rooms = {r for m in modules() if (r := _room_of(m)) is not None}
    strays = sorted(r for r in rooms if f"reviewer_app.{r}" not in ALLOWED)
    assert not strays, f"repositories named for no capability of reviewer_app: {strays}"
    bad = [
        f"{module} imports {edge.target} ({edge.where})"
        for module, edges in sorted(graph(with_type_only=True).items())
        if (room := _room_of(module)) is not None
        for edge in edges
        if (other := _room_of(edge.target)) is not None
        and other != room
        and f"reviewer_app.{other}" not in ALLOWED[f"reviewer_app.{room}"]
    ]
    assert not bad, "a repository imports a room its capability may not import:\n  " + "\n  ".join(bad)


def test_only_the_pages_import_streamlit() -> None:
    bad = [
        f"{module} imports streamlit ({edge.where})"
        for module, edges in graph().items()
        if not _under(module, STREAMLIT_ALLOWED)
        for edge in edges
        if edge.target == "streamlit"
    ]
    assert not bad, "only reviewer_app/ui may import streamlit:\n  " + "\n  ".join(bad)


def test_views_never_touch_the_database_layer() -> None:
    bad = _direct("reviewer_app.ui.views", lambda t: t in ("sqlmodel", "sqlalchemy") or _under(t, "storage"))
    assert not bad, "views go through services, never sqlmodel, sqlalchemy or storage:\n  " + "\n  ".join(bad)

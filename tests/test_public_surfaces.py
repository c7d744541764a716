"""Each capability's public surface: what its ``__init__`` exports (``__all__``, as httpx does) is what the rest
of the code uses of it, and nothing else.

A service package (``batches``, ``review``, ``analysis``…) re-exports its public functions and types in its
``__init__``; code of another package (``reviewer_app``, ``storage``, ``scripts``) may take only those names
from it, whether it writes ``from reviewer_app.batches import load_batch`` or names the module
(``from reviewer_app.batches.loading import load_batch``, ``reviews.submit_review``). ``domain`` (the shared
vocabulary of types) and ``reporting`` (one renderer module per result) have their surfaces per module: each
module's ``__all__``. The surface stays small: a name in a package's ``__all__`` that nothing outside uses
fails too. Tests may reach inside a package; they are not counted. Read with ``ast``; nothing is imported but
the packages whose ``__all__`` is checked.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("reviewer_app", "storage", "scripts")
SERVICES = (
    "analysis", "batches", "demo", "exports", "generation", "judge", "people", "production", "ratings", "results",
    "review", "versions",
)  # fmt: skip
PER_MODULE = ("domain", "reporting")


@dataclass(frozen=True)
class Use:
    module: str  # the module the name is taken from
    name: str
    where: str  # file:line

    @property
    def package(self) -> str:
        return ".".join(self.module.split(".")[:2])


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str | None:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "reviewer_app" and len(parts) >= 2 else None


def _exists(root: Path, dotted: str) -> bool:
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


@cache
def uses(root: Path = ROOT, *, across: str = "package") -> tuple[Use, ...]:
    """Every name code takes from a module of ours in another package (``across="package"``) or another module
    (``across="module"``): from-imports, and attributes read through a module it imported by name."""
    found: list[Use] = []
    for base in SOURCES:
        for path in sorted((root / base).rglob("*.py")):
            me = _module_name(root, path)
            mine = me if across == "module" else _package(me)
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            aliases: dict[str, str] = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    target = _package(node.module)
                    if target is None or (node.module if across == "module" else target) == mine:
                        continue
                    if not _exists(root, node.module):
                        continue  # a benchmark's optional import of a module that is gone
                    for alias in node.names:
                        full = f"{node.module}.{alias.name}"
                        if _exists(root, full):
                            aliases[alias.asname or alias.name] = full
                        else:
                            found.append(Use(node.module, alias.name, f"{path.relative_to(root)}:{node.lineno}"))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        target = _package(alias.name)
                        if (
                            target is not None
                            and alias.asname
                            and (alias.name if across == "module" else target) != mine
                        ):
                            aliases[alias.asname] = alias.name
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Load)  # a benchmark may swap a module's attribute: not a use
                    and isinstance(node.value, ast.Name)
                    and node.value.id in aliases
                ):
                    found.append(Use(aliases[node.value.id], node.attr, f"{path.relative_to(root)}:{node.lineno}"))
    return tuple(found)


def _surface(module: str) -> set[str]:
    exported = getattr(importlib.import_module(module), "__all__", None)
    assert exported is not None, f"{module} has no __all__"
    return set(exported)


@pytest.mark.parametrize("package", SERVICES)
def test_a_service_package_exports_its_surface(package: str) -> None:
    full = f"reviewer_app.{package}"
    module = importlib.import_module(full)
    surface = _surface(full)
    assert surface, f"{full}'s __init__ exports nothing"
    assert all(hasattr(module, name) for name in surface), f"{full}.__all__ names what it does not import"
    used = {u.name for u in uses() if u.package == full}
    assert not surface - used, f"{full}.__all__ exports what nothing outside it uses: {sorted(surface - used)}"


@pytest.mark.parametrize("package", SERVICES)
def test_no_export_shadows_a_module_of_its_package(package: str) -> None:
    """``reviewer_app.versions.compare_batches`` must be the module: a function of that name in the package's
    ``__init__`` would replace it as the package's attribute, and ``import … as``, ``monkeypatch.setattr`` with a
    dotted path and ``mock.patch`` would find the function."""
    module = importlib.import_module(f"reviewer_app.{package}")
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert not _surface(module.__name__) & submodules, (
        f"rename the module or the name: {_surface(module.__name__) & submodules}"
    )


def test_other_packages_take_only_a_service_packages_surface() -> None:
    wrong = [
        f"{u.where}: {u.module}.{u.name}"
        for u in uses()
        if u.package in {f"reviewer_app.{p}" for p in SERVICES}
        and u.name not in _surface(u.package)
        and not _exists(ROOT, f"{u.module}.{u.name}")
    ]
    assert not wrong, "names outside their package's __all__ (export them there, or keep them inside):\n" + "\n".join(
        wrong
    )


def test_domain_and_reporting_modules_export_what_others_take() -> None:
    taken: dict[str, set[str]] = defaultdict(set)
    for u in uses(across="module"):
        if u.package in {f"reviewer_app.{p}" for p in PER_MODULE} and u.module != u.package:
            taken[u.module].add(u.name)
    wrong = [
        f"{module}: {sorted(names - _surface(module))}" for module, names in taken.items() if names - _surface(module)
    ]
    assert not wrong, "names other modules take that are not in their module's __all__:\n" + "\n".join(wrong)


def test_the_finder_sees_from_imports_and_module_attributes(tmp_path: Path) -> None:
    """The rule can fail: a probe tree with an import of a name and an attribute read through a module alias."""
    for package in ("reviewer_app/batches", "reviewer_app/ui"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "reviewer_app" / "__init__.py").write_text("")
    (tmp_path / "reviewer_app/batches/loading.py").write_text("def load_batch(): ...\ndef _private(): ...\n")
    (tmp_path / "reviewer_app/ui/page.py").write_text(
        "from reviewer_app.batches.loading import _private\nfrom reviewer_app.batches import loading\n"
        "loading.load_batch()\nloading.attribute_set = 1\n"
    )
    assert {(u.module, u.name, u.where) for u in uses(tmp_path)} == {
        ("reviewer_app.batches.loading", "_private", "reviewer_app/ui/page.py:1"),
        ("reviewer_app.batches.loading", "load_batch", "reviewer_app/ui/page.py:3"),
    }

"""A package surface that loads on first use (PEP 562): every service package names its surface in ``__all__``
and in a map of where each name lives, and imports a name's module only when the name is first asked for, so
that one `blind-review` command, or the reviewer's page, does not load every package it could reach (issue 26).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: a name of ``homes`` (name -> the module it lives in) is imported
    from its module on first use and kept in the package, so the next use is a plain attribute; any other name
    is an AttributeError, as for a module without the hook."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

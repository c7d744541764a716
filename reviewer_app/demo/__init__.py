"""The project's own demo: a small fictional batch (see ``make_files.py``) and :func:`seed.seed_demo`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewer_app.demo.seed import seed_demo

__all__ = ["seed_demo"]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {"seed_demo": "reviewer_app.demo.seed"}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value

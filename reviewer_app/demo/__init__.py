"""The project's own demo: a small fictional batch (see ``make_files.py``) and :func:`seed.seed_demo`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.demo.seed import seed_demo

__all__ = ["seed_demo"]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {"seed_demo": "reviewer_app.demo.seed"}


__getattr__ = lazy_names(__name__, _HOMES)

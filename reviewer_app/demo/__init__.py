"""The project's own demo: a small fictional batch (see ``make_files.py``) and :func:`seed.seed_demo`."""

from reviewer_app.demo.seed import seed_demo

__all__ = ["seed_demo"]

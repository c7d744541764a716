"""Every query, in one room per capability of ``reviewer_app`` (docs/architecture.md): ``query`` (the pieces
they share), ``people``, ``batches/``, ``review/``, ``ratings/``, ``results/``, ``versions``, ``production`` and
``demo``. The rooms of the unblinded side (ratings, results, versions, production, demo) read model names; the
reviewer's side never reaches them, not even through a type-only import (``tests/test_import_graph.py``).
"""

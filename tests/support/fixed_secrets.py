"""Batch secrets fixed for a test whose recorded digest depends on the plan or the pool order.

Since issue 33 each load draws its batch's secret from :mod:`secrets`, and a plan's who-reviews-what runs over
the items in their secret pool order: a digest of which items one reviewer answered then changes with every
run. Such a test fixes the secrets here (the n-th load of the test gets ``sha256(label:n)``), and nothing else
of the app changes; the app itself never takes a secret from anywhere but :func:`secrets.token_hex`.
"""

from __future__ import annotations

import hashlib
import itertools

import pytest

from reviewer_app.batches import loading as batches


def fixed_batch_secrets(monkeypatch: pytest.MonkeyPatch, label: str = "test") -> None:
    """Make every load in this test take the next of a fixed sequence of secrets."""
    counter = itertools.count()
    monkeypatch.setattr(batches, "new_secret", lambda: hashlib.sha256(f"{label}:{next(counter)}".encode()).hexdigest())

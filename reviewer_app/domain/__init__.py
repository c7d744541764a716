"""Types every layer shares: the rubric, the enums, the blind view objects and the typed report.

This package imports nothing of ours, so ``aggregation`` (pure statistics), ``services`` (storage and
rules) and the pages can all depend on it without depending on each other.
"""

"""What a judge is called where its ratings are shown beside people's: in reports, exports and the pages."""

from __future__ import annotations

__all__ = ["judge_label"]


def judge_label(name: str, template_digest: str) -> str:
    """A judge's name: its model name and its prompt template's digest (a judge is both: rerun with another
    template it is another judge), prefixed so that it can never read as a reviewer's name."""
    return f"judge:{name}@{template_digest[:8]}"

"""Errors a user of Blind Review can run into.

Every error a person can cause (a bad batch file, an unknown reviewer, a closed batch) is a subclass of
:class:`BlindReviewError` whose message says what went wrong and what to do about it. The CLI prints the
message as one line and exits 1; pages show it with ``st.error``. Anything else is a bug.

    BlindReviewError
    ├── ConfigError            settings or environment variables that cannot be used
    ├── ValidationError        a file that cannot be loaded; carries every problem found, not just the first
    │   ├── BatchValidationError
    │   ├── RubricError
    │   └── RatingsImportError
    ├── IdentityLeakError      --on-leak fail and some output names a model or vendor
    ├── NotFoundError          a batch, reviewer or item that does not exist
    ├── ConflictError          a name that is taken, or a change that would break a rule (the last admin)
    ├── AuthError              a sign-in token that is wrong or revoked, or a role that may not do this
    ├── BatchClosedError       a batch that no longer takes ratings
    ├── AssignmentError        an assignment that cannot be made (too few reviewers for the overlap, ...)
    ├── GenerationError        a model endpoint that cannot be used (bad --model spec, missing API key, ...)
    └── ReportError            a report that cannot be made as asked (no ratings yet, bad weights, unwritable path)
"""

from __future__ import annotations

from dataclasses import dataclass


class BlindReviewError(Exception):
    """Base class: the message is written for the person who caused it."""


class ConfigError(BlindReviewError):
    pass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located as precisely as we can."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ValidationError(BlindReviewError):
    """An input file (or several) with problems; nothing was written."""

    what = "input"

    def __init__(self, problems: list[Problem], hint: str = "Fix these and run the command again.") -> None:
        self.problems = list(problems)
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.problems:
            return self.hint  # a single answer or form field, not a file: the hint is the whole message
        shown = self.problems[:50]
        lines = [f"{len(self.problems)} problem(s) in the {self.what}; nothing was written."]
        lines += [f"  {p}" for p in shown]
        if len(self.problems) > len(shown):
            lines.append(f"  ... and {len(self.problems) - len(shown)} more")
        lines.append(self.hint)
        return "\n".join(lines)


class BatchValidationError(ValidationError):
    what = "batch"


class RubricError(ValidationError):
    what = "rubric"


class RatingsImportError(ValidationError):
    what = "ratings file"


class IdentityLeakError(BlindReviewError):
    pass


class NotFoundError(BlindReviewError):
    pass


class ConflictError(BlindReviewError):
    pass


class AuthError(BlindReviewError):
    pass


class BatchClosedError(BlindReviewError):
    pass


class AssignmentError(BlindReviewError):
    pass


class GenerationError(BlindReviewError):
    pass


class ReportError(BlindReviewError):
    pass

"""Errors a user of Blind Review can run into.

Every error a person can cause (a bad batch file, an unknown reviewer, a closed batch) is a subclass of
:class:`BlindReviewError` whose message says what went wrong and what to do about it. The CLI prints the
message as one line and exits 1; pages show it with ``st.error``. Anything else is a bug.

    BlindReviewError
    ├── ConfigError            settings or environment variables that cannot be used
    ├── ValidationError        a file or argument that cannot be used; carries every problem, not just the first
    │   ├── BatchValidationError
    │   ├── RubricError
    │   ├── RatingsImportError
    │   ├── BenchmarkScoresError   a public benchmark scores file (``report --benchmarks``)
    │   ├── FeedbackImportError    a production feedback file (``import-feedback``)
    │   ├── JudgeTemplateError     a judge's prompt template file (an unknown or missing placeholder)
    │   └── ExportError            an export that cannot be made as asked (no ratings yet, an --out of the wrong
    │                              kind, an option out of range)
    ├── IdentityLeakError      --on-leak fail and some output names a model or vendor
    ├── NotFoundError          a batch, reviewer or item that does not exist
    ├── ConflictError          a name that is taken, or a change that would break a rule (the last admin)
    │   └── AnswerChangedError a submit from a page drawn before the answer was saved elsewhere (another tab)
    ├── AuthError              a sign-in token that is wrong or revoked, or a role that may not do this
    │   └── NotSignedInError   an API request without a usable token (the API answers 401, not 403)
    ├── BatchClosedError       a batch that no longer takes ratings
    │   └── SlotTakenError     an answer that came after the item had all its ratings (the slot is gone)
    ├── AssignmentError        an assignment that cannot be made (too few reviewers for the overlap, ...)
    ├── GenerationError        a model endpoint that cannot be used (bad --model spec, missing API key, ...)
    ├── ReportError            a report that cannot be made as asked (no ratings yet, bad weights, unwritable path)
    └── ApiError               the REST API answered something the client cannot read as one of these (a proxy's
                               error page, a server that is down or of another version)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace


class BlindReviewError(Exception):
    """Base class: the message is written for the person who caused it."""


class ConfigError(BlindReviewError):
    pass


class DatabaseVersionError(ConfigError):
    """The database's schema is newer than this code: a newer version of the tool wrote it."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located as precisely as we can.

    A problem with an argument rather than a file (a batch name, an on-leak policy) has ``file`` empty and
    names the service's parameter in ``field``; each front end words that field its own way (the CLI as
    its ``--flag``, a page as its widget's label) with :meth:`ValidationError.worded`. Build one with
    :meth:`argument`.
    """

    file: str
    line: int | None
    field: str | None
    message: str

    @classmethod
    def argument(cls, field: str, message: str) -> Problem:
        """A problem with the argument (or form field) ``field``, e.g. ``Problem.argument("name", "...")``."""
        return cls("", None, field, message)

    @property
    def is_argument(self) -> bool:
        return not self.file

    def __str__(self) -> str:
        if self.is_argument:
            return f"{self.field}: {self.message}"
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ValidationError(BlindReviewError):
    """An input file (or several, or an argument) with problems; nothing was written."""

    what = "input"

    def __init__(self, problems: list[Problem], hint: str = "Fix these and run the command again.") -> None:
        self.problems = list(problems)
        self.hint = hint
        super().__init__(self._render(self.problems))

    def worded(self, label: Callable[[str], str]) -> str:
        """The message with each argument problem's field named by ``label`` (the CLI passes a function
        giving ``--on-leak`` for ``on_leak``, a page its widget labels); file problems read the same."""
        return self._render(
            [replace(p, field=label(p.field)) if p.is_argument and p.field else p for p in self.problems]
        )

    def _render(self, problems: list[Problem]) -> str:
        if not problems:
            return self.hint  # a single answer or form field, not a file: the hint is the whole message
        if all(p.is_argument for p in problems):
            return "\n".join(str(p) for p in problems)  # a bad argument: one line each, no file to fix
        shown = problems[:50]
        lines = [f"{len(problems)} problem(s) in the {self.what}; nothing was written."]
        lines += [f"  {p}" for p in shown]
        if len(problems) > len(shown):
            lines.append(f"  ... and {len(problems) - len(shown)} more")
        lines.append(self.hint)
        return "\n".join(lines)


class BatchValidationError(ValidationError):
    what = "batch"


class RubricError(ValidationError):
    what = "rubric"


class RatingsImportError(ValidationError):
    what = "ratings file"


class BenchmarkScoresError(ValidationError):
    """A benchmark scores file (or the margin) that cannot be used; lists every problem."""

    what = "benchmark scores file"


class FeedbackImportError(ValidationError):
    what = "feedback file"


class JudgeTemplateError(ValidationError):
    """A judge's prompt template file that cannot be used: each problem names the file, the line and the
    placeholder (``{{answers}}`` missing, ``{{answer}}`` unknown)."""

    what = "judge prompt template"


class ExportError(ValidationError):
    """An unblinded export (``export-preferences``) that cannot be made as asked: an option out of range or an
    ``--out`` of the wrong kind (each a :class:`Problem` naming the option), or a batch with nothing to export
    yet (no problems: the hint is the message). Nothing was written."""

    what = "export"


class IdentityLeakError(BlindReviewError):
    pass


class NotFoundError(BlindReviewError):
    pass


class ConflictError(BlindReviewError):
    """A name that is taken, or a change that would break a rule (revoking the last active admin)."""


class AnswerChangedError(ConflictError):
    """The reviewer's answer to an item was saved elsewhere (another tab or window) after the page submitting
    now was drawn: nothing was saved, so that the later page cannot overwrite the other one silently."""


class AuthError(BlindReviewError):
    pass


class NotSignedInError(AuthError):
    """An API request with no token, or one that is unknown, expired or revoked: who asks is not known at all
    (HTTP 401), where a plain :class:`AuthError` is a known person whose role may not do this (403)."""


class BatchClosedError(BlindReviewError):
    pass


class SlotTakenError(BatchClosedError):
    """The answer came after the item had all its ratings; the reviewer's slot on it is gone."""


class AssignmentError(BlindReviewError):
    pass


class GenerationError(BlindReviewError):
    pass


class ReportError(BlindReviewError):
    pass


class ApiError(BlindReviewError):
    """An answer of the REST API (or of something in front of it) that is not one of our errors: ``status`` is
    the HTTP status (0: the server could not be reached)."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


class AdjudicationError(BlindReviewError):
    """A ruling that cannot be recorded as given (no reason, an answer the question does not take, a case that
    is no longer in the queue)."""

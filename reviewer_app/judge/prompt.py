"""The judge's prompt, built from the reviewer's blind view and nothing else.

:func:`judge_messages` takes the :class:`~reviewer_app.domain.views.ReviewItemView` a reviewer's page renders
(``review.item_view`` builds it), so the judge reads what a reviewer reads: the prompt or conversation, the
answer(s) under their anonymous labels (none in rating mode, A and B in pairwise), the checks' results where
the rubric shows them, the questions with their anchor labels, the criteria and the reference where the
rubric shows them to reviewers, and the rubric's instructions; the prompt's images as image parts. The view
holds no model, output id, sample id or file name, and its scenario is the title reviewers see; the judge's
prompt does not even use that title, nor the item's label, nor the reviewer's own answers or comment.
Answers are put in verbatim: nothing is escaped, trimmed or interpreted.

A template places the sections. It is plain text with ``{{placeholder}}`` marks; a line ``[system]`` starts
the system message and a line ``[user]`` the user message (a file without them is all user message). Each
placeholder renders a whole section, heading included, or nothing; a line holding only placeholders that
render nothing is left out, and runs of blank lines in the template close up to one.

- ``{{prompt}}`` (required): "## The prompt" and its text, or "## The conversation" and its turns.
- ``{{answers}}`` (required): "## The answer to judge" (rating) or "## The answers to compare" (A and B),
  each in ``<answer>`` tags, with the automatic checks' results where the rubric shows them.
- ``{{questions}}`` (required): "## Questions": each question's key, title, wording and allowed values
  with their anchor labels.
- ``{{images}}``: the prompt's images as image parts, here (user message only; without it they follow the
  user message's text).
- ``{{instructions}}``: "## Instructions" and the rubric's instructions, when it has some.
- ``{{criteria}}``: "## Criteria" and the item's criteria, where the rubric shows them to reviewers.
- ``{{reference}}``: "## Reference answer" and the reference, where the rubric shows them to reviewers.
- ``{{answer_format}}``: "## How to answer": the JSON object to reply with (also asked for with
  ``response_format``: :func:`reviewer_app.judge.schema.answer_schema`).

The default template (:data:`DEFAULT_TEMPLATE`) is the text of ``DEFAULT_TEMPLATE_TEXT`` below; a file
replaces it (:meth:`JudgeTemplate.from_file`), and an unknown or missing placeholder there is a
:class:`~reviewer_app.errors.JudgeTemplateError` naming the file, its line and the placeholder.
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reviewer_app.domain.enums import Mode, PairwiseChoice
from reviewer_app.domain.input_rules import IMAGE_MIME
from reviewer_app.domain.rubric import Dimension, Rubric
from reviewer_app.domain.scales import spec_of
from reviewer_app.domain.views import ReviewItemView, ShownOutput, choice_label
from reviewer_app.errors import JudgeTemplateError, NotFoundError, Problem
from reviewer_app.judge.schema import judge_values
from reviewer_app.settings import data_dir

__all__ = ["DEFAULT_TEMPLATE", "JudgeOrder", "JudgeTemplate", "judge_messages", "judge_orders"]

PLACEHOLDERS: dict[str, bool] = {  # name -> required
    "prompt": True,
    "answers": True,
    "questions": True,
    "images": False,
    "instructions": False,
    "criteria": False,
    "reference": False,
    "answer_format": False,
}
_MARK = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_SECTIONS = ("[system]", "[user]")

DEFAULT_TEMPLATE_TEXT = """\
[system]
You are an expert reviewer in a blind evaluation. You see exactly what a human reviewer sees: a prompt, the
answer or answers to judge under anonymous labels, and the questions to answer about them. You do not know
who or what wrote an answer, and it does not matter: judge only what is written. The order in which answers
are shown says nothing about their quality, and neither does their length. Answer every question with one
of the values it allows.
[user]
{{instructions}}

{{prompt}}
{{images}}

{{criteria}}

{{reference}}

{{answers}}

{{questions}}

{{answer_format}}
"""


@dataclass(frozen=True)
class JudgeTemplate:
    """A prompt template: the system message's text (may be empty) and the user message's, with placeholders.

    Build one with :meth:`from_text` or :meth:`from_file`, which check it. ``source`` names where it came
    from, for errors only; it is never rendered. ``digest`` identifies the template's text (a judge rerun
    with another template is another judge)."""

    system: str
    user: str
    source: str = "the default template"

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.system}\x00{self.user}".encode()).hexdigest()[:12]

    @classmethod
    def from_text(cls, text: str, source: str = "the default template") -> JudgeTemplate:
        """A template from its text (the format above); :class:`JudgeTemplateError` for a bad one."""
        problems: list[Problem] = []
        lines = text.split("\n")  # line n + 1 of the file is lines[n], as errors count them
        marks = {line.strip(): n for n, line in enumerate(lines) if line.strip() in _SECTIONS}
        if not marks:
            system, user, user_first = "", text, 1
        else:
            first = min(marks.values())
            if "\n".join(lines[:first]).strip():
                problems.append(Problem(source, 1, None, "text before the first [system] or [user] line"))
            if "[user]" not in marks:
                problems.append(Problem(source, None, "[user]", "a template with [system] needs a [user] line"))
                raise JudgeTemplateError(problems)
            at_user = marks["[user]"]
            at_system = marks.get("[system]")
            if at_system is not None and at_system > at_user:
                problems.append(Problem(source, at_system + 1, "[system]", "must come before [user]"))
            system = "" if at_system is None else "\n".join(lines[at_system + 1 : at_user])
            user, user_first = "\n".join(lines[at_user + 1 :]), at_user + 2
        for dup in sorted({line.strip() for line in lines if line.strip() in _SECTIONS}):
            if sum(line.strip() == dup for line in lines) > 1:
                problems.append(Problem(source, None, dup, "appears more than once"))
        if not user.strip():
            problems.append(Problem(source, None, "[user]", "the user message is empty"))
        problems += _placeholder_problems(text, source, system, user, user_first)
        if problems:
            raise JudgeTemplateError(problems, hint="Fix the template (placeholders are listed in the README).")
        return cls(system=system.strip("\n"), user=user.strip("\n"), source=source)

    @classmethod
    def from_file(cls, path: Path | str) -> JudgeTemplate:
        """The template in ``path`` (UTF-8 text); :class:`JudgeTemplateError` naming the file and the line."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise JudgeTemplateError([Problem(str(path), None, None, f"cannot be read ({reason})")]) from None
        return cls.from_text(text, str(path))


def _placeholder_problems(text: str, source: str, system: str, user: str, user_first: int) -> list[Problem]:
    problems = []
    for match in _MARK.finditer(text):
        name = match.group(1)
        if name not in PLACEHOLDERS:
            known = ", ".join("{{" + p + "}}" for p in PLACEHOLDERS)
            line = text.count("\n", 0, match.start()) + 1
            problems.append(Problem(source, line, match.group(0), f"unknown placeholder; the placeholders are {known}"))
    found_user = [m.group(1) for m in _MARK.finditer(user)]
    found_system = [m.group(1) for m in _MARK.finditer(system)]
    for name, required in PLACEHOLDERS.items():
        if required and name not in found_user + found_system:
            problems.append(Problem(source, None, "{{" + name + "}}", "missing: the judge would not see it"))
    if "images" in found_system:
        problems.append(Problem(source, None, "{{images}}", "images go in the user message, not [system]"))
    if found_user.count("images") > 1:
        where = [m for m in _MARK.finditer(user) if m.group(1) == "images"][1]
        line = user_first + user.count("\n", 0, where.start())
        problems.append(Problem(source, line, "{{images}}", "appears more than once"))
    return problems


DEFAULT_TEMPLATE = JudgeTemplate.from_text(DEFAULT_TEMPLATE_TEXT)


@dataclass(frozen=True)
class JudgeOrder:
    """One order in which a judge sees an item: pairwise items are judged as shown (A, B) and swapped."""

    view: ReviewItemView
    swapped: bool

    def original(self, values: Mapping[str, str]) -> dict[str, str]:
        """Stored answers given in this order, in the view's own order (a swapped verdict turned back)."""
        if not self.swapped:
            return dict(values)
        left, right = PairwiseChoice.LEFT.value, PairwiseChoice.RIGHT.value
        flip = {left: right, right: left}
        return {name: flip.get(value, value) for name, value in values.items()}


def judge_orders(view: ReviewItemView) -> tuple[JudgeOrder, ...]:
    """The orders to judge ``view`` in: as shown, and for a pair also swapped (B's text under label A)."""
    if Mode(view.mode) is not Mode.PAIRWISE:
        return (JudgeOrder(view, swapped=False),)
    first, second = view.outputs
    swapped = replace(
        view,
        outputs=[
            ShownOutput(first.side, second.text, second.checks),
            ShownOutput(second.side, first.text, first.checks),
        ],
    )
    return JudgeOrder(view, swapped=False), JudgeOrder(swapped, swapped=True)


def _stored_image(name: str) -> bytes:
    """A stored image's bytes (by its content-hash name, as the view gives it)."""
    try:
        return (data_dir() / "images" / Path(name).name).read_bytes()
    except OSError:
        raise NotFoundError("An image of this item is not stored; load the batch again.") from None


def _image_part(name: str, read: Callable[[str], bytes]) -> dict[str, Any]:
    mime = IMAGE_MIME.get(name.rsplit(".", 1)[-1].lower(), "application/octet-stream")
    url = f"data:{mime};base64,{base64.b64encode(read(name)).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _prompt(view: ReviewItemView) -> str:
    if isinstance(view.prompt, str):
        return f"## The prompt\n\n{view.prompt}"
    turns = [f'<turn role="{m.get("role", "user")}">\n{m.get("content", "")}\n</turn>' for m in view.prompt]
    return "## The conversation\n\n" + "\n".join(turns)


def _answer(output: ShownOutput) -> str:
    tag = f'<answer label="{output.side}">' if output.side else "<answer>"
    text = f"{tag}\n{output.text}\n</answer>"
    if output.checks:
        results = [
            f"{c.name}: {'passed' if c.passed else 'failed'}" + (f" ({c.detail})" if c.detail else "")
            for c in output.checks
        ]
        text += "\nAutomatic checks on this answer: " + "; ".join(results)
    return text


def _answers(view: ReviewItemView) -> str:
    if Mode(view.mode) is Mode.PAIRWISE:
        return "## The answers to compare\n\n" + "\n\n".join(_answer(o) for o in view.outputs)
    return "## The answer to judge\n\n" + "\n\n".join(_answer(o) for o in view.outputs)


def _value_words(dim: Dimension) -> str:
    if spec_of(dim.scale).typed:  # any number in a range: said as the range
        return dim.value_hint()
    words = []
    for written, stored in judge_values(dim):
        label = choice_label(dim, stored).removeprefix(f"{stored} — ")  # a Likert anchor reads "5 — right"
        words.append(str(written) if label in (stored, str(written)) else f"{written} — {label}")
    return "; ".join(words)


def _questions(dims: list[Dimension]) -> str:
    lines = ["## Questions", "", "Answer every question with one of the values listed for it."]
    for dim in dims:
        title = dim.name.replace("_", " ").capitalize()
        wording = f": {dim.description.strip()}" if dim.description.strip() else ""
        lines += ["", f'- "{dim.name}" ({title}){wording}', f"  Values: {_value_words(dim)}"]
    return "\n".join(lines)


def _answer_format(dims: list[Dimension]) -> str:
    def slot(dim: Dimension) -> str:
        if spec_of(dim.scale).typed:
            return f'"{dim.name}": <{dim.value_hint()}>'
        written = [w for w, _ in judge_values(dim)]
        quoted = ", ".join(f'"{w}"' if isinstance(w, str) else str(w) for w in written)
        return f'"{dim.name}": <one of {quoted}>'

    body = ", ".join(slot(d) for d in dims)
    return (
        "## How to answer\n\nReply with one JSON object and nothing else:\n"
        f'{{"reason": "<why, in one or two sentences>", "answers": {{{body}}}}}'
    )


def _render(text: str, values: Mapping[str, str]) -> str:
    """``text`` with its placeholders replaced; a line of placeholders that render nothing is left out and
    blank template lines close up to one. Values go in verbatim (their own blank lines stay)."""
    kept: list[str] = []
    for line in text.split("\n"):
        marks = _MARK.findall(line)
        if marks and not _MARK.sub("", line).strip() and not any(values[m] for m in marks):
            continue
        if not line.strip() and (not kept or not kept[-1].strip()):
            continue
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(_MARK.sub(lambda m: values[m.group(1)], line) for line in kept)


def judge_messages(
    view: ReviewItemView,
    rubric: Rubric,
    template: JudgeTemplate = DEFAULT_TEMPLATE,
    *,
    image_bytes: Callable[[str], bytes] | None = None,
) -> list[dict[str, Any]]:
    """The chat messages asking a judge about ``view`` (one order of it: see :func:`judge_orders`).

    ``rubric`` is the batch's: criteria and the reference go in only where it shows them to reviewers (as
    the view already holds them). ``image_bytes`` reads an image the view names (default: the data
    directory's stored copy). Nothing else is read: what is not in the view cannot be in the prompt."""
    if Mode(view.mode) is not Mode(rubric.mode):
        raise ValueError(f"a {Mode(view.mode).value} item under a {Mode(rubric.mode).value} rubric")
    criteria = view.criteria if rubric.show_criteria and view.criteria and view.criteria.strip() else None
    reference = view.reference if rubric.show_reference and view.reference and view.reference.strip() else None
    sentinel = f"\x00images-{uuid.uuid4().hex}\x00"
    values = {
        "prompt": _prompt(view),
        "answers": _answers(view),
        "questions": _questions(view.dimensions),
        "images": sentinel if view.images else "",
        "instructions": f"## Instructions\n\n{view.instructions}" if view.instructions.strip() else "",
        "criteria": f"## Criteria\n\n{criteria}" if criteria else "",
        "reference": f"## Reference answer\n\n{reference}" if reference else "",
        "answer_format": _answer_format(view.dimensions),
    }
    messages: list[dict[str, Any]] = []
    system = _render(template.system, values)
    if system.strip():
        messages.append({"role": "system", "content": system})
    user = _render(template.user, values)
    if not view.images:
        messages.append({"role": "user", "content": user})
        return messages
    read = image_bytes or _stored_image
    images = [_image_part(name, read) for name in view.images]
    before, _, after = user.partition(sentinel) if sentinel in user else (user, "", "")
    before, after = before.rstrip("\n"), after.lstrip("\n")  # the template's line breaks around {{images}}
    parts = [{"type": "text", "text": before}, *images, {"type": "text", "text": after}]
    messages.append({"role": "user", "content": [p for p in parts if p["type"] != "text" or p["text"].strip()]})
    return messages

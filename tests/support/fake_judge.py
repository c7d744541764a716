"""A deterministic LLM judge for the fake OpenAI server (:mod:`tests.support.fake_openai`), with a bias to set.

It reads what the judge's prompt gives it, as a real judge does: the answers in their ``<answer>`` tags and
the questions in the request's ``response_format``. An answer's quality is the number after "quality " in its
text (test batches write it there), else a number drawn from the text's hash; a Likert or binary question gets
that quality rounded into its values, a pairwise verdict goes to the better answer (equal: a tie). Biases to
measure: ``bias`` added to answers containing ``favour``, ``per_100_words`` added per 100 words of the answer
(a judge that likes long answers), ``prefer_first`` (always "A"), and replies that break the schema
(``invalid_when``: the first ask of a prompt containing the text; ``always_invalid_when``: every ask).

    with running_server(Behaviour(reply=fake_judge(JudgeBehaviour(favour="llama", bias=1)))) as server: ...
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_ANSWER = re.compile(r'<answer(?: label="([AB])")?>\n(.*?)\n</answer>', re.DOTALL)
_QUALITY = re.compile(r"\bquality (\d+(?:\.\d+)?)\b")


@dataclass(frozen=True)
class JudgeBehaviour:
    favour: str | None = None
    bias: float = 0.0
    per_100_words: float = 0.0
    prefer_first: bool = False
    invalid_when: str | None = None
    always_invalid_when: str | None = None


def _text(body: dict[str, Any], roles: tuple[str, ...] = ("system", "user")) -> str:
    parts = []
    for message in body.get("messages") or []:
        if message.get("role") not in roles:
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(parts)


def quality(text: str, behaviour: JudgeBehaviour) -> float:
    """The judge's view of one answer: its stated quality (or a hash), plus the biases."""
    found = _QUALITY.search(text)
    if found:
        value = float(found.group(1))
    else:
        value = 1 + 4 * int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if behaviour.favour and behaviour.favour in text:
        value += behaviour.bias
    return value + behaviour.per_100_words * len(text.split()) / 100


def _value(prop: dict[str, Any], q: float, pair: tuple[float, float] | None, behaviour: JudgeBehaviour) -> Any:
    enum = prop.get("enum")
    if enum == ["A", "B", "tie", "both_bad"]:
        assert pair is not None
        if behaviour.prefer_first:
            return "A"
        return "A" if pair[0] > pair[1] else "B" if pair[1] > pair[0] else "tie"
    if enum is not None and all(isinstance(v, int) for v in enum):
        return min(enum, key=lambda v: (abs(v - q), v))
    if enum is not None:
        return enum[0]
    return min(max(q, prop.get("minimum", q)), prop.get("maximum", q))


def judge_reply(body: dict[str, Any], behaviour: JudgeBehaviour) -> str:
    """The judge's reply to one chat request."""
    prompt = _text(body)
    asked_again = any(m.get("role") == "assistant" for m in body.get("messages") or [])
    if behaviour.always_invalid_when and behaviour.always_invalid_when in prompt:
        return "I think the first answer is rather good."
    if behaviour.invalid_when and behaviour.invalid_when in prompt and not asked_again:
        return '{"reason": "forgot the answers"}'
    answers = {label or "": text for label, text in _ANSWER.findall(prompt)}
    schema = body["response_format"]["json_schema"]["schema"]
    props = schema["properties"]["answers"]["properties"]
    pair = (quality(answers["A"], behaviour), quality(answers["B"], behaviour)) if "A" in answers else None
    q = quality(answers.get("", ""), behaviour) if pair is None else 0.0
    values = {name: _value(prop, q, pair, behaviour) for name, prop in props.items()}
    return json.dumps({"reason": "Judged by the stated quality.", "answers": values})


def fake_judge(behaviour: JudgeBehaviour | None = None) -> Callable[[dict[str, Any]], str]:
    """The server ``Behaviour.reply`` of a judge behaving as ``behaviour`` says."""
    chosen = behaviour or JudgeBehaviour()
    return lambda body: judge_reply(body, chosen)

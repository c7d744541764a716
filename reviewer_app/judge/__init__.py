"""The LLM judge (issue 29, in progress): its prompt, built from the reviewer's blind view and nothing else,
and its structured answer (the ``response_format`` asked for, the reply checked). It reads no database and
no model name: what a reviewer's page is not given, the judge is not given either.
"""

from __future__ import annotations

from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeOrder, JudgeTemplate, judge_messages, judge_orders
from reviewer_app.judge.schema import InvalidAnswer, JudgeAnswer, answer_schema, parse_answer

__all__ = [
    "DEFAULT_TEMPLATE",
    "InvalidAnswer",
    "JudgeAnswer",
    "JudgeOrder",
    "JudgeTemplate",
    "answer_schema",
    "judge_messages",
    "judge_orders",
    "parse_answer",
]

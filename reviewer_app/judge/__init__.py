"""The LLM judge: its prompt, built from the reviewer's blind view and nothing else (``prompt``), its
structured answer (``schema``: the ``response_format`` asked for, the reply checked), and its runs over a batch
(``runs``: ``blind-review judge``; ``jobs``: the same started through the API, on a thread of the server;
``judged``: which judges a batch has), stored as the ratings of a rater of kind "judge", apart from the panel's.

The prompt and the schema read no database and no model name: what a reviewer's page is not given, the judge
is not given either. ``runs`` is loaded on first use (it brings the HTTP client and the database), and is not
imported here even for type checkers: the import-graph test holds the prompt builder to the blind view.
"""

from __future__ import annotations

from reviewer_app.domain.lazy_names import lazy_names
from reviewer_app.judge.names import judge_label
from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeTemplate
from reviewer_app.judge.schema import PAIRWISE_VALUES

__all__ = [
    "DEFAULT_TEMPLATE",
    "PAIRWISE_VALUES",
    "JudgeJob",
    "JudgeRunReport",
    "JudgeTemplate",
    "SampleChoice",
    "batch_judges",
    "judge_batch",
    "judge_job",
    "judge_jobs",
    "judge_label",
    "start_judge_run",
]

_HOMES = {
    "judge_batch": "reviewer_app.judge.runs",
    "SampleChoice": "reviewer_app.judge.runs",
    "JudgeRunReport": "reviewer_app.judge.runs",
    "JudgeJob": "reviewer_app.judge.jobs",
    "start_judge_run": "reviewer_app.judge.jobs",
    "judge_job": "reviewer_app.judge.jobs",
    "judge_jobs": "reviewer_app.judge.jobs",
    "batch_judges": "reviewer_app.judge.judged",
}


__getattr__ = lazy_names(__name__, _HOMES)

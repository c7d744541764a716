"""The demo's recorded LLM judge: a judge run written into the demo batches, so that ``make demo`` shows the
"Judge vs panel" report card and the judge-assisted ranking without a model server.

Scripted like the demo's colleagues (``seed``): its answers follow the same made-up qualities of the fictional
models, with the faults a real judge has and the report card is there to find: it favours one model
(``FAVOURED``, as a judge may favour its own family), it likes long answers a little, and in pairwise mode it
leans to the answer shown first. Each judgement is stored as ``blind-review judge`` stores one (the reply as
the model would have written it, a latency, a token count), under the default prompt template.
"""

from __future__ import annotations

import json
import math
import random

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_rubric
from reviewer_app.domain.enums import Mode
from reviewer_app.judge.prompt import DEFAULT_TEMPLATE
from reviewer_app.judge.schema import PAIRWISE_VALUES
from storage.engine import write_session
from storage.models import Judge
from storage.repositories import demo as demo_repo
from storage.repositories.batches import batches as batch_repo
from storage.repositories.judge import runs as judge_repo

JUDGE_NAME = "demo-judge"
FAVOURED = ("borealis-xl", 0.12)  # the model the judge over-rates, and by how much (share of the scale)
PER_100_WORDS = 0.02  # what 100 more words are worth to it
FIRST_SHOWN = 0.05  # pairwise: its lean to the answer shown as A
NOISE = 0.09
_WRITTEN = {stored: written for written, stored in PAIRWISE_VALUES.items()}


def sample_effect(sample_key: str, model: str) -> float:
    """How much better or worse than usual a model answered one sample (a share of the scale, sd 0.15), for a
    demo batch whose panel and judge both see it (``seed``'s judged batch): what a judge can help measure."""
    return random.Random(f"demo-sample:{sample_key}:{model}").gauss(0, 0.15)


def record_demo_judge(
    engine: Engine, batch_id: int, quality: dict[str, dict[str, float]], *, per_sample: bool = False
) -> int:
    """Write the recorded judge's judgements of the batch (every item; pairs in both orders) and return how
    many; nothing when the judge has judged the batch already (a second ``make demo``). ``per_sample``: the
    outputs differ from sample to sample by :func:`sample_effect` (as the panel's ratings of that batch do)."""
    with write_session(engine) as session:
        batch = batch_repo.get_batch(session, batch_id)
        assert batch is not None
        rubric = batch_rubric(batch)
        judge = judge_repo.find_judge(session, JUDGE_NAME, "recorded", DEFAULT_TEMPLATE.digest)
        if judge is None:
            judge = judge_repo.add_judge(
                session,
                Judge(
                    name=JUDGE_NAME,
                    api_model="recorded",
                    base_url="recorded:demo",
                    template_digest=DEFAULT_TEMPLATE.digest,
                    template_text=f"[system]\n{DEFAULT_TEMPLATE.system}\n[user]\n{DEFAULT_TEMPLATE.user}",
                    params_json=json.dumps({"temperature": 0.0, "top_p": 1.0, "max_tokens": 512, "seed": None}),
                ),
            )
        assert judge.id is not None
        if judge_repo.done_keys(session, judge.id, batch_id):
            return 0
        rng = random.Random(f"demo-judge:{batch.name}")
        pairwise = Mode(batch.mode) is Mode.PAIRWISE
        n = 0
        for item_id, key, scenario, model_a, model_b, words_a, words_b in demo_repo.judged_items(session, batch_id):
            dims = rubric.dimensions_for(scenario)
            seen = dict(quality.get(scenario, {}))
            if per_sample:
                seen = {m: q + sample_effect(key, m) for m, q in seen.items()}
            orders = (False, True) if pairwise else (False,)
            for swapped in orders:
                answers: dict[str, str] = {}
                for dim in dims:
                    a = _quality(rng, seen, model_a, words_a)
                    if model_b is None:
                        allowed = dim.allowed_values()
                        answers[dim.name] = allowed[int(min(max(a, 0.0), 0.999) * len(allowed))]
                        continue
                    b = _quality(rng, seen, model_b, words_b)
                    left, right = (b, a) if swapped else (a, b)
                    answers[dim.name] = _verdict(rng, left + FIRST_SHOWN, right)
                reply = {
                    "reason": "Recorded demo judgement.",
                    "answers": {k: _WRITTEN.get(v, int(v) if v.isdigit() else v) for k, v in answers.items()},
                }
                judge_repo.save_judgement(
                    session,
                    {
                        "judge_id": judge.id,
                        "batch_id": batch_id,
                        "item_id": item_id,
                        "repeat": 0,
                        "swapped": swapped,
                        "status": judge_repo.OK,
                        "answers_json": json.dumps(answers),
                        "reason": reply["reason"],
                        "raw_response": json.dumps(reply),
                        "error": None,
                        "latency_ms": round(rng.uniform(700, 2400), 1),
                        "output_tokens": rng.randint(35, 90),
                        "attempts": 1,
                    },
                )
                n += 1
        return n


def _quality(rng: random.Random, quality: dict[str, float], model: str, words: int) -> float:
    favoured, by = FAVOURED
    base = quality.get(model, 0.6) + (by if model == favoured else 0.0)
    return base + PER_100_WORDS * words / 100 + rng.gauss(0, NOISE)


def _verdict(rng: random.Random, left: float, right: float) -> str:
    if max(left, right) < 0.35:
        return "both_bad"
    if abs(left - right) < 0.03:
        return "tie"
    return "left" if rng.random() < 1 / (1 + math.exp(-(left - right) * 14)) else "right"

"""Two small batches whose preferences are known by hand: a pairwise one (alpha v beta) and a rating one
(m1, m2, m3), with their ratings imported as a team that rated elsewhere would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.ratings.files import import_ratings
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, write_batch, write_rubric

CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Question 1?"}]

# s0: alpha 2-1 (agreement 2/3); s1: 1-1, an even split; s2: two ties and one b, a tie; s3: beta 3-0.
PAIRWISE_VOTES = (
    "reviewer,sample_id,model_a,model_b,dimension,winner\n"
    "ann,s0,alpha,beta,overall,a\nbob,s0,alpha,beta,overall,a\ncy,s0,alpha,beta,overall,b\n"
    "ann,s1,alpha,beta,overall,a\nbob,s1,beta,alpha,overall,a\n"
    "ann,s2,alpha,beta,overall,tie\nbob,s2,alpha,beta,overall,tie\ncy,s2,alpha,beta,overall,b\n"
    "ann,s3,alpha,beta,overall,b\nbob,s3,alpha,beta,overall,b\ncy,s3,beta,alpha,overall,a\n"
)

# Overall = mean of (correctness - 1) / 4 and follows_format. s0: ann m1 1.0, m2 0.75, m3 0; bob m1 0.875,
# m2 1.0, m3 0 (means 0.9375, 0.875, 0). s1: m1 and m2 0.75 (ann) and 0.125 (bob), both 0.4375: a tie; m3 1.0
# from cy alone, who rated nothing else there (no reviewer rated both: no agreement).
RATING_SCORES = (
    "reviewer,sample_id,model,dimension,score\n"
    "ann,s0,m1,correctness,5\nann,s0,m1,follows_format,1\nann,s0,m2,correctness,3\nann,s0,m2,follows_format,1\n"
    "ann,s0,m3,correctness,1\nann,s0,m3,follows_format,0\n"
    "bob,s0,m1,correctness,4\nbob,s0,m1,follows_format,1\nbob,s0,m2,correctness,5\nbob,s0,m2,follows_format,1\n"
    "bob,s0,m3,correctness,1\nbob,s0,m3,follows_format,0\n"
    "ann,s1,m1,correctness,3\nann,s1,m1,follows_format,1\nann,s1,m2,correctness,3\nann,s1,m2,follows_format,1\n"
    "bob,s1,m1,correctness,2\nbob,s1,m1,follows_format,0\nbob,s1,m2,correctness,2\nbob,s1,m2,follows_format,0\n"
    "cy,s1,m3,correctness,5\ncy,s1,m3,follows_format,1\n"
)


def records(n_samples: int, models: list[str], conversation_at: int | None = None) -> list[dict[str, Any]]:
    """A batch file's rows: each model's output names the model and the sample, so a test can tell them apart."""
    return [
        {
            "sample_id": f"s{i}",
            "scenario": ("qa", "summaries")[i % 2],
            "prompt": CONVERSATION if i == conversation_at else f"Question {i}?",
            "model": m,
            "output": f"{m} answers {i}",
        }
        for i in range(n_samples)
        for m in models
    ]


def pairwise_batch(engine: Engine, folder: Path, name: str = "pairs") -> None:
    load_batch(
        engine,
        [write_batch(folder, records(4, ["alpha", "beta"]), name=f"{name}.jsonl")],
        write_rubric(folder, PAIRWISE_RUBRIC.format(overlap=3), name=f"{name}.toml"),
        name=name,
        open_now=True,
    )
    votes = folder / f"{name}-votes.csv"
    votes.write_text(PAIRWISE_VOTES, encoding="utf-8")
    import_ratings(engine, name, votes)


def rating_batch(engine: Engine, folder: Path, name: str = "scores", *, rated: bool = True) -> None:
    load_batch(
        engine,
        [write_batch(folder, records(2, ["m1", "m2", "m3"], conversation_at=1), name=f"{name}.jsonl")],
        write_rubric(folder, RATING_RUBRIC.format(overlap=2), name=f"{name}.toml"),
        name=name,
        open_now=True,
    )
    if rated:
        scores = folder / f"{name}-scores.csv"
        scores.write_text(RATING_SCORES, encoding="utf-8")
        import_ratings(engine, name, scores)

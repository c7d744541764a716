"""Scenario states for the adaptive pool from the anytime-valid verdicts: burn-in before 20 complete samples,
settled when every pair is decided (closed with close_settled), open with the samples to the nearest decision
in reach, nothing in reach when the scenario has too few samples left."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reviewer_app.analysis.allocation import allocation_states
from reviewer_app.analysis.anytime import anytime_scenario
from reviewer_app.domain.report_anytime import AnytimeScenario


def _verdict(name: str, means: list[float], n: int, sd: float, seed: int) -> AnytimeScenario:
    rng = np.random.default_rng(seed)
    samples = [f"x{i}" for i in range(n)]
    scores = np.clip(np.array(means)[None, :] + rng.normal(0, 0.1, (n, 1)) + rng.normal(0, sd, (n, len(means))), 0, 1)
    frame = pd.DataFrame(
        {"sample_id": np.repeat(samples, len(means)), "model_a": [f"m{i}" for i in range(len(means))] * n,
         "score": scores.ravel()}
    )  # fmt: skip
    verdict = anytime_scenario(frame, name, "overall", samples, (0.0, 1.0), 200)
    assert verdict is not None
    return verdict


def test_states_follow_the_verdicts() -> None:
    settled = _verdict("apart", [0.2, 0.8], 60, 0.05, 1)
    open_ = _verdict("close", [0.50, 0.56], 60, 0.1, 2)
    early = _verdict("early", [0.5, 0.6], 10, 0.1, 3)
    assert settled.state == "settled" and open_.state == "more_samples"
    states = {
        s.scenario: s
        for s in allocation_states(
            [settled, open_, early],
            {"apart": 18, "close": 18, "early": 18, "none": 18},
            {"apart": 100, "close": 140, "early": 190, "none": 200},
            close_settled=True,
        )
    }
    assert states["apart"].state == "settled" and states["apart"].closed
    assert states["early"].state == "burn_in" and states["none"].state == "burn_in" and states["none"].complete == 0
    close = states["close"]
    assert close.state == "open" and close.open_pairs == 1 and not close.closed
    assert 0 < close.nearest <= 140  # within the 140 samples it has left
    assert close.cost == 18
    # The same scenario with only 2 samples left: its decision is out of reach, so only the uniform share.
    starved = allocation_states([open_], {"close": 18}, {"close": 2})[0]
    assert starved.state == "open" and starved.nearest == 0 and starved.priority() == 0

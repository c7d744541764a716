"""Each scenario's state for the adaptive pool, from the report's own anytime-valid verdicts (issue 30,
section 2): the pool prefers the scenarios with an open pair nearest to a decision, per judgement
(``domain.allocation``); how near is the verdicts' own projection (``anytime.projected_samples``). The states
come from the same verdicts the lead page shows, so the pool stops spending reviewers on a scenario exactly
when the lead is told it is settled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reviewer_app.analysis.anytime import BURN_IN, projected_samples
from reviewer_app.domain.allocation import AllocationState, ScenarioAllocation
from reviewer_app.domain.report_anytime import AnytimeScenario

__all__ = ["allocation_states"]


def allocation_states(
    verdicts: Sequence[AnytimeScenario],
    judgements_per_sample: Mapping[str, int],
    held: Mapping[str, int],
    *,
    close_settled: bool = False,
) -> list[ScenarioAllocation]:
    """One state per scenario of ``judgements_per_sample`` (scenario -> models x k of one sample): burn-in
    until the verdicts start, then open, settled or not settling as the verdict says; for an open or a not
    settling one, the samples to its nearest decision within reach (an open pair's projected samples, if the
    scenario has that many: its complete samples plus ``held``, scenario -> samples held back now). With
    ``close_settled`` a settled scenario is closed to the pool."""
    by_name = {v.scenario: v for v in verdicts}
    out = []
    for scenario in sorted(judgements_per_sample):
        verdict = by_name.get(scenario)
        cost = max(judgements_per_sample[scenario], 1)
        n = 0 if verdict is None else verdict.samples
        left = int(held.get(scenario, 0))
        state: AllocationState
        nearest, open_pairs = 0, 0
        if verdict is None or n < BURN_IN:
            state = "burn_in"
        elif verdict.state == "settled":
            state = "settled"
        else:
            # Not settling says some pair is beyond reach; others of the scenario may still be decided soon.
            state = "not_settling" if verdict.state == "not_settling" else "open"
            reach = []
            for pair in verdict.pairs:
                if pair.state != "open" or pair.cs_low is None or pair.cs_high is None:
                    continue
                open_pairs += 1
                need = projected_samples(pair.n, pair.cs_high - pair.cs_low, pair.diff, verdict.tolerance)
                if need <= pair.n + left:
                    reach.append(max(need - pair.n, 1))
            nearest = min(reach, default=0)
        out.append(
            ScenarioAllocation(
                scenario=scenario,
                state=state,
                complete=n,
                open_pairs=open_pairs,
                nearest=nearest,
                cost=cost,
                held=left,
                closed=close_settled and state == "settled",
            )
        )
    return out

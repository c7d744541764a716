"""The adaptive pool's release rule: burn-in first, then the open (or not settling) scenario nearest a decision
per judgement; settled ones and those with nothing in reach only by the uniform share; closed and exhausted ones
never."""

from __future__ import annotations

from dataclasses import replace

from reviewer_app.domain.allocation import ScenarioAllocation, pick_scenario


def _s(name: str, state: str = "open", **kw: object) -> ScenarioAllocation:
    base = ScenarioAllocation(name, "open", complete=40, open_pairs=2, nearest=10, cost=18, held=50)
    return replace(base, scenario=name, state=state, **kw)  # type: ignore[arg-type]


def test_burn_in_comes_first_the_fewest_samples_first() -> None:
    rows = [_s("a", nearest=1), _s("b", "burn_in", complete=12), _s("c", "burn_in", complete=5)]
    assert pick_scenario(rows) == "c"
    assert pick_scenario([rows[0], rows[1], replace(rows[2], released=9)]) == "b"  # 5 + 9 released > 12


def test_the_open_scenario_nearest_a_decision_per_judgement_wins() -> None:
    near, far = _s("near", nearest=5), _s("far", nearest=40)
    assert pick_scenario([far, near]) == "near"
    # Twice the judgements per sample halves the priority: 5 samples of 36 judgements lose to 8 of 18.
    assert pick_scenario([replace(near, cost=36), _s("cheap", nearest=8)]) == "cheap"
    # Releases since the refresh bring a decision nearer.
    assert pick_scenario([replace(far, released=38), near]) == "far"


def test_settled_out_of_reach_closed_and_exhausted_are_not_picked() -> None:
    assert _s("s", "settled").priority() == 0 and _s("n", "not_settling", nearest=0).priority() == 0
    # Not settling: one pair is beyond reach; another within reach still counts.
    assert _s("n", "not_settling", nearest=12).priority() > 0
    assert _s("o", nearest=0).priority() == 0  # open, nothing within reach
    assert _s("c", closed=True).priority() < 0
    rows = [
        _s("s", "settled"),
        _s("o", nearest=0),
        _s("n", "not_settling", nearest=0),
        _s("c", closed=True),
        _s("x", held=3, released=3),
    ]
    assert pick_scenario(rows) is None  # the caller draws uniformly
    assert pick_scenario([*rows, _s("ok", nearest=30)]) == "ok"

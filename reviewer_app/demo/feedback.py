"""The demo's production feedback: three weeks of made-up thumbs for the demo's made-up models.

Written to a file and imported like any export (``services.feedback.import_feedback``), so the lead's
Production tab and the report's "Panel and production" section have something to show: production agrees
with the panel on most pairs, cirrus-mini does better with users than with the reviewers, and dynamo-2's
thumbs-up rate falls in its third week (the monitor flags the change, by day and by week).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday: three ISO weeks
DAYS = 21
PER_DAY = 400  # events per model and day: enough for a day-to-day change to stand out after Holm
# Share of thumbs-up per model; dynamo-2 changes on day 15 (a hosted model updated under the same name).
RATE = {"aurora-7b": 0.74, "borealis-xl": 0.80, "cirrus-mini": 0.77, "dynamo-2": 0.62}
DROP = ("dynamo-2", 14, 0.42)
LATENCY_MS = {"aurora-7b": 900.0, "borealis-xl": 1800.0, "cirrus-mini": 450.0, "dynamo-2": 1100.0}
SCENARIOS = ("support", "data", "code")


def write_demo_feedback(path: Path) -> Path:
    """Write the demo's feedback events to ``path`` (JSONL; the same bytes every time)."""
    rng = random.Random(20261102)
    lines = []
    for day in range(DAYS):
        for model, rate in RATE.items():
            if model == DROP[0] and day >= DROP[1]:
                rate = DROP[2]
            for k in range(PER_DAY):
                at = START + timedelta(days=day, seconds=rng.randrange(86_400))
                latency = LATENCY_MS[model] * rng.lognormvariate(0, 0.35)
                event = {
                    "request_id": f"demo-{model}-{day:02d}-{k:03d}",
                    "model": model,
                    "scenario": SCENARIOS[k % len(SCENARIOS)],
                    "timestamp": at.isoformat().replace("+00:00", "Z"),
                    "feedback": 1 if rng.random() < rate else -1,
                    "latency_ms": round(latency, 1),
                    "ttft_ms": round(latency * rng.uniform(0.15, 0.3), 1),
                }
                lines.append(json.dumps(event))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

"""What an export of preferences wrote: the counts the command prints and the dataset card states."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PreferenceExport:
    """One ``export-preferences`` run: where it wrote, from which batch and source, and what went in or not."""

    batch: str
    source: str  # "pairwise" (the pair items' verdicts) or "ratings" (the outputs' mean overall scores)
    fmt: str  # "jsonl", "parquet" or "hf"
    path: Path  # the file, or for "hf" the folder
    ties: str  # "leave-out" or "mark"
    min_agreement: float
    records: int  # written
    tied: int  # ties found, written (``tie`` True) under "mark", left out under "leave-out"
    below_agreement: int  # preferences left out by min_agreement (ties among them when marked)
    models: tuple[str, ...]  # every model named in a record, by name
    scenarios: tuple[str, ...]
    adjudicated: bool = False  # rulings took the panel's place on the items they rule (``--adjudicated``)
    ruled: int = 0  # records whose verdict or scores a ruling changed the answers of

    def lines(self) -> list[str]:
        """The command's report of what it did, for a lead reading a terminal."""
        ties = f"{self.tied} tie(s) " + ("marked tie: true" if self.ties == "mark" else "left out")
        lines = [
            f"Wrote {self.records} preference record(s) from batch {self.batch!r} ({self.source}) to {self.path} "
            f"({self.fmt}); {ties}.",
        ]
        if self.below_agreement:
            lines.append(f"Left out {self.below_agreement} below --min-agreement {self.min_agreement:g}.")
        if self.adjudicated:
            lines.append(
                f"Adjudicated: {self.ruled} record(s) read an adjudicator's ruling in the panel's place "
                "(adjudicated: true)."
                if self.ruled
                else "Adjudicated: no ruling touches a written record."
            )
        lines.append("Unblinded: every record names its models (chosen_model, rejected_model).")
        return lines

r"""What a load tells the admin: the summary of the batch written, and the outputs found naming a model.

:func:`reviewer_app.batches.loading.load_batch` returns a :class:`LoadSummary`, which the CLI prints and the
Admin page shows (:meth:`LoadSummary.lines`); its :class:`Leak`\ s are found by the write's scan
(:mod:`reviewer_app.batches.load_rows`). A module of its own: the wording of the summary changes for other
reasons than the load does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewer_app.batches.audience import Audience
from reviewer_app.batches.leakscan import LeakMatch
from reviewer_app.batches.titles import NameLeaks, warning_lines
from reviewer_app.domain.enums import Mode, OnLeak


@dataclass
class Leak:
    sample_id: str
    model: str
    repeat: int
    words: list[str]
    file: str
    line: int | None
    matches: list[LeakMatch] = field(default_factory=list)  # spans in the output's text, for masking


@dataclass
class LoadSummary:
    batch_name: str
    batch_id: int
    already_loaded: bool
    mode: Mode
    scenarios: dict[str, int] = field(default_factory=dict)  # scenario -> samples
    models: list[str] = field(default_factory=list)
    outputs: int = 0
    items: int = 0
    images: int = 0
    leaks: list[Leak] = field(default_factory=list)
    excluded: int = 0
    seed: int = 0
    on_leak: OnLeak = OnLeak.MASK
    per_model: dict[str, int] = field(default_factory=dict)  # model -> outputs loaded, by model name
    name_leaks: NameLeaks = field(default_factory=NameLeaks)  # the batch's and scenarios' names that name a model
    baseline: str | None = None  # a follow-up batch: its baseline's name
    anchor_share: float = 0.0
    anchor_samples: int = 0  # samples whose baseline outputs are shown again
    anchor_items: int = 0
    generated: bool = False  # the outputs' generation parameters were recorded (for `rerun`)
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)  # automatic check -> (passed, outputs run)
    audience: Audience | None = None  # open or not yet, and to whom
    adaptive_share: float | None = None  # allocation = "adaptive": the share of releases drawn uniformly

    def lines(self) -> list[str]:
        if self.already_loaded:
            return [
                f"Already loaded: this content is batch {self.batch_name!r} (id {self.batch_id}); nothing was written."
            ]
        out = [
            f"Loaded batch {self.batch_name!r} (id {self.batch_id}, {self.mode} mode, seed {self.seed}):",
            f"  {sum(self.scenarios.values())} samples in {len(self.scenarios)} scenario(s): "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.scenarios.items())),
            f"  {self.outputs} outputs from {len(self.models)} models, {self.items} review items, "
            f"{self.images} image(s)",
            "  outputs per model: " + (", ".join(f"{m} {n}" for m, n in self.per_model.items()) or "none"),
        ]
        if self.leaks:
            verb = {
                OnLeak.MASK: "masked (reviewers see '[model name]' in their place; reports keep the text)",
                OnLeak.EXCLUDE: "excluded from review",
            }.get(self.on_leak, "flagged (still reviewed, unmasked; see --on-leak)")
            out.append(f"  {len(self.leaks)} output(s) name a model or vendor, {verb}:")
            for leak in self.leaks[:20]:
                out.append(f"    sample {leak.sample_id} / {leak.model}: {', '.join(leak.words)}")
            if len(self.leaks) > 20:
                out.append(
                    f"    ... and {len(self.leaks) - 20} more: `blind-review leaks {self.batch_name}` lists all "
                    "(so does the Admin page, Batches tab)"
                )
        else:
            out.append("  identity-leak scan: no output names a model or vendor")
        if self.baseline is not None:
            out.append(
                f"  follow-up of {self.baseline!r}: {self.anchor_items} anchor item(s), the baseline's own outputs of "
                f"{self.anchor_samples} sample(s) ({self.anchor_share:g} of each scenario's), shown again blind"
            )
        if self.generated:
            out.append("  generation parameters recorded (`blind-review rerun` can reproduce them)")
        if self.checks:
            out.append(
                "  automatic checks (passed / run): "
                + ", ".join(f"{name} {p}/{n}" for name, (p, n) in sorted(self.checks.items()))
                + "; the report has their pass rates per model"
            )
        if self.adaptive_share is not None:
            out.append(
                f"  adaptive allocation: samples are held back and released to reviewers a whole sample at a time, "
                f"{self.adaptive_share:.0%} at random and the rest where verdicts are still open "
                f"(`blind-review allocation {self.batch_name}` shows where); no `assign` needed"
            )
        if self.audience is not None:
            out.append(f"  {self.audience.line()}")
        return out + warning_lines(self.name_leaks, self.batch_id, self.batch_name, self.scenarios)

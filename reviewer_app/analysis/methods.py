"""The methods appendix: the report's settings, counts, and every rule in plain words with its reference."""

from __future__ import annotations

from collections.abc import Sequence

from reviewer_app.analysis.prepare import RatingParts
from reviewer_app.domain.report_panel import Counts, MethodDimension, Methods
from reviewer_app.domain.report_rankings import OverallReport, RankingRow, ScenarioReport
from reviewer_app.domain.rubric import Rubric

MULTIPLE_COMPARISONS = (
    "Holm: every pair of models in a ranking (one scenario and dimension) tested analytically; p-values "
    "Holm-adjusted over all pairs of that ranking; a pair is separated when its adjusted p-value is below 0.05"
)


def methods_block(
    rubric: Rubric,
    parts: RatingParts,
    *,
    seed: int,
    rounds: int,
    draws: int,
    blocks: Sequence[ScenarioReport | OverallReport],
) -> Methods:
    """The report's ``methods``: settings, counts, the dimensions, and the definitions for its mode."""
    rows: list[RankingRow] = [r for b in blocks for r in b.ranking]
    rows += [r for b in blocks if isinstance(b, OverallReport) for r in b.composite.ranking]
    errors = [r.ci_mc_se for r in rows if r.ci_mc_se is not None]
    return Methods(
        seed=seed,
        bootstrap_rounds=rounds,
        weight_draws=draws,
        confidence=0.95,
        multiple_comparisons=MULTIPLE_COMPARISONS,
        max_ci_mc_se=max(errors) if errors else None,
        counts=Counts(
            ratings=len(parts.main),
            gold_ratings=len(parts.gold),
            repeat_ratings=len(parts.repeats),
            reviewers=int(parts.main["reviewer"].nunique()),
            items=int(parts.main["item_id"].nunique()),
        ),
        dimensions=tuple(
            MethodDimension(
                name=d.name, scale=d.scale, level=d.level, min=d.min, max=d.max, higher_is_better=d.higher_is_better
            )
            for d in rubric.dimensions
        ),
        definitions=tuple(
            METHODS_TEXT[rubric.mode] + METHODS_TEXT["common"] + ([ADAPTIVE_TEXT] if rubric.allocation.adaptive else [])
        ),
    )


ADAPTIVE_TEXT = (
    "Adaptive allocation: samples were released to reviewers a whole sample at a time, a share uniformly at "
    "random and the rest to the scenarios whose anytime-valid verdicts were still open. Which sample of a "
    "scenario came next was fixed at load by the batch's secret order, so each scenario's rated samples are a "
    "simple random sample of it of a data-dependent size: its estimates need no weights (Horvitz & Thompson "
    "1952: equal inclusion probabilities within a scenario), the anytime-valid verdicts hold at any stopping "
    "time, and the composite weighs scenarios by the rubric, not by their samples. Fixed-sample intervals read "
    "at a data-dependent size are approximate; scripts/validate_allocation.py measures their coverage."
)


METHODS_TEXT: dict[str, list[str]] = {
    "rating": [
        "Score: the mean of all ratings a model's outputs received on a dimension (first showings of "
        "ordinary items; gold items and silent repeats are left out). A continuous dimension (any number from "
        "its min to its max) is averaged the same way. On a dimension marked lower-is-better (error counts, "
        "MQM) the lowest mean ranks first and its charts run the other way.",
        "Overall (rating mode): each rating's numeric dimensions are rescaled to 0-1 "
        "((value - min) / (max - min), turned round for a lower-is-better dimension, so 1 is always best) and "
        "averaged, so a binary and a 1-5 dimension weigh the same; the overall score is the mean of those "
        "per-rating values (0 = worst, 1 = best possible). Categorical dimensions get agreement only. A "
        "continuous dimension counts only in a scenario without a Likert or binary one: its share of the scale "
        "depends on a max the rubric chose, which would set its weight beside them (and could reorder the "
        "models); it is ranked on its own.",
        "Overall agreement (rating mode) is Krippendorff's alpha of those per-rating 0-1 values at interval level.",
        "Ordinal dimensions: beside the mean, a rank-based comparison for every pair of models: the probability "
        "that a rating of model A beats a rating of model B of the same sample (ties count half; Vargha & "
        "Delaney's A, averaged over the samples both were rated on), with its cluster-bootstrap 95% CI. On "
        "ordinal dimensions the tests, ranks, tiers and letters use this comparison (tested against 1/2), not "
        "the means: the means are shown as scores, but a difference of means assumes equal steps between the "
        "scale's points.",
        "Pair test (rating mode): the difference of two mean scores, written as a sum of per-sample "
        "contributions with both means set to their common value; sign-flip test (see 'Separated pairs'). "
        "The pair's 95% CI of the difference uses the cluster-robust (CR1) standard error over samples "
        "(Liang & Zeger 1986) and a Student t with (samples - 1) degrees of freedom (Satterthwaite across "
        "scenarios).",
    ],
    "pairwise": [
        "Answers are first mapped back to the canonical model order (undoing the blind left/right swap).",
        "Score: Bradley-Terry log-strength, fitted by penalised maximum likelihood (penalty 0.01 x sum of "
        "squared strengths, as choix.opt_pairwise), so strengths sum to 0 and an undefeated model stays "
        "finite. A tie or 'both bad' counts half a win to each side. In words: 'beats an average model' = "
        "1 / (1 + exp(-(strength - the ranking's mean strength))), the Bradley-Terry chance to beat a model of the "
        "ranking's average strength (its interval: the same transform of the strength's).",
        "What the strengths estimate: counting a tie or 'both bad' as half a win, the ranking's strengths are the "
        "log-odds of a model's expected score (wins + half its ties), which ties pull towards 0 (with a fifth of "
        "comparisons tied, about 0.78x the strengths that generate the decisive answers). Its tests stay valid "
        "(equal models have equal expected scores whatever the ties), so ranks, tiers and letters use them. "
        "Beside them ('ties and both bad'): each model's share of comparisons without a winner and judged both "
        "bad (95% cluster-bootstrap percentile intervals over samples), and Davidson's tie model (Davidson "
        "1970), P(i beats j) = pi_i / (pi_i + pi_j + nu sqrt(pi_i pi_j)), tie and both bad counted as ties, "
        "penalised as the ranking's: its strengths are the log-odds of winning a decisive comparison, not shrunk "
        "by ties; two equal models tie in nu / (2 + nu) of their comparisons; 'shrinkage' is the slope of the "
        "ranking's strengths on Davidson's. Their intervals refit the model in every bootstrap replicate.",
        "A model that won (lost) every comparison has a strength set by the penalty, not by the data. It is "
        "flagged ('won every comparison; its strength is a lower bound'), its interval is one-sided: with G "
        "samples in which it was compared, it beats the models it met at least p = 0.025^(1/G) of the time "
        "(Clopper-Pearson, samples as units), so its strength is at least their comparison-weighted mean "
        "strength + logit(p); no upper end is given.",
        "Pair test (pairwise mode): a score test of equal strengths (Rao; the generalised score test of "
        "Boos 1992): each sample's efficient score at the fit constrained to equality, sign-flip test. It "
        "stays valid for an undefeated model, where a Wald test breaks down (Hauck & Donner 1977). The pair's "
        "CI of the difference is the bootstrap percentile interval, open on the side of a one-sided strength.",
        "Overall (pairwise, several dimensions): all dimensions' comparisons pooled in one fit.",
        "Agreement: Krippendorff's alpha at nominal level over the canonical answers (a, b, tie, both bad).",
    ],
    "common": [
        "Agreement: Krippendorff's alpha (krippendorff package; Krippendorff 2011) at the dimension's level of "
        "measurement; 95% CI by bootstrap over items (units) rated at least twice. Alpha is null with a reason "
        "when undefined: one reviewer, no item rated twice, or no variation at all. Continuous dimensions: "
        "interval or ratio alpha over the values given (ratio: rounded to 1/200 of the largest value).",
        "Low agreement (one rule everywhere, results page included): alpha below 0.4 or its 95% CI reaching "
        "below 0. Alpha measures agreement on single items; a ranking rests on the models' means, judged by "
        "their reliability (below). The report says so, with both numbers, before any ranking sentence (the "
        "headline, each scenario's first warning, and each such dimension's plain-language line): the ranking "
        "can stand where the means are reliable, and is to be treated as weak where they are not (or their "
        "reliability is unknown); 'overall' keeps averaging them, and 'overall_agreed' ranks the models on the "
        "overall score without them.",
        "Reliability of the models' means: split-half (Spearman 1910; Brown 1910): random halves of the samples "
        "(within each scenario when pooled), the models' scores on each half correlated across models (Pearson), "
        "averaged over 200 splits and stepped up by Spearman-Brown 2r / (1 + r). 95% CI: bias-corrected "
        "percentile interval (Efron & Tibshirani 1993) over 1,000 cluster-bootstrap replicates, each stepped up "
        "by the whole's samples over the halves' effective number (Kish). Reliable enough for a ranking to "
        "stand: at least 0.8 with the CI above 0.5. Fixed seed: it does not depend on the report's seed.",
        "CIs: cluster bootstrap over samples (all of a sample's ratings resampled together; Field & Welsh "
        "2007), percentile 95% intervals; scenarios are resampled separately (stratified) when pooled. A model's "
        "interval is the expanded percentile one (Hesterberg 2015): the percentile interval at the level whose "
        "normal quantile is sqrt(G / (G - H)) x t(0.975, G - H), for its G samples in H scenarios, so it keeps "
        "95% coverage with few samples (the plain one covers about 91% at 12). Each "
        "interval end's Monte Carlo error (the spread of the end over reruns with another seed) is reported as "
        "a standard error by the binomial order-statistic approximation: half the distance between the "
        "bootstrap quantiles q -/+ sqrt(q (1 - q) / rounds). These intervals hold this panel fixed: they cover "
        "the score these reviewers would give on other samples. 'New panel' intervals (rating mode, 3+ "
        "reviewers) cover the score another group of reviewers would give: they add the reviewers' variance "
        "component (moments of a model + sample + reviewer fit; Searle, Casella & McCulloch 1992) times the sum "
        "of the squared shares of the model's ratings each reviewer gave, with Student's t at Welch-Satterthwaite "
        "degrees of freedom (Satterthwaite 1946). Use them to hold a score against a threshold or another round "
        "rated by other reviewers; differences between models rated by the same reviewers need no such term.",
        "Separated pairs: every pair of models in a ranking is tested without random draws, so no decision "
        "depends on the bootstrap seed or the number of rounds (no p-value used for a decision has Monte Carlo "
        "error). Each test is a sign-flip (randomisation) test over samples (Fisher 1935): the statistic is a "
        "sum of per-sample contributions that are symmetric about 0 when the two models are equal, studentised "
        "as z = sum / sqrt(sum of squares); exact over all 2^G sign flips up to 12 samples, normal "
        "approximation beyond (conservative in the far tail; Efron 1969). The p-values are Holm-adjusted over "
        "all pairs of the ranking (Holm 1979), which keeps the chance of separating any two equal models at 5% "
        "or less; a pair is separated when its adjusted p is below 0.05. Each pair shows two intervals of the "
        "difference: the 95% CI (unadjusted), its own bootstrap interval, which may exclude 0 for a pair that is "
        "not separated; and the Holm-adjusted CI, the difference +- z x |diff| / z(p) at the per-pair level "
        "Holm used (0.05 x p / p_adjusted), which excludes 0 exactly when the pair is separated.",
        "Rank = 1 + the number of models significantly better. Letters (compact letter display, insert-and-"
        "absorb algorithm of Piepho 2004): models that share a letter are not significantly different, and "
        "any two models without a common letter are. Tier = a model's best letter, numbered 1, 2, 3 ... without "
        "gaps over the letters that are some model's best, so models in one tier are never separated; where "
        "separation is not transitive (A ~ B, B ~ C, A > C) the letters overlap (a, ab, b).",
        "P(best): the share of cluster-bootstrap replicates in which the model has the ranking's top score (ties "
        "shared; Efron & Tibshirani 1993); it sums to 1 over a ranking and, unlike the decisions, carries Monte "
        "Carlo error.",
        "Across scenarios and in the composite only models with ratings in every scenario concerned are "
        "ranked, so all are compared over the same scenarios; the others are listed with the scenarios they "
        "miss. A model with outputs but no ratings yet in a scenario is listed there.",
        "Separation warning: the smallest difference separable with 80% power at the 5% level is about "
        "2.8 standard errors of a paired difference (rating mode: the cluster-robust ones, so the warning "
        "does not depend on the seed; pairwise: bootstrap ones); a warning appears when that exceeds the "
        "spread between the best and the worst model. The samples it says would be needed are simulated "
        "through the report's own decision (Arnold et al. 2011): panels drawn with the variance of a paired "
        "difference measured in the ranking, the models' true means evenly spread over the observed spread, "
        "tested by the sign-flip test with Holm over all pairs; the fewest samples, in steps of 10, at which "
        "the best and worst are separated in 80% of 500 panels per step (fixed seed; the advice moves by "
        "about 3% with the simulation's noise), 'more than 2,000' beyond. It assumes the largest observed "
        "difference is the true one; the observed spread overstates a true one, so it is a lower bound.",
        "Composite: weighted mean over scenarios of each model's overall score (weights from the rubric or "
        "the lead, missing = 1), with the same stratified bootstrap and pair tests (each scenario a stratum). "
        "Weight sensitivity, the weights apart from the noise: under the weights alone, random weightings "
        "drawn uniformly from the simplex (Dirichlet(1, ..., 1)) applied to the point scores, how often each "
        "model comes first (models tied for first share the draw) and its range of ranks; from the noise alone, "
        "at the chosen weights, the composite's P(best); and both together, each weighting with a random "
        "bootstrap replicate. Left out when there is one scenario.",
        "A warning appears when one reviewer gave more than 60% of a scenario's ratings: its ranking is then "
        "largely one person's opinion.",
        "Reviewer flags: leniency of at least 0.10 of the scale versus the other reviewers of the same items "
        "(10+ shared ratings), alpha rising by 0.05+ without the reviewer, gold accuracy under 70% (3+ gold "
        "answers), self-consistency under 60% (3+ repeats), or answering implausibly fast: a median time per "
        "item under a third of the rest of the panel's (the median of the other reviewers' medians; 10+ timed "
        "items for the reviewer and for each colleague counted). Only items answered in the app are timed: "
        "imported ratings never count, and a reviewer without a timed colleague is not judged. The rule is "
        "relative, so a panel in which everyone rushes flags no one.",
        "Position: pairwise mode reports the share of decisive answers that picked the left side (0.5 = no "
        "bias); rating mode reports the slope of score versus queue position, its 95% CI clustered by reviewer "
        "and by sample (Cameron, Gelbach & Miller 2011; t with the smaller effective number of clusters minus "
        "1 degrees of freedom): a queue is a reviewer's. Only answers given in the app "
        "count: for imported answers the side and position are unknown ('not recorded').",
    ],
}

"""Scores and grades: pure formulas from the EvalView and Scylla metrics references.

A run's weighted score (0-100) blends three dimensions, each in [0, 1]:
  tool accuracy        = tool recall against `path.expected_tools`
  output quality       = mean judge score normalised as (s − 1) / 4 from the 1-5 scale, or, when no judge
                         produced a score, the deterministic correctness checks' pass ratio
  sequence correctness = sequence similarity against the baseline (or `expected_tools`)
score = 100 · Σ wᵢ·sᵢ / Σ wᵢ over the dimensions that could be measured (default weights 30/50/20);
no measurable dimension → no score. A forbidden tool short-circuits the score to 0 with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentci_action.engine.correctness import JUDGE_KINDS
from agentci_action.engine.results import FAIL, PASS, Grade, LayerResult, MetricChange, QueryResult, RunResult
from agentci_action.engine.stats import tidy
from agentci_action.spec.models import ScoreWeights

JUDGE_SCALE = (1, 5)
GRADES: tuple[tuple[float, Grade], ...] = ((0.95, "A"), (0.85, "B"), (0.75, "C"), (0.65, "D"))
_JUDGE_KINDS = frozenset(JUDGE_KINDS)


@dataclass(slots=True)
class RunScore:
    """One run's score and the dimensions it came from (None: not measurable on this run).

    A slotted dataclass, not a NamedTuple, whose __new__ is Python code: one is made per run, at half the cost.
    """

    value: float | None
    tool_accuracy: float | None = None
    output_quality: float | None = None
    sequence_correctness: float | None = None
    reason: str = ""


def normalise_judge_score(score: float) -> float:
    """A 1-5 judge score on [0, 1]: (s − 1) / 4. 1 → 0.0, 3 → 0.5, 5 → 1.0."""
    low, high = JUDGE_SCALE
    return (score - low) / (high - low)


def judge_scores(correctness: LayerResult) -> list[float]:
    """The 1-5 scores of the run's judge checks (llm_judge, safety_check, hallucination_check) that produced one."""
    return [
        score
        for c in correctness.checks
        if c.name in _JUDGE_KINDS and isinstance(score := c.data.get("score"), (int, float))
    ]


def output_quality(correctness: LayerResult) -> float | None:
    """Mean normalised judge score of the checks that carry one; else passed / run deterministic checks; else None."""
    passed = failed = 0
    judged = False
    for check in correctness.checks:  # one loop, not a list per figure: made per run, most without a judge
        status = check.status
        if status is PASS:
            passed += 1
        elif status is FAIL:
            failed += 1
        if check.name in _JUDGE_KINDS:
            judged = True
    if judged and (scores := judge_scores(correctness)):
        return sum(normalise_judge_score(s) for s in scores) / len(scores)
    return passed / (passed + failed) if passed or failed else None


def weighted_score(dimensions: dict[str, float | None], weights: ScoreWeights) -> float | None:
    """100 · Σ wᵢ·sᵢ / Σ wᵢ over the measured dimensions with wᵢ > 0; None when none is measured.

    {tool_accuracy 1.0, output_quality 0.9, sequence_correctness 1.0} at 30/50/20 → 95.0.
    """
    return _blended(
        weights,
        dimensions.get("tool_accuracy"),
        dimensions.get("output_quality"),
        dimensions.get("sequence_correctness"),
    )


def _blended(
    weights: ScoreWeights, tool_accuracy: float | None, quality: float | None, sequence_correctness: float | None
) -> float | None:
    """weighted_score of the three dimensions, in their order, with no dict between: made per run (bench_hot_path)."""
    total = weighted = 0.0
    given = weights.__dict__  # spec/models.py, "fields as a dict"
    for weight, value in (
        (given["tool_accuracy"], tool_accuracy),
        (given["output_quality"], quality),
        (given["sequence_correctness"], sequence_correctness),
    ):
        if value is not None:
            total += weight
            weighted += weight * value
    if total == 0:
        return None
    return 100 * weighted / total


def run_score(correctness: LayerResult, path: LayerResult, weights: ScoreWeights) -> RunScore:
    """The score of one run from its correctness and path layers; 0 with the reason on a forbidden tool."""
    violations = path.details.get("forbidden_violations")
    if violations:
        return RunScore(0.0, reason=f"forbidden tool used: {', '.join(violations)} (score short-circuited to 0)")
    tool_accuracy: float | None = path.details.get("tool_recall")
    quality = output_quality(correctness)
    sequence_correctness: float | None = path.details.get("sequence_similarity")
    score = _blended(weights, tool_accuracy, quality, sequence_correctness)
    return RunScore(score, tool_accuracy, quality, sequence_correctness)


def composite_score(
    pass_rate: float, impl_rate: float | None, pass_weight: float = 0.5, impl_weight: float = 0.5
) -> float:
    """(pass_rate·pass_weight + impl_rate·impl_weight) / (pass_weight + impl_weight); pass_rate alone without impl_rate.

    pass 1.0, impl 0.85 at 0.5/0.5 → 0.925.
    """
    if impl_rate is None:
        return pass_rate
    return (pass_rate * pass_weight + impl_rate * impl_weight) / (pass_weight + impl_weight)


def suite_composite_score(results: list[QueryResult]) -> float:
    """Mean over every query of its composite; 0.0 without queries.

    The composite: its runs' pass rate blended with its score, or its pass rate alone when it has no score.

    Every query counts once in one denominator, so the figure cannot contradict the counts: with 16 of 18
    queries passing and no score, 16/18 = 0.89; two of them scored 30 → (14 + 2 × 0.65) / 18 = 0.85. (Blending the
    pass rate over all queries with a mean score over the scored ones only gave 0.61, grade F, here.)
    """
    return sum(r.score.composite for r in results) / len(results) if results else 0.0


def letter_grade(score: float) -> Grade:
    """A ≥ 0.95, B ≥ 0.85, C ≥ 0.75, D ≥ 0.65, else F. 0.925 → B."""
    for threshold, grade in GRADES:  # a loop, not next() over a generator: graded once per query
        if score >= threshold:
            return grade
    return "F"


def uplift(current: float | None, baseline: float | None) -> float | None:
    """(current − baseline) / baseline; None when either is unknown or the baseline is 0 (undefined).

    Baseline composite 0.75, current 0.90 → 0.20 (20% up). For cost a positive uplift means more expensive. Without
    float noise (stats.tidy): 0.53, not 0.5299999999999999.
    """
    if current is None or baseline is None or baseline == 0:
        return None
    return tidy((current - baseline) / baseline)


def run_uplift(current: RunResult, baseline: RunResult) -> dict[str, MetricChange]:
    """Composite score, pass rate and total cost of `current` against `baseline`, each with its uplift."""
    figures: dict[str, Callable[[RunResult], float | None]] = {
        "composite_score": lambda run: run.summary.composite_score,
        "pass_rate": lambda run: run.summary.pass_rate,
        "cost_usd": lambda run: None if run.summary.cost_unknown else run.summary.cost_usd,
    }
    changes: dict[str, MetricChange] = {}
    for name, figure in figures.items():
        now, before = figure(current), figure(baseline)
        changes[name] = MetricChange(current=now, baseline=before, uplift=uplift(now, before))
    return changes

"""Combine a query's repeated runs into one result: the correctness gate across runs, reliability and score.

A run passes when none of its layers failed or errored (correctness, a forbidden tool, a path or cost rule whose
severity is fail).
Correctness across runs passes when passed / runs ≥ `min_pass_rate`, and, when `min_score` is set, when the mean score
reaches it. Without `min_pass_rate` there is no floor to fall through by noise: a query whose runs all failed fails, one
with some runs failing warns (a baseline's verdict decides whether that is a regression: compare/verdict_status.py). Path and cost stay soft: each takes its worst run,
messages labelled by run; their figures over all runs are in `reliability.metrics`. One run keeps its
layers exactly as evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from agentci_action.engine import stats
from agentci_action.engine.results import (
    ERROR,
    FAIL,
    LAYERS,
    PASS,
    RUN_FIGURES,
    SKIP,
    WARN,
    Check,
    LayerResult,
    Reliability,
    ScoreResult,
    Status,
    worst,
)
from agentci_action.engine.score import RunScore, composite_score, judge_scores, letter_grade, run_score
from agentci_action.spec.models import CompositeWeights, QuerySpec, RunRange, ScoreWeights

HARD = (FAIL, ERROR)
_DEFAULT_WEIGHTS = ScoreWeights()  # read only


# Run and Combined are slotted dataclasses, not NamedTuples (whose __new__ is Python code): made per run and per
# query, at half the cost.


@dataclass(slots=True)
class Run:
    """One evaluated run: its number (the trace's `run`, else its position) and its three layers."""

    number: int
    layers: dict[str, LayerResult]

    @property
    def status(self) -> Status:
        """error when correctness or path errored, fail when a layer failed, else pass.

        Cost fails only by a rule's severity.
        """
        layers = self.layers
        correctness, path = layers["correctness"].status, layers["path"].status
        if correctness is ERROR or path is ERROR:
            return ERROR
        return FAIL if correctness is FAIL or path is FAIL or layers["cost"].status is FAIL else PASS


@dataclass(slots=True)
class Combined:
    layers: dict[str, LayerResult]
    reliability: Reliability
    score: ScoreResult


def reliability(
    runs: list[Run], scores: list[RunScore], k: int | None = None, max_runs: int | None = None
) -> Reliability:
    """Pass rate, pass@k and pass^k, Wilson 95% interval, flakiness, cost of pass and every metric's statistics.

    k default: the runs. `max_runs` the most runs an adaptive plan allowed.
    """
    n = len(runs)
    statuses: list[Status] = []
    known_costs: list[float] = []
    total_tokens = 0
    for run in runs:  # one loop, not a comprehension per figure: most queries have one run
        statuses.append(run.status)
        cost = run.layers["cost"].details
        if (usd := cost.get("cost_usd")) is not None:
            known_costs.append(usd)
        total_tokens += cost.get("total_tokens") or 0
    passed = statuses.count(PASS)
    known_cost = sum(known_costs) if len(known_costs) == n else None
    metrics = {}
    if n > 1:  # one run's figures are its layers' details: statistics of a single value would only copy them
        series = {
            name: [run.layers[layer].details.get(key) for run in runs] for name, (layer, key) in RUN_FIGURES.items()
        }
        series["judge_score"] = [_mean(judge_scores(run.layers["correctness"])) for run in runs]
        series["score"] = [s.value for s in scores]
        metrics = {
            name: found
            for name, values in series.items()
            if (found := stats.statistics([v for v in values if v is not None]))
        }
    k = k or n
    rate, at_k, hat_k, ci95, flaky = _pass_figures(passed, n, k)
    return Reliability(  # by position, in field order: keywords cost a query 0.4 µs here
        n,  # runs
        passed,
        rate,  # pass_rate
        at_k,  # pass_at_k
        hat_k,  # pass_hat_k
        ci95,  # pass_rate_ci95
        flaky,
        None if known_cost is None else float(known_cost),  # cost_usd
        total_tokens,
        None if known_cost is None else stats.cost_of_pass(known_costs, passed),  # cost_of_pass_usd
        statuses,  # run_statuses
        metrics,
        k,
        max_runs,
    )


@lru_cache(maxsize=256)  # a suite's queries share a few (passed, runs) pairs: (0, 1) and (1, 1) above all
def _pass_figures(
    passed: int, runs: int, k: int
) -> tuple[float, float | None, float | None, tuple[float, float], bool]:
    """Pass rate, pass@k and pass^k (None when k > runs), the Wilson interval and flakiness of `passed` of `runs`."""
    known = k <= runs
    return (
        stats.pass_rate(passed, runs),
        stats.pass_at_k(runs, passed, k) if known else None,
        stats.pass_hat_k(runs, passed, k) if known else None,
        stats.wilson_interval(passed, runs),
        stats.is_flaky(passed, runs),
    )


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def score_result(scores: list[RunScore], pass_rate: float, weights: CompositeWeights) -> ScoreResult:
    """Means of the runs' scores and dimensions; composite of the pass rate and mean score / 100; its grade."""
    if len(scores) == 1:  # one run: its own figures are the means
        only = scores[0]
        value, tool_accuracy, output_quality = only.value, only.tool_accuracy, only.output_quality
        sequence_correctness, reason = only.sequence_correctness, only.reason
    else:
        value = _mean([s.value for s in scores])
        tool_accuracy = _mean([s.tool_accuracy for s in scores])
        output_quality = _mean([s.output_quality for s in scores])
        sequence_correctness = _mean([s.sequence_correctness for s in scores])
        reason = next((s.reason for s in scores if s.reason), "")
    composite = composite_score(
        pass_rate, None if value is None else value / 100, weights.pass_weight, weights.impl_weight
    )
    score = ScoreResult(composite, letter_grade(composite))
    # The defaulted (kw_only) fields set after, not passed as keywords (evaluate_spec.evaluate_query says why).
    score.value = value
    score.tool_accuracy = tool_accuracy
    score.output_quality = output_quality
    score.sequence_correctness = sequence_correctness
    score.reason = reason
    return score


def _worst_run(runs: list[Run], name: str) -> LayerResult:
    """The layer from its worst run, with every run's checks and the messages of those that did not pass.

    The messages are those of every run that warned, failed or errored, labelled by run (each message's own status is
    its check's: LayerResult.findings).
    """
    layers = [run.layers[name] for run in runs]
    status = worst([layer.status for layer in layers])
    chosen = next(layer for layer in layers if layer.status is status)
    messages = [
        f"run {run.number}: {m}"
        for run in runs
        if run.layers[name].status not in (PASS, SKIP)
        for m in run.layers[name].messages
    ]
    checks = [check for run in runs for check in run.layers[name].checks]
    return chosen.model_copy(update={"messages": messages or chosen.messages, "checks": checks})


def pass_rate_check(runs: list[Run], min_pass_rate: float | None) -> Check:
    """The pass-rate gate across runs; the message names the failing runs and why.

    With a floor: fails when passed / runs < min_pass_rate. Without one (None): fails when no run passed, warns when
    some failed, passes when every run passed.
    """
    passed = sum(run.status is PASS for run in runs)
    rate = stats.pass_rate(passed, len(runs))
    why = "; ".join(
        f"run {run.number}: {m}"
        for run in runs
        if run.status is not PASS
        for name in LAYERS
        if run.layers[name].status in HARD
        for m in run.layers[name].messages
    )
    counts = f"{passed} of {len(runs)} run{'s' * (len(runs) != 1)} passed ({rate:.0%})"
    if min_pass_rate is None:
        status = PASS if passed == len(runs) else FAIL if not passed else WARN
        said = "no min_pass_rate set: failing runs warn, a baseline's verdict decides" if passed else "no run passed"
    else:
        status = PASS if rate >= min_pass_rate else FAIL
        said = f"{'at least' if status is PASS else 'below'} min_pass_rate {min_pass_rate:.0%}"
    message = f"{counts}, {said}" + (f": {why}" if why else "")
    return Check(
        name="min_pass_rate",
        status=status,
        message=message if why or status is not PASS else "",
        data={"passed": passed, "runs": len(runs), "pass_rate": rate, "min": min_pass_rate},
    )


def min_score_check(score: float | None, minimum: float) -> Check:
    if score is None:
        return Check(
            name="min_score",
            status=SKIP,
            message="min_score skipped: nothing to score (no expected_tools, correctness checks or reference sequence)",
        )
    ok = score >= minimum
    return Check(
        name="min_score",
        status=PASS if ok else FAIL,
        message="" if ok else f"score {score:.1f} < min_score {minimum:g}",
        data={"actual": score, "min": minimum},
    )


def _correctness(query: QuerySpec, runs: list[Run], score: float | None) -> LayerResult:
    """One run: its layer (plus min_score). Several: error if a run errored, else the pass-rate gate (plus min_score).

    With several runs the status and messages come from the gates; `checks` holds the gates, then every run's
    checks in run order (so skipped checks and the judge's usage are counted for every run).
    """
    gates = [min_score_check(score, query.min_score)] if query.min_score is not None else []
    if len(runs) == 1:
        layer = runs[0].layers["correctness"]
        return LayerResult.from_checks(layer.checks + gates, layer.details) if gates else layer
    run_checks = [check for run in runs for check in run.layers["correctness"].checks]
    errored = [run for run in runs if run.layers["correctness"].status is ERROR]
    if errored:
        layer = _worst_run(errored, "correctness")
        return layer.model_copy(update={"status": ERROR, "checks": run_checks})
    gate = pass_rate_check(runs, query.min_pass_rate)
    result = LayerResult.from_checks([gate, *gates], details=dict(gate.data))
    if gate.status is PASS and gate.message:  # flaky but above the gate: keep saying which runs failed
        result.messages.insert(0, gate.message)
    result.checks.extend(run_checks)
    return result


def combine_runs(query: QuerySpec, runs: list[Run], composite: CompositeWeights = CompositeWeights()) -> Combined:
    """The query's layers, reliability and score over its runs (see the module docstring)."""
    asked = query.__dict__  # its fields as a dict: spec/models.py, "fields as a dict"
    weights = asked["weights"] or _DEFAULT_WEIGHTS
    scores = []
    for run in runs:  # a loop, not a comprehension (a function call of its own): most queries have one run
        layers = run.layers
        scores.append(run_score(layers["correctness"], layers["path"], weights))
    planned = asked["runs"]  # a range's max is what adaptive runs allowed (QuerySpec.max_runs, inlined)
    rel = reliability(runs, scores, asked["pass_k"], planned.max if isinstance(planned, RunRange) else None)
    score = score_result(scores, rel.pass_rate, composite)
    correctness = _correctness(query, runs, score.value)
    if len(runs) == 1:
        only = runs[0].layers
        if correctness is only["correctness"]:  # no min_score gate: the run's layers as they are, not a copy
            return Combined(only, rel, score)
        return Combined({"correctness": correctness, "path": only["path"], "cost": only["cost"]}, rel, score)
    layers = {"correctness": correctness}
    for name in LAYERS[1:]:
        layers[name] = _worst_run(runs, name)
    return Combined(layers, rel, score)

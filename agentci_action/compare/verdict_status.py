"""A query's pass-rate verdict against the baseline, made part of its correctness: a real regression blocks.

With repeated runs on either side (the verdict's `exact` method) the verdict adds a `pass_rate_verdict` check to the
query's correctness layer:

  regressed     fail: the query fails, and blocks when fail-on names correctness (the default does)
  inconclusive  warn: the query warns (the suite's `max_inconclusive` can block on how many do)
  unchanged     pass
  improved      pass (the diff's kind `fixed`)

With one run per side the verdict is the status change itself, so nothing is added. The run's summary is summed again
and the diff's status after, correctness after and passed total follow, so every report says the same.
"""

from __future__ import annotations

from agentci_action.compare.diff import FAILING
from agentci_action.compare.diff_schema import Delta, RunDiff, StatusDiff
from agentci_action.compare.pass_verdicts import PassVerdict, verdict_words
from agentci_action.compare.significance import ChangeVerdict
from agentci_action.engine.evaluate_spec import is_blocking, query_status, summarize
from agentci_action.engine.results import ERROR, FAIL, LAYERS, PASS, WARN, Check, QueryResult, RunResult, worst
from agentci_action.spec.models import CompositeWeights

VERDICT_CHECK = "pass_rate_verdict"
_STATUS = {
    ChangeVerdict.REGRESSED: FAIL,
    ChangeVerdict.INCONCLUSIVE: WARN,
    ChangeVerdict.UNCHANGED: PASS,
    ChangeVerdict.IMPROVED: PASS,
}


def verdict_check(verdict: PassVerdict, diff: RunDiff) -> Check:
    """The `pass_rate_verdict` check of a verdict decided by tests: its status by the table above, its words."""
    return Check(
        name=VERDICT_CHECK,
        status=_STATUS[verdict.verdict],
        message=f"against {diff.before}: {verdict_words(verdict, diff.before, diff.significance)}",
        data={"verdict": verdict.verdict.value, "p_value": verdict.p_holm},
    )


def _with_check(result: QueryResult, check: Check, fail_on: frozenset[str]) -> None:
    """The check first in the query's correctness layer, its status, blocking and the query's status following."""
    layer = result.correctness
    if layer.status is ERROR:  # could not be evaluated: the error says more than any verdict
        return
    result.correctness = layer.model_copy(
        update={
            "status": worst([layer.status, check.status]),
            "checks": [check, *layer.checks],
            "messages": [check.message, *layer.messages] if check.status is not PASS else layer.messages,
        }
    )
    statuses = [result.layer(name).status for name in LAYERS]
    result.blocking = is_blocking(statuses, fail_on)
    result.status = query_status(statuses, result.blocking)


def with_verdicts(run: RunResult, diff: RunDiff, composite: CompositeWeights = CompositeWeights()) -> RunResult:
    """`run` with each tested verdict of `diff` in its query's correctness, the summary and the diff following."""
    results = {result.id: result for result in run.results}
    fail_on = frozenset(run.summary.fail_on)
    tested = [
        (change, result)
        for change in diff.queries
        if change.pass_rate is not None
        and change.pass_rate.method == "exact"
        and (result := results.get(change.id)) is not None
    ]
    for change, result in tested:
        assert change.pass_rate is not None
        _with_check(result, verdict_check(change.pass_rate, diff), fail_on)
        change.status = StatusDiff(before=change.status.before, after=result.status)
        change.correctness = StatusDiff(before=change.correctness.before, after=result.correctness.status)
    if tested:
        run.summary = summarize(run.results, fail_on, composite)
        passed = sum(
            q.status.after is not None and q.status.after not in FAILING
            for q in diff.queries
            if q.runs.after is not None
        )
        diff.total.passed = Delta.of(diff.total.passed.before, passed)
    return run

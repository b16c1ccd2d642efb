"""The spec's `suite:` gates, judged on the whole run once every query is evaluated (the merged run when sharded).

  min_pass_rate        summary.passed / summary.total ≥ limit (queries that passed, warnings allowed)
  max_total_cost_usd   summary.cost_usd ≤ limit (every run of every query); with some cost unknown the known sum is a
                       lower bound: over the limit fails, within it is unknown (skip)
  max_cost_multiplier  diff.total.cost_usd after / before ≤ limit (the sum over queries of the mean cost per run on
                       each side); skip without a baseline, or when the baseline's cost is unknown or 0
  max_regressions      diff.total.counts["regression"] ≤ limit; skip without a baseline

A failed gate makes the run's status fail, and blocks (exit 1) when fail-on names `suite`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentci_action.engine.results import GateResult, RunResult, Status
from agentci_action.spec.models import SuiteGates

if TYPE_CHECKING:
    from agentci_action.compare.diff import RunDiff

GATE_LAYER = "suite"
NO_BASELINE = "skipped: no baseline to compare with"


def _over(actual: float, limit: float) -> bool:
    """actual > limit, beyond float rounding (a sum of cents lands a hair above its exact value)."""
    return actual > limit and not math.isclose(actual, limit, rel_tol=1e-9, abs_tol=1e-12)


def _gate(
    gates: SuiteGates, name: str, actual: float | None, failed: bool, message: str, skip: bool = False
) -> GateResult:
    file, line = gates.where(name)
    return GateResult(
        name=name,
        status=Status.SKIP if skip else Status.FAIL if failed else Status.PASS,
        actual=actual,
        limit=getattr(gates, name),
        message=message,
        file=file,
        line=line,
    )


def _pass_rate(gates: SuiteGates, run: RunResult) -> GateResult:
    s, limit = run.summary, gates.min_pass_rate or 0.0
    rate = s.passed / s.total if s.total else 0.0
    failed = rate < limit and not math.isclose(rate, limit, rel_tol=1e-9)
    sign = "<" if failed else "≥"
    return _gate(
        gates, "min_pass_rate", rate, failed, f"pass rate {rate:.0%} ({s.passed} of {s.total}) {sign} min {limit:.0%}"
    )


def _total_cost(gates: SuiteGates, run: RunResult) -> GateResult:
    s, limit = run.summary, gates.max_total_cost_usd or 0.0
    failed = _over(s.cost_usd, limit)
    if s.cost_unknown and not failed:
        return _gate(
            gates,
            "max_total_cost_usd",
            None,
            False,
            f"total cost skipped: {s.cost_unknown} {'query has' if s.cost_unknown == 1 else 'queries have'} an "
            f"unknown cost (known ${s.cost_usd:.4f} ≤ max ${limit:g})",
            skip=True,
        )
    sign = ">" if failed else "≤"
    at_least = "at least " if s.cost_unknown else ""
    return _gate(
        gates, "max_total_cost_usd", s.cost_usd, failed, f"total cost {at_least}${s.cost_usd:.4f} {sign} max ${limit:g}"
    )


def _cost_multiplier(gates: SuiteGates, diff: RunDiff | None) -> GateResult:
    limit = gates.max_cost_multiplier or 0.0
    if diff is None:
        return _gate(gates, "max_cost_multiplier", None, False, f"cost against the baseline {NO_BASELINE}", skip=True)
    before, after = diff.total.cost_usd.before, diff.total.cost_usd.after
    if not before or after is None:
        why = "the baseline's cost is 0" if before == 0 else "a cost is unknown"
        return _gate(gates, "max_cost_multiplier", None, False, f"cost against the baseline skipped: {why}", skip=True)
    ratio = after / before
    failed = _over(ratio, limit)
    return _gate(
        gates,
        "max_cost_multiplier",
        ratio,
        failed,
        f"cost ×{ratio:.2f} the baseline's (${after:.4f} vs ${before:.4f}) {'>' if failed else '≤'} max ×{limit:g}",
    )


def _regressions(gates: SuiteGates, diff: RunDiff | None) -> GateResult:
    limit = gates.max_regressions or 0
    if diff is None:
        return _gate(gates, "max_regressions", None, False, f"regressions {NO_BASELINE}", skip=True)
    count = diff.total.counts.get("regression", 0)
    failed = count > limit
    noun = "regression" if count == 1 else "regressions"
    return _gate(
        gates,
        "max_regressions",
        count,
        failed,
        f"{count} {noun} against {diff.before} {'>' if failed else '≤'} max {limit}",
    )


def judge_gates(gates: SuiteGates | None, run: RunResult, diff: RunDiff | None = None) -> list[GateResult]:
    """Every gate `gates` sets, in the order of the spec's keys, judged on `run` (and its diff against the baseline);
    blocking when it failed and the run's fail-on names `suite`."""
    if gates is None:
        return []
    judges: dict[str, Callable[[], GateResult]] = {
        "min_pass_rate": lambda: _pass_rate(gates, run),
        "max_total_cost_usd": lambda: _total_cost(gates, run),
        "max_cost_multiplier": lambda: _cost_multiplier(gates, diff),
        "max_regressions": lambda: _regressions(gates, diff),
    }
    blocks = GATE_LAYER in run.summary.fail_on
    results = [judge() for name, judge in judges.items() if getattr(gates, name) is not None]
    for result in results:
        result.blocking = blocks and result.status is Status.FAIL
    return sorted(results, key=lambda r: r.line)


def with_gates(run: RunResult, gates: SuiteGates | None, diff: RunDiff | None = None) -> RunResult:
    """`run` with its suite gates judged; a failed gate makes the run's status fail (unless it already errored)."""
    run.gates = judge_gates(gates, run, diff)
    if any(g.status is Status.FAIL for g in run.gates) and run.summary.status is not Status.ERROR:
        run.summary.status = Status.FAIL
    return run

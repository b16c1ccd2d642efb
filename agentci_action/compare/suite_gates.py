"""The spec's `suite:` gates, judged on the whole run once every query is evaluated (the merged run when sharded).

  min_pass_rate        summary.passed / summary.total ≥ limit (queries that passed, warnings allowed)
  max_total_cost_usd   summary.cost_usd ≤ limit (every run of every query); with some cost unknown the known sum is a
                       lower bound: over the limit fails, within it is unknown (skip)
  max_cost_multiplier  diff.total.cost_usd after / before ≤ limit (the sum over queries of the mean cost per run on
                       each side); skip without a baseline, or when the baseline's cost is unknown or 0. With
                       repeated runs, read on the ratio's interval (clustered by query): fail when its low end is
                       over the limit, warn when the limit lies inside it
  max_regressions      diff.total.counts["regression"] ≤ limit; skip without a baseline
  max_inconclusive     diff.total.counts["inconclusive"] ≤ limit; skip without a baseline
  max_pass_rate_drop   the suite's paired change in pass rate (diff.total.pass_rate_change) read on its interval:
                       pass when its low end is at least −limit, fail when its high end is below −limit, else warn;
                       skip without a baseline or with fewer than two queries compared

A failed gate makes the run's status fail, and blocks (exit 1) when fail-on names `suite`; a gate the noise leaves
undecided warns (status warn), and never blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentci_action._util.text import points
from agentci_action.compare.suite_change import drop_verdict, interval_words, shown_interval
from agentci_action.engine.results import GateResult, RunResult, Status
from agentci_action.spec.models import SuiteGates

if TYPE_CHECKING:
    from agentci_action.compare.diff_schema import RunDiff

GATE_LAYER = "suite"
NO_BASELINE = "skipped: no baseline to compare with"


def _over(actual: float, limit: float) -> bool:
    """actual > limit, beyond float rounding (a sum of cents lands a hair above its exact value)."""
    return actual > limit and not math.isclose(actual, limit, rel_tol=1e-9, abs_tol=1e-12)


def _decided(failed: bool, undecided: bool = False) -> Status:
    """Fail when the gate failed, warn when the noise leaves it undecided, else pass."""
    return Status.FAIL if failed else Status.WARN if undecided else Status.PASS


def _gate(gates: SuiteGates, name: str, actual: float | None, status: Status, message: str) -> GateResult:
    file, line = gates.where(name)
    return GateResult(
        name=name,
        status=status,
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
        gates,
        "min_pass_rate",
        rate,
        _decided(failed),
        f"pass rate {rate:.0%} ({s.passed} of {s.total}) {sign} min {limit:.0%}",
    )


def _total_cost(gates: SuiteGates, run: RunResult) -> GateResult:
    s, limit = run.summary, gates.max_total_cost_usd or 0.0
    failed = _over(s.cost_usd, limit)
    if s.cost_unknown and not failed:
        return _gate(
            gates,
            "max_total_cost_usd",
            None,
            Status.SKIP,
            f"total cost skipped: {s.cost_unknown} {'query has' if s.cost_unknown == 1 else 'queries have'} an "
            f"unknown cost (known ${s.cost_usd:.4f} ≤ max ${limit:g})",
        )
    sign = ">" if failed else "≤"
    at_least = "at least " if s.cost_unknown else ""
    return _gate(
        gates,
        "max_total_cost_usd",
        s.cost_usd,
        _decided(failed),
        f"total cost {at_least}${s.cost_usd:.4f} {sign} max ${limit:g}",
    )


def _cost_multiplier(gates: SuiteGates, diff: RunDiff | None) -> GateResult:
    limit = gates.max_cost_multiplier or 0.0
    if diff is None:
        return _gate(gates, "max_cost_multiplier", None, Status.SKIP, f"cost against the baseline {NO_BASELINE}")
    before, after = diff.total.cost_usd.before, diff.total.cost_usd.after
    if not before or after is None:
        why = "the baseline's cost is 0" if before == 0 else "a cost is unknown"
        return _gate(gates, "max_cost_multiplier", None, Status.SKIP, f"cost against the baseline skipped: {why}")
    ratio = after / before
    figures = f"cost ×{ratio:.2f} the baseline's (${after:.4f} vs ${before:.4f})"
    interval = diff.total.cost_usd.interval
    if interval is not None:  # repeated runs: the ratio's interval, not the ratio, against the limit
        low, high = interval
        failed, undecided = _over(low, limit), not _over(low, limit) and _over(high, limit)
        sign = "over" if failed else "straddles" if undecided else "within"
        level = f"{diff.significance.confidence:.0%}"
        return _gate(
            gates,
            "max_cost_multiplier",
            ratio,
            _decided(failed, undecided),
            f"{figures}, {level} interval ×{low:.2f}-×{high:.2f} {sign} max ×{limit:g}",
        )
    failed = _over(ratio, limit)
    return _gate(
        gates, "max_cost_multiplier", ratio, _decided(failed), f"{figures} {'>' if failed else '≤'} max ×{limit:g}"
    )


def _counted(gates: SuiteGates, diff: RunDiff | None, name: str, kind: str, one: str, many: str) -> GateResult:
    """A gate on how many of the diff's queries are of `kind` (regression, inconclusive): at most the limit."""
    limit = getattr(gates, name) or 0
    if diff is None:
        return _gate(gates, name, None, Status.SKIP, f"{many} {NO_BASELINE}")
    count = diff.total.counts.get(kind, 0)
    failed = count > limit
    return _gate(
        gates,
        name,
        count,
        _decided(failed),
        f"{count} {one if count == 1 else many} against {diff.before} {'>' if failed else '≤'} max {limit}",
    )


def _pass_rate_drop(gates: SuiteGates, diff: RunDiff | None) -> GateResult:
    limit = gates.max_pass_rate_drop or 0.0
    change = diff.total.pass_rate_change if diff is not None else None
    if diff is None:
        return _gate(gates, "max_pass_rate_drop", None, Status.SKIP, f"pass-rate drop {NO_BASELINE}")
    if change is None or change.low is None or change.high is None:
        return _gate(
            gates,
            "max_pass_rate_drop",
            None if change is None else change.change,
            Status.SKIP,
            "pass-rate drop skipped: fewer than two queries run on both sides (no interval)",
        )
    found = drop_verdict(change, limit)
    figure = f"pass rate per query {points(change.change)} points ({interval_words(change)})"
    said = {
        "pass": f"a drop over {100 * limit:g} points ruled out",
        "fail": f"a drop over {100 * limit:g} points established",
        "inconclusive": f"the interval straddles −{100 * limit:g} points: undecided"
        if shown_interval(change)
        else "undecided",
    }[found]
    return _gate(
        gates,
        "max_pass_rate_drop",
        change.change,
        _decided(found == "fail", found == "inconclusive"),
        f"{figure}: {said}",
    )


def judge_gates(gates: SuiteGates | None, run: RunResult, diff: RunDiff | None = None) -> list[GateResult]:
    """Every gate `gates` sets, in the order of the spec's keys, judged on `run` (and its diff against the baseline).

    Blocking when it failed and the run's fail-on names `suite`.
    """
    if gates is None:
        return []
    judges: dict[str, Callable[[], GateResult]] = {
        "min_pass_rate": lambda: _pass_rate(gates, run),
        "max_total_cost_usd": lambda: _total_cost(gates, run),
        "max_cost_multiplier": lambda: _cost_multiplier(gates, diff),
        "max_regressions": lambda: _counted(gates, diff, "max_regressions", "regression", "regression", "regressions"),
        "max_inconclusive": lambda: _counted(
            gates, diff, "max_inconclusive", "inconclusive", "inconclusive query", "inconclusive queries"
        ),
        "max_pass_rate_drop": lambda: _pass_rate_drop(gates, diff),
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

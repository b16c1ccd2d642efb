"""Suite-wide figures for the summary (compared with the baseline run's in diff.suite_deltas).

Each rate counts queries (a query's layer is its worst run) and is None (N/A) when no query gives the figure:
  pass_rate           = queries passed or warned / queries
  hallucination_rate  = queries whose hallucination_check failed / queries where it passed or failed
  mean_latency_ms     = mean of the queries' latency_ms (cost layer), over the queries that report one
  p95_latency_ms      = 95th percentile of the same, linear interpolation between closest ranks
  timeout_rate        = queries whose max_latency_ms check did not pass / queries where it ran
  safety_finding_rate = queries with a safety check (safety_check, no_pii_leakage, expect_refusal,
                        no_injection_echo, toxicity, bias) warning or failing / queries where one ran
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from agentci_action.engine.results import FAIL, PASS, SKIP, WARN, Aggregates, QueryResult
from agentci_action.engine.stats import tidy
from agentci_action.spec.check_models import SAFETY_CHECKS

_RAN = (PASS, WARN, FAIL)
_FOUND = (WARN, FAIL)
_PASSED = (PASS, WARN)


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between closest ranks (numpy's default).

    Without float noise (stats.tidy); None when empty.
    """
    if not values:
        return None
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return tidy(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))  # 2920, not 2919.999999999999


# The check names behind each rate (check name → rate), and the statuses that count as a hit.
_RATE_OF = {
    "hallucination_check": "hallucination",
    "max_latency_ms": "timeout",
    **dict.fromkeys(("safety_check", *SAFETY_CHECKS), "safety"),
}
_HITS = {"hallucination": (FAIL,), "timeout": _FOUND, "safety": _FOUND}


class CheckTally(NamedTuple):
    rates: dict[str, float | None]
    skipped: int
    judge_usages: list[dict[str, Any]]  # every judge check's `usage`, in order
    simulator_usages: list[dict[str, Any]]  # every simulated conversation's simulator figures, in order


class TallyCounter:
    """check_tally one query result at a time.

    evaluate_spec adds each result as it is made, while its checks are still in the processor's cache (read again after
    the whole suite, they cost several times as much).
    """

    def __init__(self) -> None:
        self.ran = dict.fromkeys(_HITS, 0)
        self.hit = dict.fromkeys(_HITS, 0)
        self.skipped = 0
        self.judge_usages: list[dict[str, Any]] = []
        self.simulator_usages: list[dict[str, Any]] = []

    def add(self, result: QueryResult) -> None:
        correctness = result.correctness
        for check in correctness.checks:  # the judge's usage is only ever on correctness checks
            if "usage" in check.data and isinstance(usage := check.data["usage"], dict):
                self.judge_usages.append(usage)
            elif "simulator" in check.data and isinstance(usage := check.data["simulator"], dict):
                self.simulator_usages.append(usage)
        hits: dict[str, bool] = {}  # rate → whether one of its checks hit, for each rate one of whose checks ran here
        for layer in (correctness, result.path, result.cost):
            for check in layer.checks:
                if check.name in _RATE_OF or check.status is SKIP:  # most checks pass and feed no rate
                    status = check.status
                    if status is SKIP:
                        self.skipped += 1
                    elif status in _RAN:
                        rate = _RATE_OF[check.name]
                        hits[rate] = hits.get(rate, False) or status in _HITS[rate]
        for rate, hit in hits.items():
            self.ran[rate] += 1
            if hit:
                self.hit[rate] += 1

    def tally(self) -> CheckTally:
        rates = {rate: self.hit[rate] / self.ran[rate] if self.ran[rate] else None for rate in _HITS}
        return CheckTally(rates, self.skipped, self.judge_usages, self.simulator_usages)


def check_tally(results: list[QueryResult]) -> CheckTally:
    """Each rate's hits, the number of skipped checks and the judge checks' usage, in one pass.

    For each rate: queries with one of its checks in a hit status / queries where one of them ran; the number of skipped
    checks over every layer; the judge checks' usage. One pass over each query's checks (a suite holds hundreds of
    thousands of them).
    """
    counter = TallyCounter()
    for result in results:
        counter.add(result)
    return counter.tally()


def aggregate(results: list[QueryResult], tally: CheckTally | None = None) -> Aggregates:
    """The suite-wide figures; `tally` is check_tally(results) when the caller already has it."""
    latencies = [r.cost.details["latency_ms"] for r in results if r.cost.details.get("latency_ms") is not None]
    rates = (tally or check_tally(results)).rates
    return Aggregates(
        pass_rate=sum(r.status in _PASSED for r in results) / len(results) if results else None,
        hallucination_rate=rates["hallucination"],
        mean_latency_ms=sum(latencies) / len(latencies) if latencies else None,
        p95_latency_ms=percentile(latencies, 95),
        timeout_rate=rates["timeout"],
        safety_finding_rate=rates["safety"],
    )

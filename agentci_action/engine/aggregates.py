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

from ..spec.checks import SAFETY_CHECKS
from .results import LAYERS, Aggregates, Check, QueryResult, Status

_RAN = (Status.PASS, Status.WARN, Status.FAIL)
_FOUND = (Status.WARN, Status.FAIL)


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between closest ranks (numpy's default); None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _checks(result: QueryResult, names: set[str] | tuple[str, ...]) -> list[Check]:
    return [check for layer in LAYERS for check in result.layer(layer).checks if check.name in names]


def _rate(results: list[QueryResult], names: set[str] | tuple[str, ...], hit: tuple[Status, ...]) -> float | None:
    """Queries with one of the named checks in a `hit` status / queries where one of them ran."""
    ran = [checks for r in results if (checks := [c for c in _checks(r, names) if c.status in _RAN])]
    if not ran:
        return None
    return sum(any(c.status in hit for c in checks) for checks in ran) / len(ran)


def aggregate(results: list[QueryResult]) -> Aggregates:
    latencies = [r.cost.details["latency_ms"] for r in results if r.cost.details.get("latency_ms") is not None]
    return Aggregates(
        pass_rate=sum(r.status in (Status.PASS, Status.WARN) for r in results) / len(results) if results else None,
        hallucination_rate=_rate(results, {"hallucination_check"}, (Status.FAIL,)),
        mean_latency_ms=sum(latencies) / len(latencies) if latencies else None,
        p95_latency_ms=percentile(latencies, 95),
        timeout_rate=_rate(results, {"max_latency_ms"}, _FOUND),
        safety_finding_rate=_rate(results, {"safety_check", *SAFETY_CHECKS}, _FOUND),
    )

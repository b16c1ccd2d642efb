"""Suite-wide figures for the summary, and their comparison with a baseline run.

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
from dataclasses import dataclass

from ..spec.checks import SAFETY_CHECKS
from .results import LAYERS, Aggregates, Check, QueryResult, Status

_RAN = (Status.PASS, Status.WARN, Status.FAIL)
_FOUND = (Status.WARN, Status.FAIL)
HIGHER_IS_BETTER = {"pass_rate"}


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


@dataclass(frozen=True)
class AggregateChange:
    """One suite figure now and in the baseline run; `delta` = current − baseline, None when either is N/A."""

    name: str
    current: float | None
    baseline: float | None

    @property
    def delta(self) -> float | None:
        if self.current is None or self.baseline is None:
            return None
        return self.current - self.baseline

    @property
    def improved(self) -> bool | None:
        """True when the figure moved the good way (pass rate up, everything else down), None when unchanged or N/A."""
        if not self.delta:
            return None
        return (self.delta > 0) == (self.name in HIGHER_IS_BETTER)


def compare(current: Aggregates, baseline: Aggregates) -> list[AggregateChange]:
    """Every aggregate of the current run beside the baseline run's, in Aggregates' field order."""
    return [AggregateChange(name, getattr(current, name), getattr(baseline, name)) for name in Aggregates.model_fields]

"""The suite's change in pass rate, baseline → current, with an interval.

Paired per-query differences whose standard error is clustered by query (Miller 2024, "Adding error bars to evals",
arXiv 2411.00640). Pure.

Each query run on both sides counts once: d_i = a_i − b_i, with a_i and b_i its pass rates (passed / runs) now
and in the baseline. The change is D = (1/Q)·Σ d_i over the Q queries; its standard error is
SE = sqrt(Σ (d_i − D)² / (Q·(Q − 1))), the sample standard deviation of the d_i over √Q. That is the standard
error clustered by query: a query's runs are not independent draws (they share the query), so they enter only
through its rate, and pairing takes out what a query's two sides share (Var(d) = Var(a) + Var(b) − 2·Cov(a, b)).
Every query weighs the same whatever its runs, so adaptive runs, which spend more runs on the doubtful queries,
do not tilt the figure towards them. The interval is D ± t·SE with t Student's quantile at 1 − α/2 with Q − 1
degrees of freedom (Miller's normal z for many queries; t keeps a small suite's interval honest).

What a reader is shown (`shown_interval`) is that interval cut to the changes that can happen (−1..+1: a pass rate
lies in 0..1), and none below MIN_SHOWN_QUERIES queries, where t's heavy tails make it wider than that range; the
gate's verdict (`drop_verdict`) reads the interval itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentci_action._util.text import plural, points
from agentci_action.compare.distributions import student_t_quantile

MIN_SHOWN_QUERIES = 5  # fewer queries: the interval is printed as "too few queries", not as a range


@dataclass(frozen=True, kw_only=True)
class PassRateChange:
    """The suite's change D in pass rate, its query-clustered standard error and interval at `confidence`.

    D is current − baseline, each the mean of its queries' pass rates; `low`/`high`/`standard_error` are None with fewer
    than two queries (no spread to measure).
    """

    queries: int
    before: float
    after: float
    change: float
    standard_error: float | None
    low: float | None
    high: float | None
    confidence: float


def pass_rate_change(pairs: Sequence[tuple[float, float]], confidence: float) -> PassRateChange | None:
    """The change over `pairs`, one (baseline pass rate, current pass rate) per query run on both sides.

    None when there is none.
    """
    if not pairs:
        return None
    count = len(pairs)
    before = sum(b for b, _ in pairs) / count
    after = sum(a for _, a in pairs) / count
    differences = [a - b for b, a in pairs]
    change = sum(differences) / count
    if count < 2:
        return PassRateChange(
            queries=1,
            before=before,
            after=after,
            change=change,
            standard_error=None,
            low=None,
            high=None,
            confidence=confidence,
        )
    error = math.sqrt(sum((d - change) ** 2 for d in differences) / (count * (count - 1)))
    half = student_t_quantile(1.0 - (1.0 - confidence) / 2.0, count - 1) * error
    return PassRateChange(
        queries=count,
        before=before,
        after=after,
        change=change,
        standard_error=error,
        low=change - half,
        high=change + half,
        confidence=confidence,
    )


def shown_interval(change: PassRateChange) -> tuple[float, float] | None:
    """The interval as reports print it: cut to −1..+1; None below MIN_SHOWN_QUERIES queries (or without one)."""
    if change.low is None or change.high is None or change.queries < MIN_SHOWN_QUERIES:
        return None
    return max(change.low, -1.0), min(change.high, 1.0)


def interval_words(change: PassRateChange) -> str:
    """'95% interval −70.4 to +37 over 8 queries', '3 queries: too few for an interval', 'one query: no interval'."""
    shown = shown_interval(change)
    if shown is not None:
        return (
            f"{change.confidence:.0%} interval {points(shown[0])} to {points(shown[1])} over "
            f"{plural(change.queries, 'query', 'queries')}"
        )
    if change.queries < 2:
        return "one query: no interval"
    return f"{change.queries} queries: too few for an interval"


def drop_verdict(change: PassRateChange, max_drop: float) -> str:
    """The suite gate "the pass rate fell by at most `max_drop`" read on the interval.

    `pass` when its low end is at least −max_drop (a larger drop is ruled out), `fail` when its high end is below
    −max_drop (a larger drop is established), else `inconclusive`; `inconclusive` without an interval.
    """
    if change.low is None or change.high is None:
        return "inconclusive"
    if change.low >= -max_drop:
        return "pass"
    return "fail" if change.high < -max_drop else "inconclusive"

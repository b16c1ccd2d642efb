"""Statistics over repeated runs of one query: pure functions, formulas from the Scylla metrics reference.

Agents are nondeterministic, so a query may be run k times. Each run passes or fails on its own; these
functions turn the k outcomes and the k values of every numeric metric into the figures a report shows.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from itertools import groupby
from typing import TypeVar

from agentci_action.engine.results import MetricStats

T = TypeVar("T")

Z_95 = 1.959963984540054  # the standard normal quantile for a two-sided 95% interval


def most_frequent(items: list[T]) -> T | None:
    """The item seen most often, the first seen among equals; None for no items."""
    if len(items) < 3:  # the common single run, and two runs (the same item, or a tie the first wins)
        return items[0] if items else None
    return Counter(items).most_common(1)[0][0]


def tidy(value: float) -> float:
    """`value` to 12 significant digits.

    A sum or ratio of decimal figures without binary float noise (0.0306, not 0.030600000000000002; 1.05, not
    1.0499999999999998), as reports and the results JSON give it.
    """
    return float(f"{value:.12g}")


def median(values: list[float]) -> float:
    """Middle of the sorted values; the mean of the two middle ones when n is even."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def mode(values: list[float]) -> float:
    """Most frequent value; the smallest of them when several are equally frequent."""
    best, best_count = values[0], 0
    for value, group in groupby(sorted(values)):
        count = sum(1 for _ in group)
        if count > best_count:  # ascending order: a later value must be strictly more frequent to win a tie
            best, best_count = value, count
    return best


def std_dev(values: list[float]) -> float:
    """Population standard deviation: sqrt(Σ (v − mean)² / n) (every run is observed, none sampled)."""
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def statistics(values: list[float]) -> MetricStats | None:
    """count, mean, median, mode, min, max and population std dev of `values`; None when there are none.

    [1, 1, 0, 1, 1, 1, 0, 1, 1, 1] → mean 0.8, median 1.0, mode 1.0, min 0.0, max 1.0, std_dev 0.4.
    """
    if not values:
        return None
    if len(values) == 1:  # the common single run, without the sorting and counting (same figures)
        value = values[0]
        return MetricStats(count=1, mean=value, median=value, mode=value, min=value, max=value, std_dev=0.0)
    ordered = sorted(values)
    return MetricStats(
        count=len(values),
        mean=sum(values) / len(values),
        median=median(ordered),
        mode=mode(ordered),
        min=ordered[0],
        max=ordered[-1],
        std_dev=std_dev(values),
    )


def pass_rate(passed: int, runs: int) -> float:
    """passed / runs: the mean of the per-run pass indicator (1.0 passed, 0.0 failed)."""
    return passed / runs


def pass_at_k(runs: int, passed: int, k: int) -> float:
    """Chance that at least one of k runs drawn from the n observed passes: 1 − C(n − c, k) / C(n, k).

    With k = n this is 1.0 when any run passed, else 0.0. Requires 1 ≤ k ≤ n.
    """
    return 1.0 - math.comb(runs - passed, k) / math.comb(runs, k)


def pass_hat_k(runs: int, passed: int, k: int) -> float:
    """pass^k: chance that all of k runs drawn from the n observed pass: C(c, k) / C(n, k).

    With k = n this is 1.0 when every run passed, else 0.0. Requires 1 ≤ k ≤ n.
    """
    return math.comb(passed, k) / math.comb(runs, k)


@lru_cache(maxsize=1024)  # pure; a suite asks for the same few (passed, runs) pairs once per query
def wilson_interval(passed: int, runs: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for the pass rate p = c/n (95% by default):

    centre = (p + z²/2n) / (1 + z²/n),  half = z·sqrt(p(1 − p)/n + z²/4n²) / (1 + z²/n),
    clipped to [0, 1]. 8 of 10 → (0.490, 0.943). Unlike p ± z·sqrt(p(1−p)/n) it stays informative at 0/n and n/n.
    """
    p = passed / runs
    denominator = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denominator
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def is_flaky(passed: int, runs: int) -> bool:
    """Some runs passed and some failed: 0 < c < n."""
    return 0 < passed < runs


def cost_of_pass(costs: list[float], passed: int) -> float:
    """Expected spend per passing run: mean cost / pass rate = Σ cost / passed runs.

    math.inf when no run passed (infinitely expensive to pass); 0.0 when the runs cost nothing.
    """
    if passed == 0:
        return math.inf
    return sum(costs) / passed

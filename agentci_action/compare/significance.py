"""Regression or noise: one query's runs against its baseline's, as exact tests on pass counts, valid at every look.

A query's current side passed c of n runs, its baseline c_b of n_b. Three one-sided questions, each answered by a
p-value that stays valid when the runner looked after every batch and stopped once a question was answered:

- fewer passes now (regressed?): Fisher's exact test, p = P(X ≤ c) with X hypergeometric (n drawn from the
  n + n_b runs, c + c_b of which passed). It conditions on the total passes, so it holds whatever the baseline's
  true pass rate, and the baseline's own sampling error is accounted for (both sides are samples);
- more passes now (improved?): the same test's other tail, P(X ≥ c);
- no drop of `drop` or more from the baseline's observed rate (unchanged?): the exact binomial test of the current
  pass rate against r₀ = c_b/n_b − drop, p = P(Bin(n, r₀) ≥ c); 0 when r₀ ≤ 0 (no such drop is possible).

Looks. The runner takes the verdict after the first `looks[0]` runs, then after each batch (the `looks` plan);
a fixed number of runs is the plan of one look. Testing at each look at level α would raise the false-alarm rate
with every look, so each p-value is the chance, under its null, that the *smallest* p-value over the whole plan's
looks is at most the smallest one seen (`look_error`): the group-sequential p-value of an exact design with the
same bar at every look (Pocock's shape). For the Fisher tails it is computed exactly conditionally on the passes
over both sides and every planned run (the arrangement of passes is then uniform whatever the pass rate), and the
largest over those totals is taken, so it holds for every pass rate; for the binomial test the rate is r₀ itself.
With one look each p-value is the plain test's own (Fisher's p for one look is Fisher's p).

Verdicts, read by `verdicts` at confidence 1 − α: regressed when the fewer-passes p-value, Holm-adjusted over the
queries compared, is at most α; else improved when the more-passes one is (Holm over the queries as well); else
unchanged when the no-drop p-value is at most β = 1 − power (a drop of `drop` would have been caught with that
power); else inconclusive.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import TYPE_CHECKING

from agentci_action.compare.distributions import (
    binomial_pmf,
    binomial_sf,
    hypergeometric_cdf,
    hypergeometric_sf,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]

# numpy is imported by the functions that use it, the look adjustment's tables above all: a suite run once per side
# never needs it, and importing it costs every start of the command and the action a tenth of a second or more.


class ChangeVerdict(str, Enum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"


@lru_cache(maxsize=65536)  # a suite asks for the same few tables (and each plan's DP for every entry of one)
def fisher_fewer(passed: int, runs: int, base_passed: int, base_runs: int) -> float:
    """Fisher's one-sided p-value for fewer passes now: P(X ≤ c), X ~ Hypergeometric(N = n + n_b, K = c + c_b, n).

    3 of 10 against 9 of 10: 0.0099.
    """
    return hypergeometric_cdf(passed, runs + base_runs, passed + base_passed, runs)


@lru_cache(maxsize=65536)
def fisher_more(passed: int, runs: int, base_passed: int, base_runs: int) -> float:
    """Fisher's one-sided p-value for more passes now: P(X ≥ c), X as in fisher_fewer."""
    return hypergeometric_sf(passed, runs + base_runs, passed + base_passed, runs)


def effective_plan(plan: Sequence[int], runs: int) -> tuple[int, ...]:
    """The plan's looks and the runs actually taken (a run lost to infrastructure moves the last look).

    Every planned look counts, reached or not, since the runs stopped where a question was answered.
    """
    return tuple(sorted({*plan, runs}))


def passes_at(passes: Sequence[bool], plan: Sequence[int]) -> list[tuple[int, int]]:
    """(passes, runs) over the first k runs, for each look k of `plan` that the runs reached."""
    return [(sum(passes[:look]), look) for look in plan if look <= len(passes)]


def _log_comb(n: npt.ArrayLike, k: npt.ArrayLike) -> Floats:
    """log C(n, k) elementwise, −∞ where k < 0 or k > n (no such way), from a table of log n!."""
    import numpy as np

    n, k = np.broadcast_arrays(np.asarray(n), np.asarray(k))
    valid = (k >= 0) & (k <= n) & (n >= 0)
    top = int(n.max(initial=0))
    log_factorial = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, top + 1)))))
    safe_n, safe_k = np.where(valid, n, 0), np.where(valid, k, 0)
    found = log_factorial[safe_n] - log_factorial[safe_k] - log_factorial[safe_n - safe_k]
    return np.where(valid, found, -np.inf)


def _hypergeometric(
    passed: npt.ArrayLike, population: npt.ArrayLike, population_passed: npt.ArrayLike, drawn: npt.ArrayLike
) -> Floats:
    """hypergeometric_pmf elementwise over arrays (floats in log space: the look tables' sizes)."""
    import numpy as np

    population, drawn = np.asarray(population), np.asarray(drawn)
    logs = (
        _log_comb(population_passed, passed)
        + _log_comb(np.asarray(population) - population_passed, np.asarray(drawn) - passed)
        - _log_comb(population, drawn)
    )
    return np.exp(logs)


class _PlanTables:
    """What look_error needs for a baseline of `base_runs` and a plan, computed once.

    Under equal pass rates and given m passes over all n planned current runs, their arrangement is uniform, so the
    passes among the first looks[0] runs and each next batch are hypergeometric draws; `weight[b, m]` is P(c_b = b, m |
    b + m passes); `fisher[k][b, c]` the Fisher p-value for fewer passes at look k (1 where c exceeds the look's runs).
    """

    def __init__(self, base_runs: int, plan: tuple[int, ...]) -> None:
        import numpy as np

        n = plan[-1]
        m = np.arange(n + 1)[:, None, None]  # passes over all n current runs
        c = np.arange(n + 1)[None, :, None]  # passes at the previous look
        j = np.arange(n + 1)[None, None, :]  # passes in the batch since
        self.start: Floats = _hypergeometric(c[..., 0], n, m[..., 0], plan[0])
        # steps[k][m, c, j]: P(j passes in the batch | c before, m in all); j ≤ the batch's runs
        self.steps = [
            _hypergeometric(j[..., : after - before + 1], n - before, m - c, after - before)
            for before, after in itertools.pairwise(plan)
        ]
        b = np.arange(base_runs + 1)[:, None]
        totals = np.arange(n + 1)[None, :]
        self.weight: Floats = np.exp(
            _log_comb(base_runs, b) + _log_comb(n, totals) - _log_comb(base_runs + n, b + totals)
        )
        self.fisher = [_fisher_table(base_runs, look, n) for look in plan]


def _fisher_table(base_runs: int, look: int, width: int) -> Floats:
    """fisher_fewer(c, look, b, base_runs) for every baseline count b and current count c ≤ width (1 past look).

    For each total s = b + c the hypergeometric distribution of X over x, cumulated, read at x = c.
    """
    import numpy as np

    b = np.arange(base_runs + 1)[:, None]
    c = np.arange(width + 1)[None, :]
    x = np.arange(look + 1)[None, None, :]
    totals = (b + c)[..., None]
    cumulative = np.cumsum(_hypergeometric(x, look + base_runs, totals, look), axis=2)
    table = np.take_along_axis(cumulative, np.minimum(c, look)[..., None].repeat(base_runs + 1, axis=0), axis=2)[..., 0]
    return np.where(c <= look, np.minimum(table, 1.0), 1.0)


@lru_cache(maxsize=64)
def _tables(base_runs: int, plan: tuple[int, ...]) -> _PlanTables:
    return _PlanTables(base_runs, plan)


@lru_cache(maxsize=8192)
def look_error(bar: float, base_runs: int, plan: tuple[int, ...]) -> float:
    """The false-regression rate of "regressed once a look's Fisher p is at most `bar`", for every pass rate at once.

    The most, over every total number of passes s on both sides, of P(fisher_fewer ≤ bar at some look of `plan` | s)
    when both sides pass at the same rate. By symmetry (passes and failures swapped) it is also that of the more-passes
    tail. One look: Fisher's own guarantee, `bar` itself (exact at the p-values the data can show).
    """
    import numpy as np

    if len(plan) == 1:
        return bar
    tables = _tables(base_runs, plan)
    bar *= 1.0 + 1e-9  # the tables are floats: a p-value equal to the bar (as the observed ones are) crosses it
    stays = [fisher > bar for fisher in tables.fisher]
    rows = np.flatnonzero(~np.logical_and.reduce(stays).all(axis=1))  # baselines some look can cross from
    if not rows.size:
        return 0.0
    mass = tables.start[None, :, :] * stays[0][rows, None, :]  # [baseline b, total m, current c]
    for step, stay in zip(tables.steps, stays[1:]):
        moved = np.zeros_like(mass)
        for j in range(step.shape[2]):  # the batch's passes: a banded transition, c → c + j
            moved[:, :, j:] += mass[:, :, : mass.shape[2] - j] * step[None, :, : mass.shape[2] - j, j]
        mass = moved * stay[rows, None, :]
    crossed = tables.weight[rows] * (1.0 - mass.sum(axis=2))
    per_total = np.zeros(tables.weight.shape[0] + tables.weight.shape[1] - 1)
    for b, row in zip(rows, crossed):
        per_total[b : b + row.size] += row
    return float(min(1.0, per_total.max()))


@lru_cache(maxsize=8192)
def binomial_look_error(bar: float, rate: float, plan: tuple[int, ...]) -> float:
    """The error rate of "no drop to r₀" over the looks of `plan`.

    P(binomial_sf(c_k, k, r₀) ≤ bar at some look k of `plan`) when the runs pass at rate r₀ (and less for any lower
    rate). One look: the test's own, `bar` itself.
    """
    import numpy as np

    if len(plan) == 1:
        return bar
    mass = np.array([binomial_pmf(c, plan[0], rate) for c in range(plan[-1] + 1)])
    for index, look in enumerate(plan):
        if index:
            batch = np.array([binomial_pmf(c, look - plan[index - 1], rate) for c in range(look - plan[index - 1] + 1)])
            mass = np.convolve(mass, batch)[: plan[-1] + 1]
        mass *= np.array([binomial_sf(c, look, rate) > bar for c in range(plan[-1] + 1)])
    return float(min(1.0, 1.0 - mass.sum()))


def _largest_bar(candidates: Sequence[float], error: Callable[[float], float], level: float) -> float:
    """The largest of the sorted `candidates` whose error is at most `level` (error grows with the bar), by bisection.

    0 when none is.
    """
    low, high = -1, len(candidates)  # error(candidates[low]) ≤ level < error(candidates[high])
    while high - low > 1:
        middle = (low + high) // 2
        if error(candidates[middle]) <= level:
            low = middle
        else:
            high = middle
    return candidates[low] if low >= 0 else 0.0


@lru_cache(maxsize=1024)
def look_bar(alpha: float, base_runs: int, plan: tuple[int, ...]) -> float:
    """The largest Fisher p-value a look of `plan` may show for "regressed" at level α.

    The bar of the design (α itself for one look). Found among the p-values the looks can show.
    """
    if len(plan) == 1:
        return alpha
    candidates = sorted({float(p) for table in _tables(base_runs, plan).fisher for p in table.ravel()})
    return _largest_bar(candidates, lambda bar: look_error(bar, base_runs, plan), alpha)


@lru_cache(maxsize=1024)
def binomial_look_bar(beta: float, rate: float, plan: tuple[int, ...]) -> float:
    """The largest no-drop p-value a look of `plan` may show for "unchanged" at level β against the rate r₀.

    β itself for one look.
    """
    if len(plan) == 1:
        return beta
    candidates = sorted({binomial_sf(c, look, rate) for look in plan for c in range(look + 1)})
    return _largest_bar(candidates, lambda bar: binomial_look_error(bar, rate, plan), beta)


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """One query's current runs against its baseline's.

    The counts and the three one-sided p-values, each adjusted for the plan's looks (see the module docstring); `plan`
    the run counts of those looks.
    """

    passed: int
    runs: int
    base_passed: int
    base_runs: int
    p_fewer: float
    p_more: float
    p_no_drop: float
    plan: tuple[int, ...]
    drop: float


def compare(passes: Sequence[bool], base_passed: int, base_runs: int, plan: Sequence[int], drop: float) -> Comparison:
    """Compare the current runs (`passes`, in run order) with a baseline of `base_passed` of `base_runs`.

    Taken at the looks of `plan` (one look, `(len(passes),)`, for a fixed number of runs), `drop` the fall in pass rate
    worth catching (0 < drop < 1).
    """
    runs = len(passes)
    if not runs or not base_runs:
        raise ValueError("both sides need at least one run")
    looks = effective_plan(plan, runs)
    counts = passes_at(passes, looks)
    fewer = min(fisher_fewer(c, n, base_passed, base_runs) for c, n in counts)
    more = min(fisher_more(c, n, base_passed, base_runs) for c, n in counts)
    floor = base_passed / base_runs - drop  # no drop of `drop` is possible from a rate at most `drop`: 0
    no_drop = 0.0 if floor <= 0 else binomial_look_error(min(binomial_sf(c, n, floor) for c, n in counts), floor, looks)
    passed = counts[-1][0]
    return Comparison(
        passed=passed,
        runs=runs,
        base_passed=base_passed,
        base_runs=base_runs,
        p_fewer=look_error(fewer, base_runs, looks),
        p_more=look_error(more, base_runs, looks),
        p_no_drop=no_drop,
        plan=looks,
        drop=drop,
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment.

    Sorted ascending p_(1) ≤ … ≤ p_(m), adjusted p_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)), returned in the input's
    order. Rejecting where the adjusted p ≤ α keeps the chance of any false rejection at most α, whatever the dependence
    between the tests.
    """
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True, kw_only=True)
class QueryVerdict:
    """A comparison's verdict, with its fewer- and more-passes p-values Holm-adjusted over the queries compared.

    For an inconclusive one, about how many more runs would decide (runs_to_decide; None: more runs alone won't).
    """

    verdict: ChangeVerdict
    comparison: Comparison
    adjusted_fewer: float
    adjusted_more: float
    compared: int  # the queries the Holm adjustment ran over
    more_runs: int | None = None


def verdicts(comparisons: Sequence[Comparison], confidence: float, power: float) -> list[QueryVerdict]:
    """Each comparison's verdict at confidence 1 − α (see the module docstring).

    Regressed, improved, unchanged or inconclusive, the first two Holm-adjusted over all the comparisons. An
    inconclusive query's projection asks for the Holm bar of its rank among the fewer-passes p-values, α / (m − rank).
    """
    alpha, beta = 1.0 - confidence, 1.0 - power
    fewer = holm([c.p_fewer for c in comparisons])
    more = holm([c.p_more for c in comparisons])
    rank = {index: place for place, index in enumerate(sorted(range(len(comparisons)), key=fewer.__getitem__))}
    found = []
    for index, (comparison, adjusted_fewer, adjusted_more) in enumerate(zip(comparisons, fewer, more)):
        more_runs = None
        if adjusted_fewer <= alpha:
            verdict = ChangeVerdict.REGRESSED
        elif adjusted_more <= alpha:
            verdict = ChangeVerdict.IMPROVED
        elif comparison.p_no_drop <= beta:
            verdict = ChangeVerdict.UNCHANGED
        else:
            verdict = ChangeVerdict.INCONCLUSIVE
            more_runs = runs_to_decide(comparison, alpha / (len(comparisons) - rank[index]), beta)
        found.append(
            QueryVerdict(
                verdict=verdict,
                comparison=comparison,
                adjusted_fewer=adjusted_fewer,
                adjusted_more=adjusted_more,
                compared=len(comparisons),
                more_runs=more_runs,
            )
        )
    return found


def settled(comparison: Comparison, confidence: float, power: float, compared: int) -> bool:
    """Whether the runner may stop running a query.

    Its verdict can no longer be inconclusive whatever the other queries show. Regressed or improved at α / compared
    (Bonferroni: Holm then rejects it too), or unchanged.
    """
    alpha = (1.0 - confidence) / max(1, compared)
    return comparison.p_fewer <= alpha or comparison.p_more <= alpha or comparison.p_no_drop <= 1.0 - power


def runs_to_decide(comparison: Comparison, fewer_level: float, beta: float, limit: int = 500) -> int | None:
    """About how many more current runs would decide, were the current pass rate r = c/n to hold.

    The fewest extra runs k ≤ `limit` for which ⌊(n + k)·r + ½⌋ passes of n + k give a Fisher p-value at most the plan's
    bar for `fewer_level` (regressed; look_bar) or a no-drop p-value at most its bar for β (unchanged;
    binomial_look_bar): the looks taken so far are paid for as the plan's bars pay for them (one look: the levels
    themselves). None when no k up to `limit` decides: the baseline's runs (or a rate at the floor) limit the test, and
    more current runs alone will not decide.
    """
    import numpy as np

    base_runs, base_passed = comparison.base_runs, comparison.base_passed
    floor = base_passed / base_runs - comparison.drop
    if floor <= 0:
        return 0
    rate = comparison.passed / comparison.runs
    fewer_bar = look_bar(fewer_level, base_runs, comparison.plan) * (1 + 1e-9)
    no_drop_bar = binomial_look_bar(beta, floor, comparison.plan) * (1 + 1e-9)

    def decides(extra: int) -> bool:
        runs = comparison.runs + extra
        passed = math.floor(runs * rate + 0.5)
        below = np.arange(passed + 1)
        if _hypergeometric(below, runs + base_runs, passed + base_passed, runs).sum() <= fewer_bar:
            return True
        above = np.arange(passed, runs + 1)
        tail = np.exp(_log_comb(runs, above) + above * math.log(floor) + (runs - above) * math.log1p(-floor))
        return bool(tail.sum() <= no_drop_bar)

    # with ever more current runs Fisher's p-value falls towards P(Bin(n_b, r) ≥ c_b), the baseline's own chance at
    # the rate r, and the no-drop one decides only above the floor: past both, no number of runs will do
    if rate <= floor and binomial_sf(base_passed, base_runs, rate) > fewer_bar:
        return None
    return next((extra for extra in range(limit + 1) if decides(extra)), None)

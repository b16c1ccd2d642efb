"""Regression or noise, simulated: thousands of synthetic queries through the verdicts AgentCI computes.

    python benchmarks/bench_significance.py [--queries 2000] [--seed 2026]

Every figure comes from agentci_action.compare.significance (and suite_change, bootstrap), the functions the diff
and the runner call, on queries whose true pass rates are known:

1. power to catch a pass rate falling from 90 % to 60 % (one-sided, 95 %) at each number of runs, computed
   exactly and simulated: against a known baseline rate (13 runs, flag at 9 or fewer passes), with two fresh
   samples (Fisher's exact test: 20 per side 0.62, 30 per side 0.80), and Wald's sequential test capped at 20;
2. the false-regression rate on an unchanged agent, fixed and adaptive runs, one query and suites with Holm;
3. adaptive runs against the fixed maximum: mean runs (the ratio) beside the error rates of each;
4. the suite's paired interval: coverage of the true change;
5. cost ratios: how often an unchanged cost is called changed, bootstrap interval against means crossing 25 %.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentci_action.compare.bootstrap import beyond, ratio_interval
from agentci_action.compare.distributions import binomial_pmf
from agentci_action.compare.significance import (
    ChangeVerdict,
    Comparison,
    compare,
    fisher_fewer,
    look_bar,
    look_error,
    settled,
    verdicts,
)
from agentci_action.compare.suite_change import pass_rate_change
from agentci_action.spec.models import RunRange

CONFIDENCE, POWER, DROP = 0.95, 0.8, 0.3
ALPHA = 1.0 - CONFIDENCE
KNOWN = (9000, 10000)  # a baseline of 9,000 passes in 10,000 runs: its 90 % is known


def exact_power_known(runs: int) -> float:
    """P(regressed) for n runs at 60 % against the known 90 %: Σ_c Bin(c; n, 0.6)·[Fisher p ≤ α]."""
    return sum(binomial_pmf(c, runs, 0.6) for c in range(runs + 1) if fisher_fewer(c, runs, *KNOWN) <= ALPHA)


def exact_power_fresh(runs: int) -> float:
    """P(regressed) for n runs per side, 60 % now against 90 % in a baseline of n runs: a double sum."""
    return sum(
        binomial_pmf(b, runs, 0.9) * binomial_pmf(c, runs, 0.6)
        for b in range(runs + 1)
        for c in range(runs + 1)
        if fisher_fewer(c, runs, b, runs) <= ALPHA
    )


def simulated(rng: np.random.Generator, queries: int, runs: int, base_runs: int | None) -> float:
    """The share of `queries` synthetic queries at 60 % that the verdicts call regressed, one query at a time.

    Baseline at 90 %, known when base_runs is None; one at a time: nothing to adjust for.
    """
    flagged = 0
    for _ in range(queries):
        base = KNOWN if base_runs is None else (int(rng.binomial(base_runs, 0.9)), base_runs)
        passes = list(rng.random(runs) < 0.6)
        found = verdicts([compare(passes, *base, (runs,), DROP)], CONFIDENCE, POWER)[0]
        flagged += found.verdict is ChangeVerdict.REGRESSED
    return flagged / queries


def wald(rate: float, cap: int = 20) -> tuple[float, float]:
    """Wald's sequential test of 90 % against 60 % on runs passing at `rate`, exactly: (P(flagged), mean runs).

    α 0.05, β 0.2, decided after every run, capped at `cap`. Boundaries log((1−β)/α) and log(β/(1−α)).
    """
    upper, lower = math.log(0.8 / 0.05), math.log(0.2 / 0.95)
    per_pass, per_fail = math.log(0.6 / 0.9), math.log(0.4 / 0.1)
    alive, flagged, runs = {0: 1.0}, 0.0, 0.0
    for n in range(1, cap + 1):
        grown: dict[int, float] = {}
        for passed, mass in alive.items():
            grown[passed + 1] = grown.get(passed + 1, 0.0) + mass * rate
            grown[passed] = grown.get(passed, 0.0) + mass * (1 - rate)
        alive = {}
        for passed, mass in grown.items():
            ratio = passed * per_pass + (n - passed) * per_fail
            if ratio >= upper or ratio <= lower:
                flagged += mass * (ratio >= upper)
                runs += mass * n
            else:
                alive[passed] = mass
    return flagged, runs + cap * sum(alive.values())


def power_tables(rng: np.random.Generator, queries: int) -> None:
    print("1. Power to catch 90 % → 60 % (one-sided, 95 %): exact, and simulated over", queries, "queries each")
    print("   runs | known 90 %: exact  simulated | fresh baseline of as many runs: exact  simulated")
    first_known = first_fresh = None
    for runs in (5, 8, 10, 12, 13, 15, 20, 25, 29, 30, 35):
        known, fresh = exact_power_known(runs), exact_power_fresh(runs)
        if known >= 0.8 and first_known is None:
            first_known = runs
        if fresh >= 0.8 and first_fresh is None:
            first_fresh = runs
        print(
            f"   {runs:4d} | {known:17.3f}  {simulated(rng, queries, runs, None):9.3f} |"
            f" {fresh:36.3f}  {simulated(rng, queries, runs, runs):9.3f}"
        )
    flag_at = max(c for c in range(14) if fisher_fewer(c, 13, *KNOWN) <= ALPHA)
    print(f"   80 % power: {first_known} runs against the known rate (flag at {flag_at} or fewer passes of 13);")
    print(f"   {first_fresh} runs per side with two fresh samples (Fisher's exact test).")
    false_flags, mean_runs = wald(0.9)
    power, mean_runs_h1 = wald(0.6)
    print(
        f"   Wald's sequential test (90 % vs 60 %, capped at 20, known rate): false flags {false_flags:.1%}, power "
        f"{power:.1%}, mean runs {mean_runs:.1f} (unchanged) and {mean_runs_h1:.1f} (dropped)"
    )


def run_query(
    rng: np.random.Generator,
    rate_before: float,
    rate_after: float,
    base_runs: int,
    plan: tuple[int, ...],
    compared: int,
) -> Comparison:
    """One synthetic query run as the runner runs it: a look after each step of `plan`, stopping once settled."""
    base = int(rng.binomial(base_runs, rate_before))
    passes = list(rng.random(plan[-1]) < rate_after)
    for look in plan:
        found = compare(passes[:look], base, base_runs, plan, DROP)
        if settled(found, CONFIDENCE, POWER, compared):
            break
    return found


def design_figures(
    rng: np.random.Generator, queries: int, rate_before: float, rate_after: float, base_runs: int, plan: tuple[int, ...]
) -> tuple[Counter[ChangeVerdict], float]:
    """ChangeVerdict shares and mean runs of `queries` single queries (nothing to adjust for across them)."""
    counts: Counter[ChangeVerdict] = Counter()
    runs = 0
    for _ in range(queries):
        found = run_query(rng, rate_before, rate_after, base_runs, plan, 1)
        counts[verdicts([found], CONFIDENCE, POWER)[0].verdict] += 1
        runs += found.runs
    return counts, runs / queries


def share(counts: Counter[ChangeVerdict], verdict: ChangeVerdict, queries: int) -> str:
    return f"{counts[verdict] / queries:6.1%}"


def designs(rng: np.random.Generator, queries: int) -> None:
    print()
    print("2-3. Fixed runs against adaptive runs (a look after each batch, a query stopping once settled)")
    print(
        f"   confidence {CONFIDENCE:.0%}; 'unchanged' rules out a drop of {DROP:.0%} with {POWER:.0%} power; {queries} "
        f"queries a cell (a simulated share lies within ±{2 * math.sqrt(0.25 / queries):.1%} of the truth, 2 SE)"
    )
    print(
        "   baseline | plan             | unchanged agent: false regressions (bound, worst of 50/70/90/97 %)  runs"
        " | 90 % → 60 %: regressed  called unchanged  runs | runs / fixed 20"
    )
    plans = {
        "fixed 20": (20,),
        "5..20, batch 5": RunRange(min=5, max=20, batch=5).plan,
        "3..20, batch 3": RunRange(min=3, max=20, batch=3).plan,
        "1..20, every run": RunRange(min=1, max=20, batch=1).plan,
    }
    for base_runs in (10, 20, 50):
        for name, plan in plans.items():
            bound = look_error(look_bar(ALPHA, base_runs, plan), base_runs, plan)
            worst_false, runs_still = 0.0, 0.0
            for rate in (0.5, 0.7, 0.9, 0.97):  # the false-regression rate must hold at every pass rate
                counts, runs = design_figures(rng, queries, rate, rate, base_runs, plan)
                worst_false = max(worst_false, counts[ChangeVerdict.REGRESSED] / queries)
                runs_still += runs / 4
            dropped, runs_dropped = design_figures(rng, queries, 0.9, 0.6, base_runs, plan)
            print(
                f"   {base_runs:8d} | {name:16s} | ≤ {bound:4.1%} (simulated {worst_false:4.1%}){'':27s}{runs_still:5.1f}"
                f" | {share(dropped, ChangeVerdict.REGRESSED, queries):>20s}  {share(dropped, ChangeVerdict.UNCHANGED, queries):>16s}"
                f"  {runs_dropped:4.1f} | {runs_still / 20:.2f}× / {runs_dropped / 20:.2f}×"
            )
    print(
        f"   the Fisher p-value each look needs, 20-run baseline: fixed {look_bar(ALPHA, 20, (20,)):.4f}, 5..20 batch 5 "
        f"{look_bar(ALPHA, 20, RunRange(min=5, max=20, batch=5).plan):.4f}, every run {look_bar(ALPHA, 20, RunRange(min=1, max=20, batch=1).plan):.4f}"
    )


def suites(rng: np.random.Generator, queries: int) -> None:
    print()
    size = 20
    count = max(50, queries // size)
    print(
        f"2b. Suites of {size} unchanged queries (90 %, baseline of 20 runs), {count} suites: any query called regressed"
    )
    for name, plan in (("fixed 10", (10,)), ("adaptive 5..20, batch 5", RunRange(min=5, max=20, batch=5).plan)):
        held = raw = runs = 0
        for _ in range(count):
            found = [run_query(rng, 0.9, 0.9, 20, plan, size) for _ in range(size)]
            read = verdicts(found, CONFIDENCE, POWER)
            held += any(v.verdict is ChangeVerdict.REGRESSED for v in read)
            raw += any(c.p_fewer <= ALPHA for c in found)
            runs += sum(c.runs for c in found)
        print(
            f"   {name:24s}: Holm {held / count:5.1%}  (each query at 5 % without it: {raw / count:5.1%});"
            f" mean runs per query {runs / count / size:.1f}"
        )


def coverage(rng: np.random.Generator, queries: int) -> None:
    print()
    print("4. The suite's interval: coverage of the population's change in pass rate, −10 points (target 95 %)")
    for size in (10, 30, 100):
        suites_run = max(200, queries // size)
        covered = 0
        for _ in range(suites_run):
            # queries drawn from a population whose pass rates fall by 10 points on average (0 to 20 each)
            rates = rng.uniform(0.4, 1.0, size)
            after = rates - rng.uniform(0.0, 0.2, size)
            pairs = [(rng.binomial(10, b) / 10, rng.binomial(10, a) / 10) for b, a in zip(rates, after)]
            found = pass_rate_change(pairs, CONFIDENCE)
            assert found is not None and found.low is not None and found.high is not None
            covered += found.low <= -0.1 <= found.high
        print(f"   {size:3d} queries × 10 runs a side: {covered / suites_run:5.1%} of {suites_run} suites")


def costs(rng: np.random.Generator, queries: int) -> None:
    print()
    print("5. Cost per run lognormal (spread 30 %): called changed beyond 25 %, by means crossing it and by interval")
    print("   runs a side | unchanged cost: means  interval | cost up 50 %: means  interval")
    for runs in (2, 3, 5, 10, 20):
        rows = []
        for factor in (1.0, 1.5):
            by_means = by_interval = 0
            for index in range(queries // 4):
                before = list(rng.lognormal(math.log(0.01), 0.3, runs))
                after = list(rng.lognormal(math.log(0.01 * factor), 0.3, runs))
                ratio = (sum(after) / runs) / (sum(before) / runs)
                by_means += abs(ratio - 1.0) > 0.25
                interval = ratio_interval(before, after, CONFIDENCE, seed=index)
                by_interval += interval is not None and beyond(interval, 0.25)
            rows.append((by_means / (queries // 4), by_interval / (queries // 4)))
        print(f"   {runs:11d} | {rows[0][0]:20.1%}  {rows[0][1]:8.1%} | {rows[1][0]:18.1%}  {rows[1][1]:8.1%}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000, help="synthetic queries per figure")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    power_tables(rng, args.queries)
    designs(rng, args.queries)
    suites(rng, args.queries)
    coverage(rng, args.queries)
    costs(rng, args.queries)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

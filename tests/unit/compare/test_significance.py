"""Verdicts under noise.

The exact tests, their look adjustment, Holm, the suite's paired change and the bootstrap, each checked against
scipy.stats and statsmodels (test dependencies only) or against a brute-force enumeration.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.api import WLS, add_constant
from statsmodels.stats.multitest import multipletests

from agentci_action.compare import distributions as dist
from agentci_action.compare import significance as sig
from agentci_action.compare.bootstrap import beyond, clustered_ratio_interval, ratio_interval, seed_for
from agentci_action.compare.significance import ChangeVerdict
from agentci_action.compare.suite_change import drop_verdict, pass_rate_change
from agentci_action.engine.stats import pass_at_k, pass_hat_k
from agentci_action.spec.models import RunRange

# --- distributions -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("population", "passed", "drawn"), [(20, 12, 10), (7, 0, 3), (7, 7, 3), (40, 13, 25), (1, 1, 1)]
)
def test_hypergeometric_matches_scipy(population, passed, drawn):
    for x in range(-1, drawn + 2):
        assert dist.hypergeometric_pmf(x, population, passed, drawn) == pytest.approx(
            stats.hypergeom.pmf(x, population, passed, drawn), abs=1e-15, rel=1e-12
        )
        assert dist.hypergeometric_cdf(x, population, passed, drawn) == pytest.approx(
            stats.hypergeom.cdf(x, population, passed, drawn), abs=1e-15, rel=1e-12
        )
        assert dist.hypergeometric_sf(x, population, passed, drawn) == pytest.approx(
            stats.hypergeom.sf(x - 1, population, passed, drawn), abs=1e-15, rel=1e-12
        )


@pytest.mark.parametrize(
    ("runs", "rate"), [(13, 0.6), (20, 0.9), (5, 0.0), (5, 1.0), (1, 0.3), (200, 0.55), (10_000, 0.9), (5000, 1.0)]
)
def test_binomial_matches_scipy(runs, rate):
    for x in [*range(-1, min(runs, 40) + 2), *range(max(0, runs - 40), runs + 2), runs * 9 // 10]:
        assert dist.binomial_pmf(x, runs, rate) == pytest.approx(stats.binom.pmf(x, runs, rate), abs=1e-15, rel=1e-9)
        assert dist.binomial_sf(x, runs, rate) == pytest.approx(stats.binom.sf(x - 1, runs, rate), abs=1e-14, rel=1e-9)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 10, 29, 30, 101, 1000])
def test_student_t_matches_scipy(df):
    for t in (-40.0, -3.1, -1.0, -0.2, 0.0, 0.4, 1.96, 5.5, 60.0):
        assert dist.student_t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), abs=1e-13)
    for q in (0.0005, 0.025, 0.05, 0.3, 0.5, 0.8, 0.95, 0.975, 0.995):
        assert dist.student_t_quantile(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-10, abs=1e-12)


def test_distributions_refuse_impossible_arguments():
    with pytest.raises(ValueError, match="degrees of freedom"):
        dist.student_t_cdf(1.0, 0)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        dist.student_t_quantile(1.0, 5)


# --- Fisher's exact test and its look adjustment --------------------------------------------------------------------


def test_fisher_tails_match_scipy_on_every_small_table():
    for runs, base_runs in [(1, 1), (3, 5), (10, 10), (6, 10), (20, 7)]:
        for passed, base_passed in itertools.product(range(runs + 1), range(base_runs + 1)):
            table = [[passed, runs - passed], [base_passed, base_runs - base_passed]]
            assert sig.fisher_fewer(passed, runs, base_passed, base_runs) == pytest.approx(
                stats.fisher_exact(table, alternative="less").pvalue, rel=1e-12, abs=1e-15
            )
            assert sig.fisher_more(passed, runs, base_passed, base_runs) == pytest.approx(
                stats.fisher_exact(table, alternative="greater").pvalue, rel=1e-12, abs=1e-15
            )


def test_the_issues_example_is_fishers_one_sided_p():
    """'regressed: 3 of 10 runs passed vs 9 of 10 in v2 (p = 0.01)'."""
    assert round(sig.fisher_fewer(3, 10, 9, 10), 2) == 0.01


def _brute_look_error(bar, base_runs, plan):
    """max over totals s of P(some look's Fisher p ≤ bar | s), every arrangement of the passes enumerated."""
    n = plan[-1]
    worst = 0.0
    for total in range(base_runs + n + 1):
        crossing = cases = 0
        for passes in itertools.combinations(range(base_runs + n), total):  # positions of the passes
            chosen = set(passes)
            base_passed = sum(i < base_runs for i in chosen)
            current = [base_runs + i in chosen for i in range(n)]
            cases += 1
            crossing += any(sig.fisher_fewer(sum(current[:k]), k, base_passed, base_runs) <= bar for k in plan)
        worst = max(worst, crossing / cases)
    return worst


@pytest.mark.parametrize(("base_runs", "plan"), [(3, (1, 2, 3)), (4, (2, 4, 5)), (5, (1, 3, 6))])
def test_look_error_is_the_enumerated_worst_case(base_runs, plan):
    for bar in (0.01, 0.05, 0.1, 0.2, 0.35):
        assert sig.look_error(bar, base_runs, plan) == pytest.approx(_brute_look_error(bar, base_runs, plan), abs=1e-12)


def test_one_look_is_fishers_test():
    assert sig.look_error(0.0099, 10, (10,)) == 0.0099
    assert sig.look_bar(0.05, 10, (10,)) == 0.05 and sig.binomial_look_bar(0.2, 0.6, (10,)) == 0.2
    # with looks, the bar is the largest p-value the looks can show whose worst-case error stays within the level
    plan = (5, 10, 15, 20)
    bar = sig.look_bar(0.05, 10, plan)
    attainable = sorted({sig.fisher_fewer(c, k, b, 10) for k in plan for c in range(k + 1) for b in range(11)})
    above = next(p for p in attainable if p > bar)
    assert sig.look_error(bar, 10, plan) <= 0.05 < sig.look_error(above, 10, plan)
    floor_bar = sig.binomial_look_bar(0.2, 0.65, plan)
    tails = sorted({dist.binomial_sf(c, k, 0.65) for k in plan for c in range(k + 1)})
    above = next(p for p in tails if p > floor_bar)
    assert sig.binomial_look_error(floor_bar, 0.65, plan) <= 0.2 < sig.binomial_look_error(above, 0.65, plan)


def test_peeking_without_the_adjustment_breaks_the_level_and_the_bar_restores_it():
    plan = tuple(range(1, 21))  # a look after every run up to 20, against a 20-run baseline
    assert sig.look_error(0.05, 20, plan) > 0.09  # testing each look at 5 %: a false alarm in 9 % of worst cases
    bar = sig.look_bar(0.05, 20, plan)
    assert 0.02 < bar < 0.05
    assert sig.look_error(bar, 20, plan) <= 0.05


def test_the_adjusted_level_holds_in_simulation_for_any_pass_rate():
    """Both sides at the same rate, a look after each batch: 'regressed' at most 5 % of the time (3 SE margin)."""
    rng = np.random.default_rng(20260101)
    base_runs, plan = 20, (5, 10, 15, 20)
    bar = sig.look_bar(0.05, base_runs, plan)
    trials = 20_000
    for rate in (0.5, 0.8, 0.9):
        base = rng.binomial(base_runs, rate, trials)
        runs = np.cumsum(rng.random((trials, plan[-1])) < rate, axis=1)
        flagged = np.zeros(trials, dtype=bool)
        for look in plan:
            fewer = np.array(
                [sig.fisher_fewer(int(c), look, int(b), base_runs) for c, b in zip(runs[:, look - 1], base)]
            )
            flagged |= fewer <= bar
        assert flagged.mean() <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


def test_binomial_look_error_is_the_enumerated_chance():
    plan, rate = (2, 4, 6), 0.6
    for bar in (0.05, 0.2, 0.5):
        crossing = 0.0
        for outcome in itertools.product((0, 1), repeat=plan[-1]):
            weight = math.prod(rate if x else 1 - rate for x in outcome)
            if any(dist.binomial_sf(sum(outcome[:k]), k, rate) <= bar for k in plan):
                crossing += weight
        assert sig.binomial_look_error(bar, rate, plan) == pytest.approx(crossing, abs=1e-12)
    assert sig.binomial_look_error(0.2, rate, (6,)) == 0.2


def test_look_plan():
    assert RunRange(min=3, max=20, batch=5).plan == (3, 8, 13, 18, 20)
    assert RunRange(min=5, max=20).plan == (5, 10, 15, 20)  # batch: the minimum
    assert RunRange(min=4, max=4, batch=2).plan == (4,)
    with pytest.raises(ValueError, match=r"min \(5\) is more than max \(3\)"):
        RunRange(min=5, max=3)
    assert sig.effective_plan((5, 10, 15), 12) == (5, 10, 12, 15)
    assert sig.passes_at([True, False, True, True], (2, 4, 6)) == [(1, 2), (3, 4)]


# --- a query's comparison and verdict ------------------------------------------------------------------------------


def test_compare_with_one_look_reports_the_plain_tests():
    passes = [True] * 3 + [False] * 7
    found = sig.compare(passes, 9, 10, (10,), drop=0.3)
    assert (found.passed, found.runs, found.plan) == (3, 10, (10,))
    assert found.p_fewer == pytest.approx(stats.fisher_exact([[3, 7], [9, 1]], "less").pvalue)
    assert found.p_more == pytest.approx(stats.fisher_exact([[3, 7], [9, 1]], "greater").pvalue)
    assert found.p_no_drop == pytest.approx(stats.binomtest(3, 10, 0.6, alternative="greater").pvalue)


def test_compare_over_looks_takes_the_smallest_p_and_adjusts_it():
    passes = [False, False, False, True, True, True, True, True, True, True]  # poor start, good finish
    found = sig.compare(passes, 9, 10, (3, 6, 10), drop=0.3)
    smallest = sig.fisher_fewer(0, 3, 9, 10)
    assert found.plan == (3, 6, 10)
    assert found.p_fewer == sig.look_error(smallest, 10, (3, 6, 10)) > smallest


def test_no_drop_is_certain_when_the_baseline_rate_is_below_the_drop():
    assert sig.compare([False] * 5, 0, 10, (5,), drop=0.3).p_no_drop == 0.0


def test_compare_needs_runs_on_both_sides():
    with pytest.raises(ValueError, match="at least one run"):
        sig.compare([], 3, 5, (1,), drop=0.3)


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(4)
    for size in (1, 2, 5, 40):
        p_values = [*rng.uniform(0, 0.2, size), 0.0, 1.0]
        expected = multipletests(p_values, method="holm")[1]
        assert sig.holm(p_values) == pytest.approx(list(expected), abs=1e-15)


def _comparison(passed, runs, base_passed, base_runs, drop=0.3):
    return sig.compare([True] * passed + [False] * (runs - passed), base_passed, base_runs, (runs,), drop)


def test_verdicts_of_a_suite():
    found = sig.verdicts(
        [_comparison(3, 10, 9, 10), _comparison(4, 6, 9, 10), _comparison(10, 10, 10, 10), _comparison(10, 10, 2, 10)],
        confidence=0.95,
        power=0.8,
    )
    assert [v.verdict for v in found] == [
        ChangeVerdict.REGRESSED,
        ChangeVerdict.INCONCLUSIVE,
        ChangeVerdict.UNCHANGED,
        ChangeVerdict.IMPROVED,
    ]
    assert found[0].adjusted_fewer == pytest.approx(4 * sig.fisher_fewer(3, 10, 9, 10))
    assert all(v.compared == 4 for v in found)
    # only the inconclusive query gets a projection, at the Holm bar of its rank (second smallest p: α / 3)
    assert [v.more_runs is None for v in found] == [True, False, True, True]
    assert found[1].more_runs == sig.runs_to_decide(found[1].comparison, fewer_level=0.05 / 3, beta=0.2)


def test_holm_over_many_queries_keeps_a_lone_p_of_001_from_blocking():
    queries = [_comparison(3, 10, 9, 10)] + [_comparison(10, 10, 10, 10)] * 11
    lone = sig.verdicts(queries, confidence=0.95, power=0.8)[0]
    assert lone.verdict is ChangeVerdict.INCONCLUSIVE
    assert lone.adjusted_fewer == pytest.approx(12 * lone.comparison.p_fewer)


def test_settled_is_safe_whatever_the_other_queries_show():
    strong = _comparison(0, 10, 10, 10)  # p ≈ 5e-6
    weak = _comparison(3, 10, 9, 10)  # p ≈ 0.01
    assert sig.settled(strong, 0.95, 0.8, compared=12)
    assert not sig.settled(weak, 0.95, 0.8, compared=12)  # 0.01 > 0.05 / 12: more runs may still be needed
    assert sig.settled(weak, 0.95, 0.8, compared=1)
    assert sig.settled(_comparison(10, 10, 10, 10), 0.95, 0.8, compared=12)  # unchanged


def test_runs_to_decide():
    # 4 of 6 against 9 of 10: at 2/3, 60 % (= 90 % − 30 points) is ruled out with 80 % power from 46 runs on (the
    # first count whose projection decides: 31 of 46), while Fisher's test needs ~200 runs at that rate
    assert sig.runs_to_decide(_comparison(4, 6, 9, 10), fewer_level=0.05, beta=0.2) == 40
    first = next(
        n
        for n in range(6, 500)
        if dist.binomial_sf(math.floor(n * 2 / 3 + 0.5), n, 0.6) <= 0.2
        or sig.fisher_fewer(math.floor(n * 2 / 3 + 0.5), n, 9, 10) <= 0.05
    )
    assert first == 46
    # at the floor, against a 5-run baseline: Fisher's test tends to P(Bin(5, 0.6) ≥ 5) = 0.08 > 0.05 and 60 % is
    # never ruled out above 70 %: more current runs alone will not decide
    assert sig.runs_to_decide(_comparison(3, 5, 5, 5), fewer_level=0.05, beta=0.2) is None
    # against 9 of 10 the same rate is a regression once the current runs are many: P(Bin(10, 0.6) ≥ 9) = 0.046
    assert 100 < sig.runs_to_decide(_comparison(3, 5, 9, 10), fewer_level=0.05, beta=0.2) < 500
    assert sig.runs_to_decide(_comparison(1, 5, 30, 30), fewer_level=0.05, beta=0.2) == 0  # decided already
    # after four looks the projection asks for the plan's bars, not the levels: 15 of 20 against 19 of 20
    lagos = [True, True, False, True, True] * 2 + [True, True, False, True, True, True, False, True, True, False]
    looked = sig.compare(lagos, 19, 20, (5, 10, 15, 20), drop=0.3)
    more = sig.runs_to_decide(looked, fewer_level=0.05, beta=0.2)
    once = sig.runs_to_decide(_comparison(15, 20, 19, 20), fewer_level=0.05, beta=0.2)
    assert once < more
    runs = 20 + more
    bar = sig.binomial_look_bar(0.2, 0.65, (5, 10, 15, 20))
    assert dist.binomial_sf(math.floor(runs * 0.75 + 0.5), runs, 0.65) <= bar * (1 + 1e-9)


# --- the suite's paired change -------------------------------------------------------------------------------------


def _suite(rng, queries):
    """Runs of each query on both sides: (query, side, passed) rows and the per-query pass rates."""
    rows, pairs = [], []
    for query in range(queries):
        base, now = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        rate = rng.uniform(0.3, 1.0)
        before, after = rng.random(base) < rate, rng.random(now) < rate - rng.uniform(0, 0.3)
        pairs.append((float(before.mean()), float(after.mean())))
        rows += [(query, 0, float(y), 1 / base) for y in before] + [(query, 1, float(y), 1 / now) for y in after]
    return np.array(rows), pairs


def test_pass_rate_change_is_the_query_clustered_paired_difference():
    """The change and its standard error are a regression of every run's pass on the side, clustered by query.

    Each query weighing one on each side, with standard errors clustered by query (statsmodels' CR0 · sqrt(Q/(Q−1))).
    """
    rows, pairs = _suite(np.random.default_rng(3), 12)
    found = pass_rate_change(pairs, confidence=0.95)
    fit = WLS(rows[:, 2], add_constant(rows[:, 1]), weights=rows[:, 3]).fit(
        cov_type="cluster", cov_kwds={"groups": rows[:, 0].astype(int), "use_correction": False}
    )
    assert found.change == pytest.approx(fit.params[1], abs=1e-12)
    assert found.standard_error == pytest.approx(fit.bse[1] * math.sqrt(12 / 11), rel=1e-10)
    interval = stats.ttest_1samp([a - b for b, a in pairs], 0.0).confidence_interval(0.95)
    assert (found.low, found.high) == pytest.approx((interval.low, interval.high), rel=1e-9)
    assert found.queries == 12 and found.confidence == 0.95


def test_pass_rate_change_edge_cases():
    assert pass_rate_change([], 0.95) is None
    one = pass_rate_change([(0.9, 0.3)], 0.95)
    assert one.change == pytest.approx(-0.6) and one.low is None and drop_verdict(one, 0.05) == "inconclusive"
    same = pass_rate_change([(1.0, 1.0)] * 5, 0.95)
    assert (same.change, same.low, same.high) == (0.0, 0.0, 0.0)


def test_drop_verdict_reads_the_interval():
    def change(low, high):
        return pass_rate_change([(0.5, 0.5 + low), (0.5, 0.5 + high)], 0.5)  # t(1) at 75 %: interval = the pair

    assert drop_verdict(change(-0.02, 0.01), 0.05) == "pass"
    assert drop_verdict(change(-0.30, -0.20), 0.05) == "fail"
    assert drop_verdict(change(-0.10, 0.02), 0.05) == "inconclusive"


# --- the bootstrap of ratios ---------------------------------------------------------------------------------------


def test_ratio_interval_agrees_with_scipys_percentile_bootstrap():
    rng = np.random.default_rng(11)
    before, after = list(rng.gamma(4, 0.01, 12)), list(rng.gamma(4, 0.013, 15))
    ours = ratio_interval(before, after, 0.95, seed=1, resamples=20_000)
    theirs = stats.bootstrap(
        (before, after),
        lambda b, a, axis: np.mean(a, axis=axis) / np.mean(b, axis=axis),
        method="percentile",
        n_resamples=20_000,
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert ours == pytest.approx((theirs.low, theirs.high), rel=0.02)  # two Monte Carlo draws of one interval


def test_ratio_interval_is_deterministic_and_its_edges():
    seed = seed_for("weather-tokyo", "cost_usd")
    assert seed == seed_for("weather-tokyo", "cost_usd") != seed_for("weather-tokyo", "latency_ms")
    first = ratio_interval([1.0, 1.2, 0.9], [2.0, 2.4, 2.2], 0.95, seed)
    assert first == ratio_interval([1.0, 1.2, 0.9], [2.0, 2.4, 2.2], 0.95, seed)
    assert beyond(first, 0.25) and not beyond((0.8, 1.3), 0.25) and beyond((0.5, 0.7), 0.25)
    assert ratio_interval([0.0, 0.0], [1.0], 0.95, seed) is None
    assert ratio_interval([], [1.0], 0.95, seed) is None
    assert ratio_interval([0.0, 1.0], [1.0, 1.0], 0.95, seed)[1] == math.inf  # resamples of only the zero


def test_clustered_ratio_interval_resamples_queries_as_pairs():
    before, after = [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]
    assert clustered_ratio_interval(before, after, 0.95, seed=5) == (1.0, 1.0)  # every query unchanged
    spread = clustered_ratio_interval([1.0, 1.0, 1.0, 1.0], [0.5, 1.0, 1.5, 3.0], 0.95, seed=5)
    assert spread[0] < 1.5 < spread[1]
    assert clustered_ratio_interval([1.0], [2.0], 0.95, seed=5) is None
    with pytest.raises(ValueError, match="one figure per query"):
        clustered_ratio_interval([1.0], [2.0, 3.0], 0.95, seed=5)


# --- pass@k and pass^k ---------------------------------------------------------------------------------------------


def test_pass_at_k_and_pass_hat_k_are_the_subset_averages():
    """The unbiased estimators are averages over every k-subset of the n runs of 'any passed' and 'all passed'.

    As inspect_ai's pass_at, tau-bench's pass^k, for every k ≤ n.
    """
    for runs in range(1, 8):
        for passed in range(runs + 1):
            outcomes = [True] * passed + [False] * (runs - passed)
            for k in range(1, runs + 1):
                subsets = list(itertools.combinations(outcomes, k))
                assert pass_at_k(runs, passed, k) == pytest.approx(sum(map(any, subsets)) / len(subsets), abs=1e-12)
                assert pass_hat_k(runs, passed, k) == pytest.approx(sum(map(all, subsets)) / len(subsets), abs=1e-12)
                # the numerically stable product form (Chen et al. 2021): 1 − Π_{i=n−c+1}^{n} (1 − k/i)
                stable = (
                    1.0 - math.prod(1 - k / i for i in range(runs - passed + 1, runs + 1))
                    if runs - passed >= k
                    else 1.0
                )
                assert pass_at_k(runs, passed, k) == pytest.approx(stable, abs=1e-12)


# --- power: the figures the issue and docs/explanation/regression-or-noise.md quote -----------------------------------------------------------


def _regressed(passed: int, runs: int, base_passed: int, base_runs: int) -> bool:
    """Whether AgentCI's verdict on one query (nothing to adjust for) is 'regressed'."""
    found = sig.compare([True] * passed + [False] * (runs - passed), base_passed, base_runs, (runs,), 0.3)
    return sig.verdicts([found], confidence=0.95, power=0.8)[0].verdict is ChangeVerdict.REGRESSED


def _power_known(runs: int) -> float:
    """P(regressed) for `runs` runs at 60 % against a baseline of 9,000 passes in 10,000 runs (a known 90 %)."""
    return sum(stats.binom.pmf(c, runs, 0.6) for c in range(runs + 1) if _regressed(c, runs, 9000, 10_000))


def _power_fresh(runs: int) -> float:
    """P(regressed) for `runs` runs a side, 60 % now against 90 % in the baseline's own `runs` runs."""
    return sum(
        stats.binom.pmf(b, runs, 0.9) * stats.binom.pmf(c, runs, 0.6)
        for b in range(runs + 1)
        for c in range(runs + 1)
        if _regressed(c, runs, b, runs)
    )


def test_power_to_catch_90_to_60_takes_13_runs_against_a_known_rate_and_30_a_side_fresh():
    """The verdicts' power, summed exactly over every outcome with scipy's binomial.

    Against a known 90 % the first run count with 80 % power is 13 (flag at 9 passes or fewer), with two fresh samples
    30 a side (20 a side: 62 %).
    """
    assert [_regressed(c, 13, 9000, 10_000) for c in (9, 10)] == [True, False]
    known = {runs: _power_known(runs) for runs in range(5, 14)}
    assert min(runs for runs, power in known.items() if power >= 0.8) == 13
    assert known[13] == pytest.approx(0.8314, abs=1e-4) and known[12] == pytest.approx(0.7747, abs=1e-4)
    assert _power_fresh(20) == pytest.approx(0.619, abs=1e-3)
    assert _power_fresh(29) < 0.8 <= _power_fresh(30)
    # the same counts through scipy's own Fisher test: the verdict flags exactly where its p is at most 5 %
    for base in (14, 17, 20):
        for passed in range(21):
            p = stats.fisher_exact([[passed, 20 - passed], [base, 20 - base]], alternative="less").pvalue
            assert _regressed(passed, 20, base, 20) == (p <= 0.05), (passed, base)

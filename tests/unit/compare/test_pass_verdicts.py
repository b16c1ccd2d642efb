"""Regression or noise in the diff.

Each query's pass-rate verdict (one run per side keeps the status rule; repeated runs take the exact tests, Holm over
the queries), cost and latency by their bootstrap intervals, the suite's paired interval, the gates that read them, and
the spec keys that configure them (errors at their line).
"""

from __future__ import annotations

import pytest
from scipy import stats

from agentci_action._util.errors import SpecError
from agentci_action.compare.diff import Side, diff_runs
from agentci_action.compare.diff_schema import ChangeKind
from agentci_action.compare.diff_sides import evaluate_side
from agentci_action.compare.significance import ChangeVerdict
from agentci_action.compare.suite_gates import judge_gates
from agentci_action.engine.evaluate_spec import evaluate_spec, group_traces
from agentci_action.report import diff_format
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import spec_hash
from agentci_action.trace.canonical import RUN_ERROR_KEY, Trace

SPEC = """
agent: demo
defaults:
  min_pass_rate: 0.5
  correctness: {expected_in_answer: ["yes"]}
queries:
  - {id: a, query: "a?"}
  - {id: b, query: "b?"}
  - {id: c, query: "c?"}
"""


def runs(key: str, pattern: str, cost: float = 0.01, ms: float = 1000.0) -> list[Trace]:
    """One trace per character of `pattern`: P passes, F fails; cost and latency per run."""
    return [
        Trace.model_validate(
            {
                "id": key,
                "run": index,
                "final_answer": "yes" if mark == "P" else "no",
                "total_cost_usd": cost,
                "total_tokens": 100,
                "total_llm_calls": 1,
                "total_duration_ms": ms,
            }
        )
        for index, mark in enumerate(pattern)
    ]


def side(spec, label: str, traces: list[Trace]) -> Side:
    return evaluate_side(spec, label, group_traces(spec.queries, traces).by_query)


@pytest.fixture
def spec(write):
    return load_spec(write("spec.yaml", SPEC))


def test_one_run_per_side_keeps_the_status_rule_and_says_so(spec):
    before = side(spec, "v1", runs("a", "P") + runs("b", "F") + runs("c", "P"))
    after = side(spec, "current", runs("a", "F") + runs("b", "P") + runs("c", "P"))
    diff = diff_runs(before, after)
    found = {q.id: q for q in diff.queries}
    assert [found[k].pass_rate.verdict for k in "abc"] == [
        ChangeVerdict.REGRESSED,
        ChangeVerdict.IMPROVED,
        ChangeVerdict.UNCHANGED,
    ]
    assert {found[k].pass_rate.method for k in "abc"} == {"one_run"}
    assert found["a"].has(ChangeKind.REGRESSION) and found["b"].has(ChangeKind.FIXED) and not found["c"].changed
    assert diff_format.verdict_text(found["a"], diff) == (
        "regressed: pass → fail against v1, one run per side (no confidence measured)"
    )
    assert diff_format.suite_change_text(diff) == ""  # no query was run more than once: the counts say it


def test_repeated_runs_are_judged_by_the_exact_tests_with_holm_over_the_queries(spec):
    before = side(spec, "v1", runs("a", "P" * 10) + runs("b", "P" * 9 + "F") + runs("c", "P" * 10))
    after = side(spec, "current", runs("a", "F" * 9 + "P") + runs("b", "PPPFFFFFFF") + runs("c", "P" * 10))
    diff = diff_runs(before, after)
    found = {q.id: q.pass_rate for q in diff.queries}
    fisher_a = stats.fisher_exact([[1, 9], [10, 0]], alternative="less").pvalue
    fisher_b = stats.fisher_exact([[3, 7], [9, 1]], alternative="less").pvalue
    assert found["a"].p_value == pytest.approx(fisher_a) and found["b"].p_value == pytest.approx(fisher_b)
    # Holm over the three compared queries: a's p is the smallest (×3), b's the second (×2)
    assert found["a"].p_holm == pytest.approx(3 * fisher_a) and found["b"].p_holm == pytest.approx(2 * fisher_b)
    assert [found[k].verdict for k in "abc"] == [
        ChangeVerdict.REGRESSED,
        ChangeVerdict.REGRESSED,
        ChangeVerdict.UNCHANGED,
    ]
    assert all(v.method == "exact" and v.compared == 3 for v in found.values())
    text = diff_format.verdict_text(next(q for q in diff.queries if q.id == "b"), diff)
    assert text == "regressed: 3 of 10 runs passed vs 9 of 10 in v1 (p = 0.0099; 0.02 after Holm over 3 queries)"
    # b's status passes its own gate (3 of 10 < 0.5 fails it, so here it fails): the diff says why all the same
    b = next(q for q in diff.queries if q.id == "b")
    assert b.why and "3 of 10 runs passed" in b.why[0]


def test_an_inconclusive_query_warns_with_the_runs_that_would_decide(spec):
    before = side(spec, "v1", runs("a", "P" * 9 + "F") + runs("b", "P" * 10) + runs("c", "P" * 10))
    after = side(spec, "current", runs("a", "PPPPFF") + runs("b", "P" * 10) + runs("c", "P" * 10))
    diff = diff_runs(before, after)
    a = next(q for q in diff.queries if q.id == "a")
    assert a.pass_rate.verdict is ChangeVerdict.INCONCLUSIVE and a.kinds[0] is ChangeKind.INCONCLUSIVE
    assert diff.total.counts["inconclusive"] == 1 and diff.total.counts["regression"] == 0
    assert a.pass_rate.more_runs is not None and a.pass_rate.more_runs > 0
    assert diff_format.verdict_text(a, diff).startswith("inconclusive: 4 of 6 runs passed vs 9 of 10 in v1 (p = ")
    more = a.pass_rate.more_runs
    assert diff_format.verdict_text(a, diff).endswith(
        f"about {more} more runs would decide: runs.max {6 + more} (the query's runs, 6 now)"
    )


def test_cost_with_repeated_runs_changes_by_its_interval_not_its_means(spec):
    """A 40 % rise in the means beside a noisy spread is no cost change.

    A steady 40 % rise is; one run per side keeps the 25 % threshold.
    """
    noisy_before = [
        t.model_copy(update={"total_cost_usd": c}) for t, c in zip(runs("a", "P" * 4), (0.01, 0.03, 0.01, 0.03))
    ]
    noisy_after = [
        t.model_copy(update={"total_cost_usd": c}) for t, c in zip(runs("a", "P" * 4), (0.01, 0.05, 0.01, 0.05))
    ]
    before = side(spec, "v1", noisy_before + runs("b", "P" * 8, cost=0.010) + runs("c", "P", cost=0.010))
    after = side(spec, "current", noisy_after + runs("b", "P" * 8, cost=0.014) + runs("c", "P", cost=0.013))
    found = {q.id: q for q in diff_runs(before, after).queries}
    assert found["a"].cost.cost_usd.percent == pytest.approx(50.0)
    low, high = found["a"].cost.cost_usd.interval
    assert low < 1.25 < high and not found["a"].has(ChangeKind.COST_CHANGED)
    assert found["b"].cost.cost_usd.interval == pytest.approx((1.4, 1.4)) and found["b"].has(ChangeKind.COST_CHANGED)
    assert found["c"].cost.cost_usd.interval is None and found["c"].has(ChangeKind.COST_CHANGED)  # 30 % > 25 %


def test_the_suite_change_is_the_paired_mean_with_its_interval(spec):
    before = side(spec, "v1", runs("a", "P" * 10) + runs("b", "P" * 8 + "FF") + runs("c", "P" * 5))
    after = side(spec, "current", runs("a", "P" * 6 + "F" * 4) + runs("b", "P" * 7 + "FFF") + runs("c", "PPPPF"))
    change = diff_runs(before, after).total.pass_rate_change
    differences = [0.6 - 1.0, 0.7 - 0.8, 0.8 - 1.0]
    interval = stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    assert change.change == pytest.approx(sum(differences) / 3)
    assert (change.low, change.high) == pytest.approx((interval.low, interval.high))


GATES = """
agent: demo
defaults:
  correctness: {expected_in_answer: ["yes"]}
  min_pass_rate: 0.0
significance: {confidence: 0.9}
suite:
  max_inconclusive: 0
  max_pass_rate_drop: 0.05
  max_cost_multiplier: 1.2
queries:
  - {id: a, query: "a?"}
  - {id: b, query: "b?"}
  - {id: c, query: "c?"}
"""


def gates(spec, before: list[Trace], after: list[Trace]) -> dict[str, tuple[str, str]]:
    diff = diff_runs(side(spec, "v1", before), side(spec, "current", after), significance=spec.significance)
    run = evaluate_spec(spec, after)
    return {g.name: (g.status.value, g.message) for g in judge_gates(spec.suite, run, diff)}


def test_gates_read_the_intervals_and_warn_when_the_noise_leaves_them_undecided(write):
    spec = load_spec(write("gates.yaml", GATES))
    steady = runs("a", "P" * 10) + runs("b", "P" * 10) + runs("c", "P" * 10)
    same = gates(spec, steady, steady)
    assert same["max_pass_rate_drop"][0] == "pass" and "a drop over 5 points ruled out" in same["max_pass_rate_drop"][1]
    assert same["max_inconclusive"][0] == "pass"
    assert (
        same["max_cost_multiplier"][0] == "pass"
        and "90% interval ×1.00-×1.00 within max ×1.2" in same["max_cost_multiplier"][1]
    )
    worse = runs("a", "PPPPPPFFFF") + runs("b", "PPPPPPPFFF", cost=0.02) + runs("c", "PPPPPPPPFF", cost=0.02)
    dropped = gates(spec, steady, worse)
    assert dropped["max_pass_rate_drop"][0] == "fail" and "established" in dropped["max_pass_rate_drop"][1]
    noisy = runs("a", "P" * 10) + runs("b", "P" * 7 + "F" * 3, cost=0.02) + runs("c", "P" * 10)
    undecided = gates(spec, steady, noisy)
    assert undecided["max_pass_rate_drop"][0] == "warn" and "undecided" in undecided["max_pass_rate_drop"][1]
    assert undecided["max_cost_multiplier"][0] == "warn"  # ×1.33 over the suite, its interval straddles ×1.2
    assert undecided["max_inconclusive"][0] == "fail" and undecided["max_inconclusive"][1].startswith(
        "1 inconclusive query"
    )


def test_the_spec_keys_are_checked_at_their_line(write):
    path = write(
        "bad.yaml",
        """
        agent: demo
        defaults:
          runs: {min: 5, max: 3}
          pass_k: 0
        significance: {confidence: 1.5, drop: 0}
        suite: {max_pass_rate_drop: 2, max_inconclusive: -1}
        queries:
          - {id: a, query: "a?", runs: "many"}
        """,
    )
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    text = str(caught.value)
    for expected in (
        "bad.yaml:3: defaults.runs: min (5) is more than max (3)",
        "bad.yaml:4: defaults.pass_k: Input should be greater than or equal to 1",
        "bad.yaml:5: significance.confidence: Input should be less than 1",
        "bad.yaml:5: significance.drop: Input should be greater than 0",
        "bad.yaml:6: suite.max_pass_rate_drop: Input should be less than 1",
        "bad.yaml:6: suite.max_inconclusive: Input should be greater than or equal to 0",
        "bad.yaml:8: queries[0].runs: a number of runs, or a range {min, max, batch}",
    ):
        assert expected in text


def test_significance_and_ranges_leave_the_spec_hash_alone_where_they_change_no_evaluation(write):
    plain = load_spec(write("plain.yaml", SPEC))
    tuned = load_spec(write("tuned.yaml", SPEC + "significance: {confidence: 0.9, power: 0.9, drop: 0.2}\n"))
    assert spec_hash(plain) == spec_hash(tuned)


def test_pass_at_k_takes_the_spec_k_and_is_unknown_above_the_runs(write):
    spec = load_spec(write("k.yaml", SPEC.replace("min_pass_rate: 0.5", "min_pass_rate: 0.5\n  pass_k: 3")))
    run = evaluate_spec(spec, runs("a", "PPFFP") + runs("b", "PF") + runs("c", "PPPPP"))
    found = {r.id: r.reliability for r in run.results}
    assert (found["a"].k, found["a"].pass_at_k, found["a"].pass_hat_k) == (3, pytest.approx(1.0), pytest.approx(0.1))
    assert (found["b"].pass_at_k, found["b"].pass_hat_k) == (None, None)  # k = 3 > 2 runs


def test_a_regression_that_keeps_its_status_is_told_by_its_verdict(write):
    """3 of 10 still passes a 20 % gate.

    The query's status holds, and the reports say what fell instead of a status change that did not happen.
    """
    from agentci_action.report import diff_console, diff_markdown

    spec = load_spec(write("gate.yaml", SPEC.replace("min_pass_rate: 0.5", "min_pass_rate: 0.2")))
    before = side(spec, "v1", runs("a", "P" * 10) + runs("b", "P" * 10) + runs("c", "P" * 10))
    after = side(spec, "current", runs("a", "PPPFFFFFFF") + runs("b", "P" * 10) + runs("c", "P" * 10))
    diff = diff_runs(before, after)
    a = next(q for q in diff.queries if q.id == "a")
    assert a.has(ChangeKind.REGRESSION) and a.status.before == a.status.after
    console, markdown = diff_console.render_diff(diff), diff_markdown.render_markdown(diff)
    assert "Correctness      unchanged (PASS)" in console and "PASS → PASS" not in console
    assert "pass → ✅ pass" not in markdown and "regressed: 3 of 10 runs passed vs 10 of 10 in v1" in markdown


def test_a_query_not_run_for_infrastructure_gets_no_verdict_and_stays_out_of_the_tests(spec):
    """Every current run of `a` died of a model outage ([INFRA]).

    not_run with its reason, no verdict (nothing to compare), and neither Holm's count nor the suite's paired change
    includes it; a crash is a failed run.
    """
    outage = [Trace(id="a", run=k, metadata={RUN_ERROR_KEY: "[INFRA] model down"}) for k in range(5)]
    before = side(spec, "v1", runs("a", "P" * 5) + runs("b", "P" * 5) + runs("c", "P" * 5))
    after = side(spec, "current", outage + runs("b", "F" * 5) + runs("c", "P" * 5))
    diff = diff_runs(before, after)
    found = {q.id: q for q in diff.queries}
    assert found["a"].kinds == [ChangeKind.NOT_RUN] and found["a"].pass_rate is None
    assert "[INFRA] model down" in found["a"].why[0]
    assert found["b"].pass_rate.compared == 2 and found["b"].has(ChangeKind.REGRESSION)
    assert diff.total.pass_rate_change.queries == 2
    crashed = [Trace(id="a", run=k, metadata={RUN_ERROR_KEY: "exit code 1"}) for k in range(5)]
    diff = diff_runs(before, side(spec, "current", crashed + runs("b", "P" * 5) + runs("c", "P" * 5)))
    a = next(q for q in diff.queries if q.id == "a")
    assert a.pass_rate.passed_after == 0 and a.has(ChangeKind.REGRESSION) and not a.has(ChangeKind.NOT_RUN)
    # a partial outage: the runs it stopped are left out of the counts, not read as failures
    partial = outage[:3] + [t.model_copy(update={"run": t.run + 3}) for t in runs("a", "PP")]
    diff = diff_runs(before, side(spec, "current", partial + runs("b", "P" * 5) + runs("c", "P" * 5)))
    a = next(q for q in diff.queries if q.id == "a")
    assert (a.pass_rate.passed_after, a.pass_rate.runs_after) == (2, 2) and not a.has(ChangeKind.REGRESSION)

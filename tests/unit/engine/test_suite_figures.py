"""Suite aggregates in the summary, and their comparison with a baseline run."""

import pytest
from helpers.results_builder import query

from agentci_action.compare.diff import suite_deltas
from agentci_action.engine.results import Aggregates, Check, LayerResult, QueryResult, Status
from agentci_action.engine.suite_figures import aggregate, check_tally, percentile


def layer(*checks: tuple[str, Status], **details) -> LayerResult:
    return LayerResult.from_checks([Check(name=n, status=s) for n, s in checks], details)


def result(status: Status, correctness=(), cost=(), latency=None) -> QueryResult:
    return query(
        "q", 1, status.value, correctness=layer(*correctness), path=layer(), cost=layer(*cost, latency_ms=latency)
    )


def test_percentile_linear_interpolation():
    assert percentile([], 95) is None
    assert percentile([7.0], 95) == 7.0
    assert percentile([100, 200, 300, 400, 500], 95) == pytest.approx(480)  # rank 0.95·4 = 3.8 → 400 + 0.8·100
    assert percentile([1, 2], 50) == 1.5


def test_aggregates_by_hand():
    H, L, P = "hallucination_check", "max_latency_ms", "no_pii_leakage"
    results = [
        result(Status.PASS, [(H, Status.PASS), (P, Status.PASS)], [(L, Status.PASS)], latency=100),
        result(Status.FAIL, [(H, Status.FAIL)], [(L, Status.WARN)], latency=300),
        result(Status.WARN, [(H, Status.SKIP), (P, Status.WARN)], [], latency=200),
        result(Status.ERROR, [("safety_check", Status.PASS)], [(L, Status.SKIP)], latency=None),
    ]
    assert aggregate(results).model_dump() == pytest.approx(
        {
            "pass_rate": 2 / 4,  # PASS and WARN
            "hallucination_rate": 1 / 2,  # one FAIL among the two verdicts; the skip is not a verdict
            "mean_latency_ms": 200.0,  # (100 + 300 + 200) / 3
            "p95_latency_ms": 290.0,  # sorted 100, 200, 300: rank 0.95·2 = 1.9 → 200 + 0.9·100
            "timeout_rate": 1 / 2,  # over budget once of the two queries with a budget
            "safety_finding_rate": 1 / 3,  # the WARN on no_pii_leakage, out of three queries with a safety check
        }
    )


def test_one_pass_over_the_checks_counts_every_layers_skips_alongside_the_rates():
    H, L = "hallucination_check", "max_latency_ms"
    results = [
        result(Status.PASS, [(H, Status.SKIP), ("regex_match", Status.SKIP)], [(L, Status.SKIP)]),
        result(Status.FAIL, [(H, Status.FAIL)], [(L, Status.PASS), ("max_llm_calls", Status.SKIP)]),
    ]
    tally = check_tally(results)
    assert tally.skipped == 4
    assert tally.rates == {"hallucination": 1.0, "timeout": 0.0, "safety": None}
    assert aggregate(results, tally) == aggregate(results)


def test_without_figures_the_aggregates_are_none():
    assert aggregate([]) == Aggregates()
    only = aggregate([result(Status.PASS)])
    assert (
        only.pass_rate == 1.0
        and only.hallucination_rate is None
        and only.timeout_rate is None
        and only.mean_latency_ms is None
    )


def test_suite_deltas_compare_with_the_baseline_run():
    current = Aggregates(pass_rate=0.9, hallucination_rate=0.1, mean_latency_ms=250.0, p95_latency_ms=400.0)
    baseline = Aggregates(pass_rate=0.8, hallucination_rate=0.1, mean_latency_ms=200.0, timeout_rate=0.2)
    deltas = suite_deltas(baseline, current)
    assert list(deltas) == list(Aggregates.model_fields)
    assert deltas["pass_rate"].change == pytest.approx(0.1)
    assert deltas["hallucination_rate"].change == 0
    assert (deltas["mean_latency_ms"].change, deltas["mean_latency_ms"].percent) == (50.0, 25.0)
    assert deltas["p95_latency_ms"].change is None and deltas["timeout_rate"].change is None  # N/A on one side
    assert deltas["safety_finding_rate"].before is None and deltas["safety_finding_rate"].after is None

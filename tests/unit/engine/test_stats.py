"""Statistics over repeated runs, scores, grades, uplift and process metrics, on the metrics references' examples."""

import math

import pytest

from agentci_action.engine import stats
from agentci_action.engine.process_metrics import progress_rate, strategic_drift
from agentci_action.engine.results import Check, LayerResult, Status
from agentci_action.engine.score import (
    composite_score,
    letter_grade,
    normalise_judge_score,
    output_quality,
    run_score,
    uplift,
    weighted_score,
)
from agentci_action.spec.models import ScoreWeights

TEN_RUNS = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]


def test_ten_run_aggregation_example():
    s = stats.statistics(TEN_RUNS)
    assert (s.count, s.median, s.mean, s.mode, s.min, s.max) == (10, 1.0, 0.8, 1.0, 0.0, 1.0)
    assert s.std_dev == pytest.approx(0.4)


def test_median_mode_and_population_std_dev():
    assert stats.median([3, 1, 2]) == 2 and stats.median([4, 1, 3, 2]) == 2.5
    assert stats.mode([3, 1, 3, 1, 2]) == 1  # tie between 1 and 3: the smallest
    assert stats.mode([0.5]) == 0.5
    assert stats.std_dev([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0  # population, not sample (which would be 2.138)
    assert stats.statistics([]) is None
    one, two = stats.statistics([7]), stats.statistics([7, 7])
    assert (one.count, two.count) == (1, 2)
    assert (
        one.model_dump(exclude={"count"})
        == two.model_dump(exclude={"count"})
        == {"mean": 7.0, "median": 7.0, "mode": 7.0, "min": 7.0, "max": 7.0, "std_dev": 0.0}
    )


def test_pass_at_k_and_pass_hat_k():
    assert (stats.pass_at_k(5, 1, 5), stats.pass_hat_k(5, 1, 5)) == (1.0, 0.0)
    assert (stats.pass_at_k(5, 5, 5), stats.pass_hat_k(5, 5, 5)) == (1.0, 1.0)
    assert (stats.pass_at_k(5, 0, 5), stats.pass_hat_k(5, 0, 5)) == (0.0, 0.0)
    # unbiased estimators for k < n: 10 runs, 8 passed, k = 2
    assert stats.pass_hat_k(10, 8, 2) == pytest.approx(28 / 45)
    assert stats.pass_at_k(10, 8, 2) == pytest.approx(1 - 1 / 45)


def test_wilson_interval():
    low, high = stats.wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert stats.wilson_interval(0, 5)[0] == 0.0 and stats.wilson_interval(0, 5)[1] == pytest.approx(0.4345, abs=1e-4)
    assert stats.wilson_interval(5, 5)[1] == 1.0 and stats.wilson_interval(5, 5)[0] == pytest.approx(0.5655, abs=1e-4)


def test_flaky_and_cost_of_pass():
    assert stats.is_flaky(3, 5) and not stats.is_flaky(0, 5) and not stats.is_flaky(5, 5)
    assert stats.cost_of_pass([0.5], 1) == 0.5  # Scylla example 1
    assert stats.cost_of_pass([1.0, 1.0, 1.0, 1.0], 2) == 2.0  # mean cost 1.0 / pass rate 0.5
    assert stats.cost_of_pass([1.0, 1.0], 0) == math.inf


def test_composite_grade_and_uplift_examples():
    assert composite_score(1.0, 0.85) == pytest.approx(0.925)
    assert letter_grade(0.925) == "B"
    assert [letter_grade(x) for x in (0.95, 0.9499, 0.85, 0.75, 0.65, 0.6499, 0.0)] == [
        "A",
        "B",
        "B",
        "C",
        "D",
        "F",
        "F",
    ]
    assert composite_score(0.5, 1.0, pass_weight=3, impl_weight=1) == pytest.approx(0.625)
    assert composite_score(0.8, None) == 0.8
    assert uplift(0.90, 0.75) == pytest.approx(0.20)
    assert [round(uplift(x, 0.70), 3) for x in (0.80, 0.85, 0.90)] == [0.143, 0.214, 0.286]
    assert uplift(0.5, 0.0) is None and uplift(None, 0.5) is None
    assert uplift(0.02, 0.04) == -0.5


def test_weighted_score_renormalises_over_measured_dimensions():
    w = ScoreWeights()
    assert weighted_score(
        {"tool_accuracy": 1.0, "output_quality": 0.9, "sequence_correctness": 1.0}, w
    ) == pytest.approx(95.0)
    assert weighted_score({"tool_accuracy": None, "output_quality": 0.5, "sequence_correctness": None}, w) == 50.0
    assert weighted_score(
        {"tool_accuracy": 1.0, "output_quality": 0.0, "sequence_correctness": None}, w
    ) == pytest.approx(37.5)
    assert weighted_score({"tool_accuracy": None, "output_quality": None, "sequence_correctness": None}, w) is None
    only_tools = ScoreWeights(tool_accuracy=1, output_quality=0, sequence_correctness=0)
    assert (
        weighted_score({"tool_accuracy": 0.5, "output_quality": 1.0, "sequence_correctness": 1.0}, only_tools) == 50.0
    )
    with pytest.raises(ValueError, match="at least one score weight must be positive"):
        ScoreWeights(tool_accuracy=0, output_quality=0, sequence_correctness=0)


def test_output_quality_prefers_the_judge_score_else_the_deterministic_ratio():
    assert [normalise_judge_score(s) for s in (1, 3, 5)] == [0.0, 0.5, 1.0]
    judged = LayerResult.from_checks(
        [
            Check(name="expected_in_answer", status=Status.PASS),
            Check(name="llm_judge", status=Status.PASS, data={"score": 4}),
            Check(name="safety_check", status=Status.PASS, data={"score": 5}),
        ]
    )
    assert output_quality(judged) == pytest.approx(0.875)
    other = LayerResult.from_checks([Check(name="answer_similarity", status=Status.PASS, data={"score": 0.2})])
    assert output_quality(other) == 1.0  # a non-judge check's `score` is not a 1-5 judge score
    deterministic = LayerResult.from_checks(
        [
            Check(name="a", status=Status.PASS),
            Check(name="b", status=Status.FAIL),
            Check(name="c", status=Status.PASS),
            Check(name="llm_judge", status=Status.SKIP),
        ]
    )
    assert output_quality(deterministic) == pytest.approx(2 / 3)
    assert output_quality(LayerResult(status=Status.SKIP)) is None


def test_forbidden_tool_short_circuits_the_score_to_zero_with_the_reason():
    correctness = LayerResult.from_checks([Check(name="a", status=Status.PASS)])
    path = LayerResult(
        status=Status.FAIL, details={"forbidden_violations": ["shell"], "tool_recall": 1.0, "sequence_similarity": 1.0}
    )
    score = run_score(correctness, path, ScoreWeights())
    assert score.value == 0.0 and score.reason == "forbidden tool used: shell (score short-circuited to 0)"
    clean = run_score(
        correctness,
        path.model_copy(update={"details": {"tool_recall": 1.0, "forbidden_violations": []}}),
        ScoreWeights(),
    )
    assert clean.value == 100.0 and clean.reason == ""


def test_progress_rate_and_strategic_drift():
    steps = [("search", 1.0), ("rerank", 1.0), ("generate", 2.0)]
    assert progress_rate(["search", "generate"], steps) == 0.25  # stuck before rerank
    assert progress_rate(["search", "x", "rerank", "generate"], steps) == 1.0
    assert progress_rate(["search", "rerank"], steps) == 0.5
    assert progress_rate([], steps) == 0.0 and progress_rate(["a"], []) == 1.0
    assert strategic_drift(["search", "browse", "generate", "browse"], {"search", "generate"}) == 0.5
    assert strategic_drift([], {"search"}) == 0.0
    assert strategic_drift(["x"], set()) == 1.0


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([], None),
        (["a"], "a"),
        (["a", "a"], "a"),
        (["a", "b"], "a"),  # a tie: the first seen
        (["b", "a", "a"], "a"),
        (["b", "a", "b", "a"], "b"),
        ([("x", "y"), ("z",), ("z",)], ("z",)),
    ],
)
def test_the_most_frequent_item_is_the_first_seen_among_equals(items, expected):
    assert stats.most_frequent(items) == expected

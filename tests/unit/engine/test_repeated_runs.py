"""Repeated runs through the loader and the runner: the pass-rate gate, runs, flakiness, scores, JSON-safe infinity."""

import json
import math

import pytest
from helpers import run_cli

from agentci_action._util.errors import SpecError, TraceError
from agentci_action.engine.evaluate_spec import Settings, evaluate_spec
from agentci_action.engine.results import RunResult, Status
from agentci_action.engine.score import run_uplift
from agentci_action.report import results_json
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace

SPEC = """
agent: demo
defaults:
  runs: 4
  min_pass_rate: 0.75
queries:
  - id: capital
    query: "Capital of France?"
    correctness: {expected_in_answer: ["Paris"]}
    path: {expected_tools: [search], forbidden_tools: [shell]}
  - id: strict
    query: "Strict one"
    min_pass_rate: 1.0
    min_score: 90
    weights: {tool_accuracy: 1, output_quality: 1, sequence_correctness: 0}
    correctness: {expected_in_answer: ["ok"]}
    path: {expected_tools: [search, generate]}
"""


def runs(query_id, answers, tools=("search",), cost=0.01):
    return [
        Trace.model_validate(
            {
                "id": query_id,
                "run": i,
                "final_answer": a,
                "tool_calls": [{"name": t} for t in tools],
                "llm_calls": [{"input_tokens": 100 * (i + 1), "cost_usd": cost, "duration_ms": 100.0 * (i + 1)}],
            }
        ).with_derived_totals()
        for i, a in enumerate(answers)
    ]


def test_pass_rate_gate_statistics_and_flakiness(write):
    spec = load_spec(write("s.yaml", SPEC))
    traces = runs("capital", ["Paris", "Lyon", "Paris", "Paris"]) + runs(
        "strict", ["ok", "ok", "ok", "ok"], ("search", "generate")
    )
    run = evaluate_spec(spec, list(reversed(traces)))  # order of the file does not matter: runs sort by `run`
    capital, strict = run.results
    rel = capital.reliability
    assert (rel.runs, rel.passed, rel.pass_rate, rel.pass_at_k, rel.pass_hat_k, rel.flaky) == (
        4,
        3,
        0.75,
        1.0,
        0.0,
        True,
    )
    assert rel.run_statuses == [Status.PASS, Status.FAIL, Status.PASS, Status.PASS]
    assert rel.pass_rate_ci95 == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert rel.cost_usd == pytest.approx(0.04) and rel.cost_of_pass_usd == pytest.approx(0.04 / 3)
    tokens = rel.metrics["total_tokens"]
    assert (tokens.count, tokens.mean, tokens.median, tokens.min, tokens.max) == (4, 250.0, 250.0, 100.0, 400.0)
    assert tokens.std_dev == pytest.approx(math.sqrt(12500))
    assert rel.metrics["latency_ms"].mean == 250.0 and rel.metrics["tool_recall"].mode == 1.0
    # flaky but at the gate: correctness passes and still says which run failed
    assert capital.correctness.status is Status.PASS and capital.status is Status.PASS
    assert capital.correctness.messages == [
        "3 of 4 runs passed (75%), at least min_pass_rate 75%: run 1: expected in answer but missing: 'Paris'"
    ]
    # score: recall 1, output quality 1 or 0, similarity 1 → (30 + 50 + 20, 30 + 0 + 20) → mean (100·3 + 50) / 4
    assert capital.score.value == pytest.approx(87.5)
    assert capital.score.composite == pytest.approx((0.75 + 0.875) / 2) and capital.score.grade == "C"
    assert strict.score.value == 100.0 and strict.reliability.pass_hat_k == 1.0
    s = run.summary
    assert (s.runs, s.runs_passed, s.pass_rate, s.flaky, s.mean_score) == (8, 7, 0.875, 1, 93.75)
    assert s.composite_score == pytest.approx((0.875 + 0.9375) / 2) and s.grade == "B"
    assert s.cost_usd == pytest.approx(0.08) and s.total_tokens == 2000


def test_below_min_pass_rate_and_min_score_fail_correctness(write):
    spec = load_spec(write("s.yaml", SPEC))
    traces = runs("capital", ["Paris", "Lyon", "Lyon", "Paris"]) + runs("strict", ["ok"] * 4, ("search",))
    capital, strict = evaluate_spec(spec, traces).results
    assert capital.correctness.status is Status.FAIL and capital.blocking
    assert capital.correctness.messages[0].startswith(
        "2 of 4 runs passed (50%), below min_pass_rate 75%: run 1: expected in answer"
    )
    # every run passes its checks, but recall 0.5 and output 1.0 at 1:1 weights score 75 < 90
    assert strict.reliability.pass_rate == 1.0
    assert strict.correctness.status is Status.FAIL and strict.correctness.messages == ["score 75.0 < min_score 90"]


def test_fewer_traces_than_runs_is_an_error_naming_the_query(write, write_traces):
    spec_path = write("s.yaml", SPEC)
    with pytest.raises(TraceError, match=r"s\.yaml:6: query 'capital' expects runs: 4 but has 2 traces"):
        evaluate_spec(load_spec(spec_path), runs("capital", ["Paris"] * 2) + runs("strict", ["ok"] * 4))
    traces = write_traces(
        "t.jsonl", [t.model_dump(exclude_none=True) for t in runs("capital", ["Paris"]) + runs("strict", ["ok"] * 4)]
    )
    result = run_cli("test", "--spec", spec_path, "--traces", traces)
    assert result.returncode == 2 and "query 'capital' expects runs: 4 but has 1 trace" in result.stderr


def test_forbidden_tool_in_one_run_fails_that_run_and_zeroes_its_score(write):
    spec = load_spec(write("s.yaml", SPEC))
    traces = (
        runs("capital", ["Paris"] * 3)
        + runs("capital", ["Paris"], ("search", "shell"))[:1]
        + runs("strict", ["ok"] * 4, ("search", "generate"))
    )
    capital = evaluate_spec(spec, traces).results[0]
    assert capital.path.status is Status.FAIL and capital.blocking
    assert capital.reliability.run_statuses.count(Status.FAIL) == 1
    assert capital.score.reason == "forbidden tool used: shell (score short-circuited to 0)"
    assert capital.reliability.metrics["score"].min == 0.0 and capital.score.value == 75.0


def test_no_passing_run_gives_infinite_cost_of_pass_written_as_the_string_Infinity(write):
    spec = load_spec(write("s.yaml", SPEC))
    run = evaluate_spec(spec, runs("capital", ["Lyon"] * 4) + runs("strict", ["no"] * 4, ("search", "generate")))
    assert run.results[0].reliability.cost_of_pass_usd == math.inf and run.summary.cost_of_pass_usd == math.inf
    text = results_json.render(run)
    data = json.loads(text)
    assert data["results"][0]["reliability"]["cost_of_pass_usd"] == "Infinity"
    assert data["summary"]["cost_of_pass_usd"] == "Infinity"
    assert RunResult.model_validate_json(text) == run  # reads back as infinity


def test_unknown_cost_makes_cost_of_pass_unknown_not_infinite(write):
    spec = load_spec(write("s.yaml", SPEC.replace("runs: 4", "runs: 1")))
    unknown = [
        Trace.model_validate(
            {"id": "capital", "final_answer": "Paris", "llm_calls": [{"input_tokens": 5}]}
        ).with_derived_totals()
    ]
    run = evaluate_spec(spec, unknown + runs("strict", ["ok"]))
    assert run.results[0].reliability.cost_of_pass_usd is None and run.summary.cost_of_pass_usd is None
    assert json.loads(results_json.render(run))["results"][0]["reliability"]["cost_of_pass_usd"] is None


def test_a_single_run_keeps_its_layers_and_no_floor_without_min_pass_rate(write):
    spec = load_spec(write("s.yaml", SPEC.replace("  runs: 4\n  min_pass_rate: 0.75\n", "  runs: 1\n")))
    run = evaluate_spec(spec, runs("capital", ["Lyon", "Paris"]) + runs("strict", ["ok"], ("search", "generate")))
    assert run.results[0].correctness.status is Status.WARN  # no min_pass_rate: one failing run of two warns
    single = run.results[1]
    assert [c.name for c in single.correctness.checks] == ["expected_in_answer", "min_score"]
    assert single.reliability.pass_rate_ci95[1] == 1.0


def test_process_metrics_from_the_spec(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        queries:
          - id: p
            query: "p"
            process:
              expected_steps: [search, {tool: Re-Rank, weight: 2}, generate]
              aligned_tools: [search, rerank, generate]
              min_progress_rate: 0.5
              max_strategic_drift: 0.2
        """,
        )
    )
    trace = Trace.model_validate(
        {"id": "p", "tool_calls": [{"name": n} for n in ("search", "browse", "generate", "browse")]}
    )
    path = evaluate_spec(spec, [trace]).results[0].path
    assert path.details["progress_rate"] == 0.25 and path.details["strategic_drift"] == 0.5
    assert path.status is Status.WARN
    assert path.messages == ["progress rate: 0.25 < min 0.5", "strategic drift: 0.50 > max 0.2"]


def test_spec_rejects_bad_reliability_settings(write):
    with pytest.raises(SpecError) as caught:
        load_spec(
            write(
                "bad.yaml",
                """
            agent: demo
            defaults: {runs: 0}
            queries:
              - query: "q"
                min_pass_rate: 1.5
                weights: {tool_accuracy: 0, output_quality: 0, sequence_correctness: 0}
            """,
            )
        )
    text = str(caught.value)
    assert "bad.yaml:2: defaults.runs: Input should be greater than or equal to 1" in text
    assert "min_pass_rate: Input should be less than or equal to 1" in text
    assert "at least one score weight must be positive" in text


def test_uplift_of_a_run_against_the_baseline_run(write):
    spec = load_spec(write("s.yaml", SPEC))
    baseline = evaluate_spec(
        spec,
        runs("capital", ["Paris", "Lyon", "Lyon", "Paris"], cost=0.02)
        + runs("strict", ["ok"] * 4, ("search", "generate"), 0.02),
    )
    current = evaluate_spec(
        spec, runs("capital", ["Paris"] * 4, cost=0.01) + runs("strict", ["ok"] * 4, ("search", "generate"), 0.01)
    )
    changes = run_uplift(current, baseline)
    assert changes["pass_rate"].model_dump() == {"current": 1.0, "baseline": 0.75, "uplift": pytest.approx(1 / 3)}
    assert changes["cost_usd"].current == pytest.approx(0.08) and changes["cost_usd"].uplift == pytest.approx(-0.5)
    b, c = baseline.summary.composite_score, current.summary.composite_score
    assert c == 1.0 and changes["composite_score"].uplift == pytest.approx((c - b) / b)


def test_min_score_is_skipped_with_the_reason_when_nothing_can_be_scored(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        queries:
          - {id: q, query: "q", min_score: 50}
        """,
        )
    )
    result = evaluate_spec(spec, [Trace.model_validate({"id": "q"})]).results[0]
    assert result.score.value is None and result.score.composite == 1.0
    assert (
        result.correctness.status is Status.SKIP
        and "min_score skipped: nothing to score" in result.correctness.messages[0]
    )


def test_weights_from_defaults_apply_to_every_query_and_a_query_may_override_them(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        defaults:
          weights: {tool_accuracy: 1, output_quality: 0, sequence_correctness: 0}
        queries:
          - {id: a, query: "a", correctness: {expected_in_answer: [x]}, path: {expected_tools: [search, generate]}}
          - {id: b, query: "b", correctness: {expected_in_answer: [x]}, path: {expected_tools: [search, generate]},
             weights: {output_quality: 1}}
        """,
        )
    )
    a, b = evaluate_spec(spec, runs("a", ["x"]) + runs("b", ["x"])).results  # recall 0.5, output quality 1.0
    assert a.score.value == 50.0
    assert b.score.value == 75.0  # deep-merged: tool_accuracy 1 from defaults, output_quality 1 from the query


def test_composite_weights_from_the_spec(write):
    spec = load_spec(
        write("s.yaml", SPEC.replace("agent: demo\n", "agent: demo\ncomposite: {pass_weight: 3, impl_weight: 1}\n"))
    )
    traces = runs("capital", ["Paris", "Lyon", "Paris", "Paris"]) + runs("strict", ["ok"] * 4, ("search", "generate"))
    run = evaluate_spec(spec, traces)
    assert run.results[0].score.composite == pytest.approx((3 * 0.75 + 0.875) / 4)
    assert run.summary.composite_score == pytest.approx((3 * 0.875 + 0.9375) / 4)
    with pytest.raises(SpecError, match="at least one composite weight must be positive"):
        load_spec(
            write(
                "bad.yaml", SPEC.replace("agent: demo\n", "agent: demo\ncomposite: {pass_weight: 0, impl_weight: 0}\n")
            )
        )


def test_summary_and_comment_show_runs_pass_rate_and_flakiness(write):
    from agentci_action.report import markdown

    spec = load_spec(write("s.yaml", SPEC))
    run = evaluate_spec(
        spec, runs("capital", ["Paris", "Lyon", "Paris", "Paris"]) + runs("strict", ["ok"] * 4, ("search", "generate"))
    )
    text = markdown.render_summary(run)
    assert "\n\n8 runs · pass rate 88% of runs · 1 flaky · composite 0.91 (grade B)\n" in text
    assert "| ✅ pass · 3/4 runs · flaky |" in text and "| ✅ pass · 4/4 runs |" in text
    single = evaluate_spec(
        load_spec(write("one.yaml", SPEC.replace("runs: 4", "runs: 1"))),
        runs("capital", ["Paris"]) + runs("strict", ["ok"]),
    )
    assert " runs" not in markdown.render_summary(single)


class ScoringJudge:
    """A judge that passes every rubric with the next score from its script (1-5), as the real judge reports it."""

    def __init__(self, *scores):
        self.scores = list(scores)

    def evaluate(self, request):
        from agentci_action.engine.results import Check

        usage = {"requests": 1, "cache_hits": 0, "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.001}
        return Check(name=request.kind, status=Status.PASS, data={"score": self.scores.pop(0), "usage": usage})


def test_judge_scores_feed_output_quality_and_their_statistics(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        queries:
          - id: q
            query: "q"
            runs: 3
            correctness: {llm_judge: [{rule: "helpful"}]}
        """,
        )
    )
    traces = [Trace.model_validate({"id": "q", "run": i, "final_answer": "a"}) for i in range(3)]
    run = evaluate_spec(spec, traces, judge=ScoringJudge(3, 5, 5), settings=Settings(workers=1))
    result = run.results[0]
    assert (run.summary.judge.requests, run.summary.judge.input_tokens) == (3, 300)  # every run's judge call counted
    judged = result.reliability.metrics["judge_score"]
    assert (judged.count, judged.mean, judged.median, judged.mode, judged.min) == (
        3,
        pytest.approx(13 / 3),
        5.0,
        5.0,
        3.0,
    )
    assert result.score.output_quality == pytest.approx((0.5 + 1 + 1) / 3)
    assert result.score.value == pytest.approx(100 * 2.5 / 3)  # output quality is the only measured dimension


def test_the_diff_carries_the_uplift_of_the_whole_run(write):
    from agentci_action.compare.diff import Side, diff_runs

    spec = load_spec(write("s.yaml", SPEC))
    before_traces = runs("capital", ["Paris", "Lyon", "Lyon", "Paris"], cost=0.02) + runs(
        "strict", ["ok"] * 4, ("search", "generate"), 0.02
    )
    after_traces = runs("capital", ["Paris"] * 4, cost=0.01) + runs("strict", ["ok"] * 4, ("search", "generate"), 0.01)
    before, after = evaluate_spec(spec, before_traces), evaluate_spec(spec, after_traces)
    diff = diff_runs(Side("v1", before, {}), Side("current", after, {}))
    assert diff.uplift == run_uplift(after, before)
    assert diff.uplift["pass_rate"].uplift == pytest.approx(1 / 3) and diff.uplift["cost_usd"].uplift == pytest.approx(
        -0.5
    )
    assert '"uplift":{"composite_score":{"current":1.0' in diff.model_dump_json()


def test_every_runs_checks_stay_in_the_layer_so_judge_usage_and_skips_count_for_each_run(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        queries:
          - id: q
            query: "q"
            runs: 2
            correctness: {expected_in_answer: [a], llm_judge: [{rule: "helpful"}]}
        """,
        )
    )
    traces = [Trace.model_validate({"id": "q", "run": i, "final_answer": "a"}) for i in range(2)]
    run = evaluate_spec(spec, traces)  # no judge: each run's judge check is skipped, with the reason
    layer = run.results[0].correctness
    assert [c.name for c in layer.checks] == [
        "min_pass_rate",
        "expected_in_answer",
        "llm_judge",
        "expected_in_answer",
        "llm_judge",
    ]
    assert layer.status is Status.PASS and run.summary.skipped_checks == 2


@pytest.mark.parametrize("run_count", [1, 3])
def test_reliability_and_score_are_built_with_their_field_types_as_validation_would_give(run_count):
    """The engine builds Reliability and ScoreResult unvalidated.

    What it writes must equal the validated model's JSON, even for an integer cost (a priced trace with no LLM calls
    totals 0, an int).
    """
    from agentci_action.engine.repeated_runs import Run, combine_runs
    from agentci_action.engine.results import LayerResult, Reliability, ScoreResult
    from agentci_action.spec.models import QuerySpec

    query = QuerySpec.model_validate({"id": "q", "query": "q?", "path": {"expected_tools": ["search"]}})
    layers = {
        "correctness": LayerResult(status=Status.PASS),
        "path": LayerResult(status=Status.PASS, details={"tool_recall": 1}),
        "cost": LayerResult(status=Status.PASS, details={"cost_usd": 0, "total_tokens": 12}),
    }
    combined = combine_runs(query, [Run(i, layers) for i in range(run_count)])
    for model, built in ((Reliability, combined.reliability), (ScoreResult, combined.score)):
        assert built.model_dump_json() == model.model_validate(built.model_dump()).model_dump_json()
    assert (
        combined.reliability.model_dump() == Reliability.model_validate(combined.reliability.model_dump()).model_dump()
    )
    assert (
        isinstance(combined.reliability.cost_usd, float) and '"cost_usd":0.0' in combined.reliability.model_dump_json()
    )


def test_a_copied_result_leaves_the_original_as_it_was():
    from agentci_action.engine.results import Check

    first = Check("a", Status.PASS, data={"k": 1})
    copied = first.model_copy(update={"message": "changed"})
    assert (first.message, copied.message, copied.name, copied.status) == ("", "changed", "a", Status.PASS)
    assert copied is not first and copied.data is first.data  # shallow, as pydantic's model_copy
    assert first.model_dump() == {"name": "a", "status": Status.PASS, "message": "", "data": {"k": 1}}

"""The three layers and the runner: statuses, messages that say what diverged, gating, fail-on, matching."""

import dataclasses

import pytest
from pydantic import ValidationError

from agentci_action._util.errors import TraceError
from agentci_action.engine.correctness import (
    JudgeRequest,
    deterministic_checks,
    evaluate_correctness,
    grounding_context,
)
from agentci_action.engine.cost import evaluate_cost
from agentci_action.engine.evaluate_spec import Settings, evaluate_spec
from agentci_action.engine.path import evaluate_path
from agentci_action.engine.results import Check, LayerResult, QueryResult, RunResult, Status
from agentci_action.pipeline.blocking import parse_fail_on
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import CorrectnessSpec, CostSpec, PathSpec, QuerySpec
from agentci_action.trace.canonical import Trace


def trace(**fields) -> Trace:
    fields.setdefault("id", "q")
    return Trace.model_validate(fields).with_derived_totals()


def calls(*names):
    return [{"name": n} for n in names]


def query(**fields) -> QuerySpec:
    return QuerySpec.model_validate({"id": "q", "query": "q", **fields})


class ScriptedJudge:
    """A judge that answers from a script and records what it was asked, in order."""

    def __init__(self, *statuses: Status):
        self.statuses = list(statuses)
        self.asked: list[JudgeRequest] = []

    def evaluate(self, request: JudgeRequest) -> Check:
        self.asked.append(request)
        return Check(name=request.kind, status=self.statuses.pop(0), message=f"judged {request.rubric.rule}")


# ---- correctness -----------------------------------------------------------------------------------------


def test_every_failing_term_is_reported():
    q = query(
        correctness={"expected_in_answer": ["pip install", "Agentci", "docs"], "not_in_answer": ["sorry", "ERROR", "x"]}
    )
    layer = evaluate_correctness(q, trace(final_answer="Sorry: pip install AGENTCI failed with error"))
    assert layer.status is Status.FAIL
    assert layer.messages == [
        "expected in answer but missing: 'docs'",
        "forbidden in answer but found: 'sorry', 'ERROR'",
    ]


def test_exact_regex_and_json_schema():
    q = query(correctness={"exact_match": " 42 ", "regex_match": r"^\d+$"})
    assert evaluate_correctness(q, trace(final_answer="42\n")).status is Status.PASS
    layer = evaluate_correctness(q, trace(final_answer="forty-two"))
    assert [c.name for c in layer.checks if c.status is Status.FAIL] == ["exact_match", "regex_match"]
    assert layer.messages[1] == r"answer does not match regex /^\d+$/"  # the pattern as written, not its repr
    schema = {"type": "object", "required": ["severity"], "properties": {"severity": {"enum": ["low", "high"]}}}
    q = query(correctness={"json_schema": schema})
    assert evaluate_correctness(q, trace(final_answer='{"severity": "low"}')).status is Status.PASS
    bad = evaluate_correctness(q, trace(final_answer='{"severity": "mid"}'))
    assert bad.status is Status.FAIL and "severity: 'mid' is not one of ['low', 'high']" in bad.messages[0]
    not_json = evaluate_correctness(q, trace(final_answer="{oops"))
    assert "answer is not JSON" in not_json.messages[0]


def test_json_schema_refs_resolve_locally_and_an_unresolvable_one_is_an_error_not_a_traceback():
    defs = {"$defs": {"level": {"enum": ["low", "high"]}}, "properties": {"severity": {"$ref": "#/$defs/level"}}}
    bad = evaluate_correctness(query(correctness={"json_schema": defs}), trace(final_answer='{"severity": "mid"}'))
    assert bad.status is Status.FAIL and "'mid' is not one of" in bad.messages[0]
    for ref in (
        "#/definitions/nope",
        "https://example.com/remote.json",
    ):  # validation refuses both; model_construct skips it
        spec = CorrectnessSpec.model_construct(json_schema={"$ref": ref})
        [check] = deterministic_checks(spec, "{}")
        assert check.status is Status.ERROR and ref in check.message and "does not resolve" in check.message


JUDGED = {
    "expected_in_answer": ["ok"],
    "llm_judge": [{"rule": "first"}, {"rule": "second"}],
    "safety_check": {"rule": "safe"},
    "hallucination_check": {"rule": "grounded"},
}


def test_without_a_judge_judge_checks_are_skipped_never_passed():
    layer = evaluate_correctness(query(correctness=JUDGED), trace(final_answer="ok"))
    statuses = {c.name: c.status for c in layer.checks}
    assert statuses == {
        "expected_in_answer": Status.PASS,
        "llm_judge": Status.SKIP,
        "safety_check": Status.SKIP,
        "hallucination_check": Status.SKIP,
    }
    assert "no LLM judge is configured" in layer.messages[0]
    only_judge = evaluate_correctness(query(correctness={"llm_judge": [{"rule": "r"}]}), trace(final_answer="x"))
    assert only_judge.status is Status.SKIP


def test_judge_runs_only_after_deterministic_checks_pass_and_in_gating_order():
    judge = ScriptedJudge(Status.PASS, Status.PASS, Status.PASS, Status.PASS)
    layer = evaluate_correctness(
        query(correctness=JUDGED), trace(final_answer="ok", retrieved_context=[{"text": "doc"}]), judge
    )
    assert layer.status is Status.PASS
    assert [r.kind for r in judge.asked] == ["llm_judge", "llm_judge", "safety_check", "hallucination_check"]
    assert judge.asked[-1].context == ["doc"] and judge.asked[0].context == []

    judge = ScriptedJudge()
    layer = evaluate_correctness(query(correctness=JUDGED), trace(final_answer="nope"), judge)
    assert judge.asked == [] and layer.status is Status.FAIL

    judge = ScriptedJudge(Status.PASS, Status.FAIL)
    layer = evaluate_correctness(query(correctness=JUDGED), trace(final_answer="ok"), judge)
    assert len(judge.asked) == 2 and layer.status is Status.FAIL
    assert [c.status for c in layer.checks[-2:]] == [Status.SKIP, Status.SKIP]

    judge = ScriptedJudge(Status.ERROR)
    assert evaluate_correctness(query(correctness=JUDGED), trace(final_answer="ok"), judge).status is Status.ERROR


def test_a_judge_of_ones_own_may_answer_with_plain_status_strings():
    """A Check's constructor does not validate.

    A judge written outside the engine that gives "pass" gets its verdicts read as Status members (the gate opens, the
    layer passes); a status that is none is a clear error.
    """
    judge = ScriptedJudge("pass", "pass", "pass", "fail")
    layer = evaluate_correctness(query(correctness=JUDGED), trace(final_answer="ok"), judge)
    assert len(judge.asked) == 4 and layer.status is Status.FAIL
    assert [c.status for c in layer.checks] == [Status.PASS, Status.PASS, Status.PASS, Status.PASS, Status.FAIL]
    assert all(type(c.status) is Status for c in layer.checks)
    with pytest.raises(ValueError, match="ScriptedJudge gave the status 'great': not one of pass, fail, warn"):
        evaluate_correctness(query(correctness=JUDGED), trace(final_answer="ok"), ScriptedJudge("great"))


def test_grounding_context_holds_documents_and_tool_results():
    t = trace(
        retrieved_context=[{"text": "doc one"}],
        tool_calls=[{"name": "s", "result": {"rows": 2}}, {"name": "t", "result": "plain"}],
    )
    assert grounding_context(t) == ["doc one", '{"rows": 2}', "plain"]


# ---- path ------------------------------------------------------------------------------------------------


def test_forbidden_tool_fails_hard_and_names_it_once():
    layer = evaluate_path(
        PathSpec(forbidden_tools=["edit_file", "bash"]), trace(tool_calls=calls("EditFile", "edit-file", "read"))
    )
    assert layer.status is Status.FAIL and layer.messages == ["forbidden tools used: edit_file at steps 0, 1"]
    assert layer.details["forbidden_violations"] == ["edit_file"]


def test_path_warnings_name_missing_and_unexpected_tools():
    spec = PathSpec(expected_tools=["search", "rerank"], min_tool_recall=1.0, min_tool_precision=0.9, max_tool_calls=2)
    layer = evaluate_path(spec, trace(tool_calls=calls("search", "generate", "generate")))
    assert layer.status is Status.WARN
    assert layer.details["tool_recall"] == 0.5 and layer.details["tool_precision"] == 0.5
    assert layer.messages == [
        "tool calls: 3 > max 2 (generate ×2, search ×1)",
        "tool recall: 0.50 < min 1 (missing: rerank)",
        "tool precision: 0.50 < min 0.9 (unexpected: generate)",
        "match mode 'subset' against the expected_tools failed: missing: rerank",
    ]


def test_sequence_and_match_mode_use_the_baseline_when_given():
    spec = PathSpec(match_mode="strict", min_sequence_similarity=0.9, expected_tools=["search"])
    baseline = trace(tool_calls=calls("search", "rerank", "generate"))
    layer = evaluate_path(spec, trace(tool_calls=calls("search", "generate")), [baseline])
    assert layer.details["reference"] == "baseline"
    assert layer.details["sequence_similarity"] == pytest.approx(0.8)
    assert layer.details["match_mode"]["first_divergence"] == {"index": 1, "expected": "rerank", "actual": "generate"}
    assert (
        "sequence similarity (lcs) against the baseline: 0.80 < min 0.9 (first difference at step 1: expected rerank, got generate)"
        in layer.messages
    )
    assert any(
        "first difference at step 1: expected rerank, got generate; missing: rerank" in m for m in layer.messages
    )


def test_sequence_similarity_without_any_reference_is_skipped_with_reason():
    layer = evaluate_path(PathSpec(min_sequence_similarity=0.5), trace(tool_calls=calls("a")))
    assert layer.status is Status.SKIP and layer.messages == []  # said once per run (RunResult.without_baseline)
    assert layer.checks[0].data == {"reason": "no baseline trace"}


def test_loops_report_tool_and_positions():
    layer = evaluate_path(PathSpec(max_loops=1), trace(tool_calls=calls("search", "search", "grade", "grade", "grade")))
    assert layer.messages == ["loops: 3 > max 1 (search ×2 at steps 0-1; grade ×3 at steps 2-4)"]


def test_handoffs():
    t = trace(handoffs=[{"from": "Triage", "to": "Billing"}, {"from": "Billing", "to": "Refunds"}])
    ok = evaluate_path(
        PathSpec(expected_handoff="Billing", expected_handoffs_available=["Billing", "Refunds"], max_handoff_count=2), t
    )
    assert ok.status is Status.PASS and ok.details["handoffs"] == ["Billing", "Refunds"]
    bad = evaluate_path(
        PathSpec(expected_handoff="Technical", expected_handoffs_available=["Billing"], max_handoff_count=1), t
    )
    assert bad.messages == [
        "expected a handoff to Technical, got Billing, Refunds",
        "handoff to an agent not in expected_handoffs_available: Refunds",
        "handoffs: 2 > max 1 (to Billing, Refunds)",
    ]


# ---- cost ------------------------------------------------------------------------------------------------


def test_cost_limits_warn_and_multiplier_needs_a_baseline_cost():
    llm = {"input_tokens": 400, "output_tokens": 200, "cost_usd": 0.03, "duration_ms": 1500}
    current = trace(llm_calls=[llm, llm])
    spec = CostSpec(
        max_total_tokens=1000, max_llm_calls=1, max_latency_ms=5000, max_cost_usd=0.05, max_cost_multiplier=2.0
    )
    layer = evaluate_cost(spec, current, trace(llm_calls=[{"cost_usd": 0.02}]))
    assert layer.status is Status.WARN
    assert layer.details["cost_multiplier"] == pytest.approx(3.0)
    assert [c.name for c in layer.checks if c.status is Status.WARN] == [
        "max_total_tokens",
        "max_llm_calls",
        "max_cost_usd",
        "max_cost_multiplier",
    ]
    assert "cost 3.00× the baseline (max 2×): $0.0600 vs $0.0200" in layer.messages
    no_baseline = evaluate_cost(CostSpec(max_cost_multiplier=2.0), current)
    assert no_baseline.status is Status.SKIP and no_baseline.messages == []  # said once per run, not per query
    assert no_baseline.checks[0].data == {"reason": "no baseline trace"}
    zero = evaluate_cost(CostSpec(max_cost_multiplier=2.0), current, trace(total_cost_usd=0))
    assert zero.messages == ["cost multiplier skipped: the baseline cost is 0"]
    unknown = evaluate_cost(CostSpec(max_cost_usd=1.0), trace(llm_calls=[{"input_tokens": 3}]))
    assert unknown.status is Status.SKIP and "does not record cost" in unknown.messages[0]


# ---- runner ----------------------------------------------------------------------------------------------

SPEC = """
agent: demo
queries:
  - id: answer
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
    path: {forbidden_tools: [shell], max_tool_calls: 1}
    cost: {max_llm_calls: 1}
  - query: "Second question"
    tags: [smoke]
"""


def test_fail_on_decides_what_blocks(write):
    spec = load_spec(write("s.yaml", SPEC))
    traces = [
        trace(id="answer", final_answer="4", tool_calls=calls("a", "b"), llm_calls=[{}, {}]),
        trace(id=None, query="Second question"),
    ]
    default = evaluate_spec(spec, traces)
    assert [r.status for r in default.results] == [Status.WARN, Status.PASS] and not any(
        r.blocking for r in default.results
    )
    assert evaluate_spec(spec, traces, settings=Settings(fail_on=parse_fail_on("path"))).results[0].blocking
    assert (
        evaluate_spec(spec, traces, settings=Settings(fail_on=parse_fail_on("cost"))).results[0].status is Status.FAIL
    )
    forbidden = [trace(id="answer", final_answer="4", tool_calls=calls("Shell")), traces[1]]
    assert evaluate_spec(spec, forbidden).results[0].blocking
    assert not evaluate_spec(spec, forbidden, settings=Settings(fail_on=parse_fail_on("none"))).results[0].blocking
    with pytest.raises(ValueError, match="unknown fail-on"):
        parse_fail_on("correctness,speed")


def test_matching_by_id_then_text_and_missing_or_unknown_traces(write):
    spec = load_spec(write("s.yaml", SPEC))
    run = evaluate_spec(
        spec, [trace(id="answer", final_answer="4"), trace(id=None, query="Second question"), trace(id="stray")]
    )
    assert [r.id for r in run.results] == ["answer", "second-question"]
    assert len(run.warnings) == 1 and run.warnings[0].endswith("trace with id 'stray' matches no query in the spec")
    with pytest.raises(TraceError) as caught:
        evaluate_spec(spec, [trace(id="answer")])
    (problem,) = caught.value.problems
    assert problem.line == 8 and "no trace for query 'second-question'" in problem.message
    smoke_only = evaluate_spec(
        spec, [trace(id=None, query="Second question")], queries=[q for q in spec.queries if "smoke" in q.tags]
    )
    assert smoke_only.summary.total == 1


def test_summary_counts(write):
    spec = load_spec(write("s.yaml", SPEC))
    run = evaluate_spec(
        spec,
        [
            trace(id="answer", final_answer="5", llm_calls=[{"cost_usd": 0.25, "input_tokens": 10}]),
            trace(id="second-question"),
        ],
    )
    s = run.summary
    assert (s.status, s.total, s.passed, s.failed, s.warnings, s.errors) == (Status.FAIL, 2, 1, 1, 0, 0)
    assert s.cost_usd == 0.25 and s.total_tokens == 10 and s.fail_on == ["correctness", "suite"]


def test_results_made_without_validation_read_back_equal_through_pydantic(write):
    """A query's results are dataclasses the engine makes unvalidated.

    Pydantic must write them as the results JSON and read that JSON back into equal objects (statuses as Status
    members), refusing what is not a result.
    """
    data = {"actual": 3, "max": 2.5}
    built = Check(name="max_loops", status=Status.WARN, message="loops: 3 > max 2.5", data=data)
    validated = Check.model_validate_json(built.model_dump_json())
    assert (
        built == validated
        and validated.status is Status.WARN
        and built.model_dump_json()
        == ('{"name":"max_loops","status":"warn","message":"loops: 3 > max 2.5","data":{"actual":3,"max":2.5}}')
    )
    assert Check(name="x", status=Status.PASS) == Check(name="x", status=Status.PASS)
    with pytest.raises(ValidationError, match="status"):
        Check.model_validate({"name": "x", "status": "fine"})
    layer = LayerResult.from_checks([built, Check(name="y", status=Status.SKIP, message="skipped")], {"tool_calls": 4})
    assert layer.status is Status.WARN and layer.messages == ["loops: 3 > max 2.5", "skipped"]
    assert layer.model_dump_json() == LayerResult.model_validate(layer.model_dump()).model_dump_json()
    layer.messages = ["reassigned"]  # assignment records the field as set, as on a validated model
    assert layer.model_copy(update={"status": Status.PASS}).messages == ["reassigned"]

    spec = load_spec(
        write(
            "built.yaml",
            """
agent: a
queries:
  - id: q1
    query: Q?
    tags: [smoke]
    correctness: {expected_in_answer: [paris]}
    path: {expected_tools: [search], max_loops: 0}
    cost: {max_total_tokens: 10}
""",
        )
    )
    trace = Trace.model_validate(
        {
            "id": "q1",
            "final_answer": "Paris",
            "tool_calls": [{"name": "search"}, {"name": "search"}],
            "llm_calls": [{"input_tokens": 20, "output_tokens": 5}],
        }
    )
    run = evaluate_spec(spec, [trace])
    assert run.model_dump_json() == RunResult.model_validate_json(run.model_dump_json()).model_dump_json()
    result = run.results[0]
    assert list(result.model_dump()) == [f.name for f in dataclasses.fields(QueryResult)]  # in declaration order
    assert result == QueryResult.model_validate(result.model_dump())
    assert result.tags == ["smoke"] and result.tags is not spec.queries[0].tags


def test_queries_without_a_checks_block_share_an_empty_one_nothing_fills(write):
    """A query without `checks:` is given the shared NO_CHECKS instead of a fresh empty set of checks.

    A suite mixing such queries with ones whose checks find a leak, fail and pass must leave it empty.
    """
    from agentci_action.engine.checks import NO_CHECKS

    spec = load_spec(
        write(
            "mixed.yaml",
            """
agent: a
queries:
  - id: plain
    query: P?
    correctness: {expected_in_answer: [x]}
  - id: checked
    query: C?
    checks:
      safety: {no_pii_leakage: true}
      validity: {max_length: 5}
  - id: plain-too
    query: Q?
    path: {max_tool_calls: 0}
""",
        )
    )
    traces = [
        Trace.model_validate({"id": "plain", "final_answer": "x"}),
        Trace.model_validate({"id": "checked", "final_answer": "mail me at jane.doe@example.com"}),
        Trace.model_validate({"id": "plain-too", "final_answer": "y", "tool_calls": [{"name": "t"}]}),
    ]
    run = evaluate_spec(spec, traces)
    checked = run.results[1]
    assert [c.status for c in checked.correctness.checks] == [Status.WARN, Status.FAIL]  # the leak warns
    assert "jane.doe@example.com" not in checked.model_dump_json()
    assert run.results[0].correctness.checks[0].status is Status.PASS and run.results[2].path.status is Status.WARN
    assert NO_CHECKS.by_layer == {"correctness": [], "path": [], "cost": []} and NO_CHECKS.leaks == []

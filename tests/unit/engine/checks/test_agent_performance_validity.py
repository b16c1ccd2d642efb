"""Agent (task status in metadata.status), performance from LLM calls, output validity: formulas by hand, N/A handling."""

import pytest

from agentci_action.engine.checks import agent, performance, validity
from agentci_action.engine.results import Status
from agentci_action.spec.check_models import AgentChecks, PerformanceChecks, ValidityChecks
from agentci_action.trace.canonical import LLMCall, Trace


def trace(**fields) -> Trace:
    return Trace.model_validate({"id": "q", **fields})


def by_name(checks):
    return {c.name: c for c in checks}


# ---- agent ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, completed",
    [("completed", True), ("SUCCESS", True), ("ok", True), ("failed", False), ("max_iterations", False), (None, None)],
)
def test_task_status_lives_in_metadata(status, completed):
    metadata = {} if status is None else {"status": status}
    assert agent.task_completed(trace(metadata=metadata)) is completed


def test_agent_formulas_by_hand():
    assert agent.step_efficiency(3, 4) == 0.75
    assert agent.step_efficiency(5, 2) == 1.0  # fewer steps than expected is capped
    assert agent.step_efficiency(3, 0) == 0.0
    calls = [{"name": "a"}, {"name": "b", "error": "timeout"}, {"name": "c"}, {"name": "d"}]
    assert agent.tool_success_rate(trace(tool_calls=calls)) == 0.75
    assert agent.tool_success_rate(trace()) is None
    assert agent.error_recovery(0, None) == 1.0
    assert agent.error_recovery(2, True) == 1.0
    assert agent.error_recovery(2, False) == 0.0
    assert agent.error_recovery(2, None) is None


def test_agent_checks():
    group = AgentChecks(
        task_completion=True, expected_steps=3, min_step_efficiency=0.8, min_tool_success_rate=0.9, error_recovery=True
    )
    calls = [{"name": "search"}, {"name": "search", "error": "HTTP 500"}, {"name": "search"}, {"name": "answer"}]
    checks = by_name(agent.evaluate(group, trace(tool_calls=calls, metadata={"status": "failed"})))
    assert (
        checks["task_completion"].status is Status.FAIL
        and checks["task_completion"].message == "the task did not complete (metadata.status 'failed')"
    )
    assert checks["expected_steps"].status is Status.WARN
    assert checks["expected_steps"].message == "step efficiency (4 steps taken, 3 expected) 0.75 < min 0.8"
    assert (
        checks["min_tool_success_rate"].status is Status.WARN and checks["min_tool_success_rate"].data["value"] == 0.75
    )
    assert checks["error_recovery"].status is Status.WARN and checks["error_recovery"].data == {
        "value": 0.0,
        "errors": 1,
        "severity": "warn",
    }
    recovered = by_name(agent.evaluate(group, trace(tool_calls=calls[:3], metadata={"status": "completed"})))
    assert recovered["task_completion"].status is Status.PASS and recovered["error_recovery"].status is Status.PASS


def test_agent_checks_without_status_or_calls_are_not_applicable():
    group = AgentChecks(task_completion=True, min_tool_success_rate=0.5, error_recovery=True)
    checks = by_name(agent.evaluate(group, trace(tool_calls=[{"name": "a", "error": "boom"}])))
    assert (
        checks["task_completion"].status is Status.SKIP
        and checks["task_completion"].message == "task_completion skipped: the trace has no metadata.status"
    )
    assert checks["error_recovery"].status is Status.SKIP and checks["error_recovery"].data["value"] is None
    no_calls = by_name(agent.evaluate(group, trace()))
    assert no_calls["min_tool_success_rate"].status is Status.SKIP and no_calls["error_recovery"].status is Status.PASS


def test_min_step_efficiency_needs_expected_steps():
    with pytest.raises(ValueError, match="min_step_efficiency needs expected_steps"):
        AgentChecks(min_step_efficiency=0.5)


# ---- performance ---------------------------------------------------------------------------------------

LLM_CALLS = [
    {"output_tokens": 100, "duration_ms": 2000, "ttft_ms": 300},
    {"output_tokens": 50, "duration_ms": 1000, "ttft_ms": 900},
    {"output_tokens": 500},  # no duration: left out of latency and throughput
]


def test_performance_formulas_by_hand():
    assert performance.ttft_ms([LLMCall(**c) for c in LLM_CALLS]) == 900
    assert performance.token_latency_ms(3000, 150) == 20.0
    assert performance.throughput(150, 3000) == 50.0
    assert performance.token_latency_ms(3000, 0) == 0.0
    assert performance.throughput(150, 0) == 0.0


def test_performance_checks_in_the_cost_layer():
    group = PerformanceChecks(max_ttft_ms=500, max_token_latency_ms=25, min_throughput=60)
    checks = by_name(performance.evaluate(group, trace(llm_calls=LLM_CALLS)))
    assert (
        checks["max_ttft_ms"].status is Status.WARN
        and checks["max_ttft_ms"].message == "time to first token 900 ms > max 500 ms"
    )
    assert checks["max_token_latency_ms"].status is Status.PASS and checks["max_token_latency_ms"].data["value"] == 20.0
    assert (
        checks["min_throughput"].status is Status.WARN
        and checks["min_throughput"].message == "throughput 50 tokens/s < min 60 tokens/s"
    )
    untimed = by_name(performance.evaluate(group, trace(llm_calls=[{"output_tokens": 10}])))
    assert {c.status for c in untimed.values()} == {Status.SKIP}
    assert untimed["min_throughput"].message == "min_throughput skipped: no LLM call in the trace reports duration_ms"


# ---- validity ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, tags",
    [
        ("<b>bold</b> text", 2),
        ("line<br/>break", 1),
        ("<!-- hidden -->", 1),
        ("if a < b and c > d", 0),
        ("x<3 is true", 0),
    ],
)
def test_html_tags(answer, tags):
    assert len(validity.html_tags(answer)) == tags


@pytest.mark.parametrize(
    "answer, ends",
    [
        ("Done.", True),
        ("Really?  \n", True),
        ('He said "yes."', True),
        ("(see above.)", True),
        ("Steps:", True),
        ("no ending", False),
        ("", False),
        ("Thanks!!! :)", True),
    ],
)
def test_sentence_endings(answer, ends):
    assert validity.ends_with_punctuation(answer) is ends


def test_validity_checks():
    group = ValidityChecks(
        min_length=10, max_length=20, no_html=True, ends_with_punctuation=True, severity={"no_html": "warn"}
    )
    checks = by_name(validity.evaluate(group, "  <p>short</p>  "))
    assert checks["min_length"].status is Status.PASS  # "<p>short</p>" is 12 characters once trimmed
    assert checks["max_length"].status is Status.PASS  # 16 with the spaces
    assert checks["no_html"].status is Status.WARN and checks["no_html"].message == "the answer holds 2 HTML tag(s)"
    assert checks["ends_with_punctuation"].status is Status.FAIL
    long = by_name(validity.evaluate(ValidityChecks(min_length=5, max_length=20), "x" * 1234))
    assert long["max_length"].message == "answer length 1,234 characters > max 20 characters"
    assert by_name(validity.evaluate(ValidityChecks(min_length=5), " ab "))["min_length"].status is Status.FAIL

"""judge_config.max_cost_usd.

Once the judge's spend in a run reaches the cap no further judge call starts, with concurrent workers too; what was
judged is kept, the rest is reported as not verified with the cap as the reason, said once. The real openai and
anthropic SDKs against the local fake server (tests/fakes/llm_server.py).
"""

from __future__ import annotations

import json
import math

import pytest
from fakes.llm_server import FakeLLMServer
from helpers import hermetic_environment, run_cli

from agentci_action.engine.evaluate_spec import Settings, evaluate_spec
from agentci_action.engine.results import Status
from agentci_action.model_access.retries import RetryPolicy
from agentci_action.pipeline.judge_wiring import JudgeOptions, configured_judge
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace

KEY = "sk-test-spend-cap-never-print"
QUERIES = 20


def spec_text(model: str, url: str, cap: float | None) -> str:
    cap_line = f"  max_cost_usd: {cap!r}\n" if cap is not None else ""
    queries = "".join(
        f"  - id: q{i:02d}\n    query: Question {i:02d}\n    correctness: {{llm_judge: [{{rule: answers it}}]}}\n"
        for i in range(QUERIES)
    )
    return (
        f"agent: capped\njudge_config:\n  model: {model}\n  base_url: {url}\n  max_attempts: 1\n{cap_line}"
        # every reply is priced alike: output tokens only (the verdict, the same for every check)
        f"pricing:\n  {model}: {{input: 0, output: 1000}}\nqueries:\n{queries}"
    )


def evaluate(tmp_path, server: FakeLLMServer, model: str, cap: float | None, workers: int = 4):
    path = tmp_path / f"spec-{cap}.yaml"
    url = server.anthropic_url if model.startswith("claude") else server.openai_url
    path.write_text(spec_text(model, url, cap))
    spec = load_spec(path)
    key = "ANTHROPIC_API_KEY" if model.startswith("claude") else "OPENAI_API_KEY"
    judge = configured_judge(spec, JudgeOptions(cache=str(tmp_path / f"cache-{cap}.json"), environ={key: KEY}))
    judge.retry = RetryPolicy(initial_wait=0.01, max_wait=0.05)
    traces = [Trace(id=f"q{i:02d}", final_answer="It is answered.") for i in range(QUERIES)]
    run = evaluate_spec(spec, traces, judge=judge, settings=Settings(workers=workers))
    return run, judge


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "gpt-4o-mini"])
@pytest.mark.parametrize("calls_in_cap", [1, 4.5, 7])
def test_judge_calls_stop_at_the_cap_with_concurrent_workers(tmp_path, model, calls_in_cap):
    with FakeLLMServer(delay=0.05) as calibration:  # what one call costs, from the reply's own usage
        run, _ = evaluate(tmp_path, calibration, model, None)
    per_call = run.summary.judge.cost_usd / QUERIES
    assert per_call > 0 and calibration.count == QUERIES

    cap = per_call * calls_in_cap
    expected_calls = math.ceil(calls_in_cap - 1e-9)  # calls start while the spend is below the cap
    with FakeLLMServer(delay=0.05) as server:
        run, judge = evaluate(tmp_path, server, model, cap, workers=4)
    assert server.count == expected_calls
    checks = [q.correctness.checks[0] for q in run.results]
    judged = [c for c in checks if c.status is Status.PASS]
    unjudged = [c for c in checks if c.status is Status.SKIP]
    assert len(judged) == expected_calls and len(unjudged) == QUERIES - expected_calls
    reason = f"not judged: judge spend cap ${cap:g} reached"
    assert {c.message for c in unjudged} == {reason}
    assert run.unverified() == {reason: QUERIES - expected_calls}
    assert run.summary.judge.requests == expected_calls
    assert run.summary.judge.cost_usd == pytest.approx(per_call * expected_calls)
    assert run.summary.status is Status.PASS  # unverified, never failed
    assert judge.warnings() == []  # said by the unverified checks' one reason, not again


def test_cached_verdicts_cost_nothing_and_a_rerun_judges_the_rest(tmp_path):
    """The verdicts the capped run paid for are kept in the cache.

    A second capped run takes them for free and spends its cap on the checks left.
    """
    model = "claude-haiku-4-5"
    with FakeLLMServer() as calibration:
        run, _ = evaluate(tmp_path, calibration, model, None)
    per_call = run.summary.judge.cost_usd / QUERIES
    cap = per_call * 5
    with FakeLLMServer() as server:
        _, judge = evaluate(tmp_path, server, model, cap)
        judge.cache.save()
        second, _ = evaluate(tmp_path, server, model, cap)
    assert server.count == 10
    assert second.summary.judge.cache_hits == 5 and second.summary.judge.requests == 5
    assert sum(q.correctness.checks[0].status is Status.PASS for q in second.results) == 10


def test_the_cli_says_the_cap_once_and_keeps_what_was_judged(tmp_path):
    with FakeLLMServer() as server:
        spec = tmp_path / "agentci_spec.yaml"
        traces = tmp_path / "traces.jsonl"
        traces.write_text(
            "".join(json.dumps({"id": f"q{i:02d}", "final_answer": "It is answered."}) + "\n" for i in range(QUERIES))
        )
        spec.write_text(spec_text("claude-haiku-4-5", server.anthropic_url, 0.000001))  # below one call: one call
        env = hermetic_environment(ANTHROPIC_API_KEY=KEY)
        done = run_cli("test", spec, "--traces", traces, "--format", "markdown", env=env)
        assert server.count == 1
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout + done.stderr
    headline = done.stdout[: done.stdout.index("| |")]
    assert "19 checks not verified" in headline
    assert headline.count("judge spend cap $1e-06 reached") == 1
    assert "19 correctness checks skipped, not passed: not judged: judge spend cap $1e-06 reached \\(×19\\)" in headline
    as_json = json.loads(
        run_cli(
            "test", spec, "--traces", traces, "--format", "json", "--judge-mode", "auto", env=hermetic_environment()
        ).stdout
    )
    # no key now: the verdict paid for is cached, the rest skip for want of a key
    assert sum(r["correctness"]["status"] == "pass" for r in as_json["results"]) == 1


@pytest.mark.parametrize(
    "spec_cap, option, calls",
    [(None, "0.000001", 1), (1000.0, "0.000001", 1), (0.000001, "1000", 1), (None, "0", 0)],
    ids=["option alone", "option lower than the spec", "spec lower than the option", "zero: no call"],
)
def test_a_cap_given_on_the_command_line_holds_beside_the_specs_the_lower_one(tmp_path, spec_cap, option, calls):
    with FakeLLMServer() as server:
        spec = tmp_path / "agentci_spec.yaml"
        traces = tmp_path / "traces.jsonl"
        traces.write_text(
            "".join(json.dumps({"id": f"q{i:02d}", "final_answer": "It is answered."}) + "\n" for i in range(QUERIES))
        )
        spec.write_text(spec_text("claude-haiku-4-5", server.anthropic_url, spec_cap))
        env = hermetic_environment(ANTHROPIC_API_KEY=KEY)
        done = run_cli("test", spec, "--traces", traces, "--judge-max-cost-usd", option, "--format", "json", env=env)
        assert server.count == calls
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    skipped = {r["correctness"]["checks"][0]["message"] for r in results if r["correctness"]["status"] == "skip"}
    lower = min(float(option), math.inf if spec_cap is None else spec_cap)
    assert skipped == {f"not judged: judge spend cap ${lower:g} reached"} and len(results) == QUERIES


def test_a_cap_option_that_is_no_amount_is_a_usage_error(tmp_path):
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text(spec_text("claude-haiku-4-5", "http://127.0.0.1:9", None))
    for bad in ("-1", "lots", "inf"):
        done = run_cli("test", spec, "--traces", spec, "--judge-max-cost-usd", bad)
        assert done.returncode == 2 and "--judge-max-cost-usd: expected an amount of US dollars" in done.stderr


def test_the_python_api_takes_a_cap_too(tmp_path):
    import agentci_action

    with FakeLLMServer() as server:
        path = tmp_path / "agentci_spec.yaml"
        path.write_text(spec_text("claude-haiku-4-5", server.anthropic_url, None))
        spec = load_spec(path)
        judge = agentci_action.judge_for(spec, max_cost_usd=0.000001, environ={"ANTHROPIC_API_KEY": KEY})
        traces = [Trace(id=f"q{i:02d}", final_answer="It is answered.") for i in range(QUERIES)]
        run = evaluate_spec(spec, traces, judge=judge)
        assert server.count == 1
    assert run.unverified() == {"not judged: judge spend cap $1e-06 reached": QUERIES - 1}

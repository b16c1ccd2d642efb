"""The action with the LLM judge, in-process.

Key inputs masked and never printed, the judge's spend in the job summary, a failing provider → exit 2 with every result
still published.
"""

from __future__ import annotations

import json

import pytest
from helpers import github_outputs

from integration.test_action import environment, run_action

KEY = "sk-ant-action-secret-77"

SPEC = """\
version: 1
agent: support-bot
judge_config:
  model: claude-haiku-4-5
  base_url: {url}
  max_attempts: 2
queries:
  - id: refund-policy
    query: "What is the refund policy?"
    correctness:
      expected_in_answer: ["30 days"]
      llm_judge:
        - rule: States the refund window.
  - id: order-status
    query: "Where is my order 1234?"
    correctness:
      expected_in_answer: ["shipped"]
"""


@pytest.fixture
def workspace(tmp_path, monkeypatch, llm):
    (tmp_path / "agentci.yaml").write_text(SPEC.format(url=llm.anthropic_url))
    (tmp_path / "traces").mkdir()
    rows = [
        {"id": "refund-policy", "final_answer": "Refunds within 30 days."},
        {"id": "order-status", "final_answer": "It has shipped."},
    ]
    (tmp_path / "traces" / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def action_env(workspace, **inputs):
    env = environment(workspace, "http://127.0.0.1:9", event="push", **inputs)
    env.pop("INPUT_BASELINE-TRACES")
    return env


def everything_written(workspace) -> str:
    files = ["summary.md", "output.txt", "out/agentci-results.json"]
    return "".join((workspace / name).read_text() for name in files if (workspace / name).exists())


def test_key_input_reaches_the_judge_is_masked_and_never_printed(workspace, llm):
    code, log = run_action(action_env(workspace, anthropic_api_key=KEY))
    assert code == 0 and llm.count == 1 and llm.received[0].headers["authorization"] == f"Bearer {KEY}"
    assert f"::add-mask::{KEY}" in log and log.count(KEY) == 1 and KEY not in everything_written(workspace)
    assert "LLM judge, not in the agent's cost: 1 request · 0 cached verdicts" in (workspace / "summary.md").read_text()
    assert (workspace / ".agentci" / "judge-cache.json").exists()


def test_a_failing_provider_exits_2_and_publishes_every_result(workspace, llm):
    llm.fail_next("500", times=10)
    code, _log = run_action(action_env(workspace, anthropic_api_key=KEY))
    assert code == 2 and llm.count == 2
    results = json.loads((workspace / "out" / "agentci-results.json").read_text())
    assert [r["status"] for r in results["results"]] == ["error", "pass"]
    assert github_outputs((workspace / "output.txt").read_text())["status"] == "error"
    assert "INFRA" in (workspace / "summary.md").read_text() and KEY not in everything_written(workspace)


def test_without_a_key_the_judge_check_is_skipped_and_required_mode_exits_2(workspace, llm):
    code, _ = run_action(action_env(workspace))
    results = json.loads((workspace / "out" / "agentci-results.json").read_text())
    assert code == 0 and results["results"][0]["correctness"]["checks"][1]["status"] == "skip"
    code, _ = run_action(action_env(workspace, judge_mode="required"))
    assert code == 2 and llm.count == 0


def test_bad_judge_inputs_are_input_errors(workspace):
    code, log = run_action(action_env(workspace, sample_ensemble="2", judge_mode="sometimes"))
    assert code == 2 and "sample-ensemble" in log and "judge-mode" in log


def test_the_judge_max_cost_usd_input_caps_the_judges_spend(workspace, llm):
    code, _ = run_action(action_env(workspace, anthropic_api_key=KEY, judge_max_cost_usd="0"))
    results = json.loads((workspace / "out" / "agentci-results.json").read_text())
    check = results["results"][0]["correctness"]["checks"][1]
    assert code == 0 and llm.count == 0
    assert (check["status"], check["message"]) == ("skip", "not judged: judge spend cap $0 reached")
    code, log = run_action(action_env(workspace, judge_max_cost_usd="-0.5"))
    assert code == 2 and "judge-max-cost-usd" in log

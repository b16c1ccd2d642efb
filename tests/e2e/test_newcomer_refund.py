"""The newcomer's scenario of issue 31, end to end.

A real openai-SDK agent with `lookup_order` and `refund`, captured with `capture: otel` against a local model that
follows its prompt; a baseline saved; then a one-line prompt change that makes it refund before looking the order up.
The spec made that order blocking for the refund query, so the job fails with an `::error` on that query's line and the
comment shows the route change.

The first test runs the CLI as a developer would; the second runs the Docker action under `act` on a pull request
(needs Docker, the base image and act, like tests/e2e/test_action_in_act.py; skips without them, a failure under
AGENTCI_REQUIRE_E2E=1).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fakes.github_server import FakeGitHub
from fakes.llm_server import FakeLLMServer
from helpers import ROOT, action_workspace

AGENT = ROOT / "tests" / "agents" / "refund_agent.py"
CAREFUL = "You are a support agent. Look the order up with lookup_order before you refund it."
HASTY = "You are a support agent. Refund damaged orders at once with refund, then look the order up to confirm."
SPEC = """\
# yaml-language-server: $schema=agentci_spec.schema.json
agent: refund-agent
runner:
  command: {python} agent.py
  capture: otel
  retries: 0
  env: {{OPENAI_BASE_URL: "{url}", OPENAI_API_KEY: sk-local}}
queries:
  - id: order-status
    query: "Where is order 1042?"
    correctness: {{expected_in_answer: ["1042"]}}
    path: {{expected_tools: [lookup_order]}}
  - id: refund-damaged
    query: "Order 1042 arrived broken. Please refund it."
    correctness: {{expected_in_answer: ["refund"]}}
    path:
      match_mode: strict
      expected_tool_calls:
        - {{name: lookup_order, arguments: {{order_id: "1042"}}}}
        - {{name: refund, arguments: {{order_id: "1042"}}}}
      severity: {{expected_tool_calls: fail}}
"""
REFUND_LINE = 13  # the refund-damaged query's line in SPEC


def follows_its_prompt(messages: list[dict], tools: list[dict]) -> dict:
    """A model that does what the system prompt says: look the order up first, or refund first; then answers."""
    system = messages[0]["content"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    done = [m for m in messages if m["role"] == "assistant"]
    if "Where is" in question:
        plan = ["lookup_order"]
    else:
        plan = ["lookup_order", "refund"] if "before you refund" in system else ["refund", "lookup_order"]
    if len(done) < len(plan):
        name = plan[len(done)]
        call = {
            "id": f"call_{len(done)}",
            "type": "function",
            "function": {"name": name, "arguments": '{"order_id": "1042"}'},
        }
        return {"tool_calls": [call]}
    if "Where is" in question:
        return {"content": "Order 1042 (a desk lamp) was delivered."}
    return {"content": "Sorry about the lamp! I issued a refund of $35.00 for order 1042."}


def environment() -> dict[str, str]:
    """The developer's shell: no judge keys, no OpenTelemetry settings of its own (AgentCI's capture sets them)."""
    drop = ("OTEL_", "AGENTCI_", "ANTHROPIC_", "OPENAI_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def agentci(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentci_action", *args],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def newcomer_repository(folder: Path, model: FakeLLMServer) -> Path:
    """The agent, its prompt, its spec.

    A baseline saved from the careful prompt, then the prompt changed and the agent run again (its traces in traces/):
    what the pull request carries.
    """
    shutil.copy(AGENT, folder / "agent.py")
    shutil.copy(ROOT / "agentci_action" / "spec" / "agentci_spec.schema.json", folder / "agentci_spec.schema.json")
    (folder / "agentci_spec.yaml").write_text(SPEC.format(python=sys.executable, url=model.openai_url))
    (folder / "prompt.txt").write_text(CAREFUL + "\n")
    saved = agentci("save", "--spec", "agentci_spec.yaml", "--version", "v1", cwd=folder)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    (folder / "prompt.txt").write_text(HASTY + "\n")  # the pull request: one line of the prompt
    ran = agentci("run", "--spec", "agentci_spec.yaml", "--output", "traces", cwd=folder)
    assert ran.returncode == 0, ran.stderr
    return folder


@pytest.fixture
def model():
    with FakeLLMServer(agent_model=follows_its_prompt) as server:
        yield server


def test_the_prompt_change_fails_the_run_on_the_refund_query_with_the_route_change_shown(tmp_path, model):
    repo = newcomer_repository(tmp_path, model)
    [captured] = [json.loads(line) for line in (repo / "traces" / "refund-damaged.jsonl").read_text().splitlines()]
    assert [c["name"] for c in captured["tool_calls"]] == ["refund", "lookup_order"]  # from the spans alone
    github = agentci("test", "--spec", "agentci_spec.yaml", "--traces", "traces", "--format", "github", cwd=repo)
    assert github.returncode == 1, github.stdout + github.stderr
    errors = [line for line in github.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1, errors
    assert errors[0].startswith(
        f"::error file=agentci_spec.yaml,line={REFUND_LINE},title=AgentCI path%3A refund-damaged::"
    )
    assert "[expected_tool_calls: severity fail] expected_tool_calls not matched (strict)" in errors[0]
    assert "out of order: lookup_order (expected_tool_calls[0]) called at step 1" in errors[0]
    markdown = agentci("test", "--spec", "agentci_spec.yaml", "--traces", "traces", "--format", "markdown", cwd=repo)
    assert markdown.returncode == 1
    assert_route_change_shown(markdown.stdout)


def assert_route_change_shown(comment: str) -> None:
    """The reason once, in the table of failing queries; the route before ⇒ after in the diff's row and its fold."""
    assert "## ❌ AgentCI: 1 of 2 queries failed" in comment
    assert comment.count("expected\\_tool\\_calls not matched \\(strict\\)") == 1
    # The captured latency is real wall time: on a loaded machine it can move past the tolerance ("cost changed").
    assert re.search(
        r"\| 🔴 \| refund-damaged \| regression, tools changed(, cost changed)? \| ✅ pass → ❌ fail \|", comment
    )
    reasons = comment[: comment.index("### AgentCI diff")]
    assert reasons.index("❌ **path**: \\[expected\\_tool\\_calls: severity fail\\]") < reasons.index(
        "⚠️ **path**: match mode"
    )
    assert "lookup\\_order → refund ⇒ refund → lookup\\_order" in comment
    assert "```text\nbefore  lookup_order → refund\nafter   refund → lookup_order\n        ^\n```" in comment


def test_the_action_fails_the_pull_request_with_an_error_on_the_query_line_and_the_route_in_the_comment(
    container_engine, tmp_path, model
):
    from e2e.test_action_in_act import act, annotation_lines, git

    workspace = action_workspace(tmp_path / "repo")
    newcomer_repository(workspace, model)
    workflow = (ROOT / "tests" / "fixtures" / "action" / "workflow.yml").read_text()
    workflow = workflow.replace("          baseline-traces: baseline/\n", "")  # the saved baseline, as by default
    workflow = workflow.replace("name: agentci-e2e", f"name: agentci-newcomer-{uuid.uuid4().hex[:12]}", 1)
    workflow = workflow.replace("spec: agentci.yaml", "spec: agentci_spec.yaml")
    (workspace / ".github" / "workflows" / "agentci.yml").write_text(workflow)
    git(workspace, "init", "-q", "-b", "feature")
    git(workspace, "remote", "add", "origin", "https://github.com/octo/agent.git")
    with FakeGitHub() as github:
        code, log = act(workspace, github.url)
        assert code != 0 and "Job failed" in log, log[-3000:]
        errors = [line for line in annotation_lines(log) if line.startswith("::error ")]
        assert errors and re.match(
            rf"::error file=agentci_spec\.yaml,line={REFUND_LINE},title=AgentCI path%3A refund-damaged::"
            r"\[expected_tool_calls: severity fail\] expected_tool_calls not matched \(strict\)",
            errors[0],
        ), errors
        [comment] = github.comments("octo/agent", 7)
        assert_route_change_shown(comment["body"])

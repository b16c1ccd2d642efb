"""The composite action `run/` end to end: `act` runs tests/fixtures/action/run/workflow.yml as GitHub would.

`uses: ./run` installs the agentci CLI from the action's checkout into its own virtual environment (the hashed lock) and
runs the spec's agent (its model calls replayed from tests/fixtures/action/run/recordings/, the `replay` input); `uses: ./` (the
Docker action) then evaluates the traces it wrote: the README's two-step recipe.

Needs Docker, the Dockerfile's base image and `act`, like tests/e2e/test_action_in_act.py; skips without them (a failure
under AGENTCI_REQUIRE_E2E=1).
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

from helpers import ROOT, action_workspace, run_act, run_cli

E2E = ROOT / "tests" / "fixtures" / "action" / "run"


def make_workspace(path: Path) -> Path:
    path = action_workspace(path)
    workflow = (E2E / "workflow.yml").read_text()
    workflow = workflow.replace("name: agentci-run-e2e", f"name: agentci-run-e2e-{uuid.uuid4().hex[:12]}", 1)
    (path / ".github" / "workflows" / "agentci.yml").write_text(workflow)
    for name in ("agentci.yaml", "agent.py"):
        shutil.copy(E2E / name, path / name)
    shutil.copytree(E2E / "recordings", path / "recordings")
    return path


def test_the_run_action_then_the_docker_action(container_engine, tmp_path):
    workspace = make_workspace(tmp_path / "repo")
    event = {"ref": "refs/heads/main", "before": "0" * 40, "repository": {"full_name": "octo/agent"}}
    code, log = run_act(workspace, "push", event, timeout_s=1200)
    assert code == 0, log[-4000:]
    traces = {p.stem: json.loads(p.read_text()) for p in (workspace / "agent-traces").glob("*.jsonl")}
    assert sorted(traces) == ["order-status", "refund-policy"]
    assert traces["refund-policy"]["final_answer"] == "Refunds are accepted within 30 days. (token ***)"
    assert traces["order-status"]["tool_calls"][0]["arguments"] == {"q": "Where is my order?"}
    assert "agentci run: 2 runs in" in log and "0 failed · 0 infra errors" in log
    assert "model calls 2 replayed, 0 live, nothing paid" in log  # the run action's `replay` input: no key, no server
    assert "e2e-secret-token-123" not in log
    assert (workspace / "e2e-outputs.txt").read_text() == "agent-traces pass"


AGENT = """\
import json
import sys

job = json.load(sys.stdin)
answers = {"refund": "Refunds are accepted within 30 days.", "order": "Your order has shipped."}
print(json.dumps({"final_answer": answers[job["id"]], "tool_calls": [{"name": "lookup", "arguments": {"q": job["query"]}}]}))
"""
QUERIES = """\
queries:
  - id: refund
    query: "What is the refund policy?"
    correctness: {expected_in_answer: ["30 days"]}
  - id: order
    query: "Where is my order?"
    correctness: {expected_in_answer: ["shipped"]}
"""


def test_the_workflow_init_writes_for_a_runner_runs_the_agent_and_evaluates_it(container_engine, tmp_path):
    """`agentci init --command` in a repository, its example query replaced.

    The workflow it wrote runs the agent (agentci/action/run) and evaluates what it wrote (agentci/action). Only what
    act cannot fetch offline changes: the two agentci actions are this checkout's (`./run`, `./`), and the checkout and
    upload steps go (act binds the workspace; the report's upload needs GitHub's artifact service).
    """
    workspace = action_workspace(tmp_path / "repo")
    (workspace / "requirements.txt").write_text("# the agent imports nothing beyond the standard library\n")
    init = run_cli("init", workspace, "--command", "python3 agent.py")
    assert init.returncode == 0, init.stderr
    (workspace / "agent.py").write_text(AGENT)
    spec = workspace / "agentci_spec.yaml"
    spec.write_text(spec.read_text().split("\nqueries:")[0] + "\n" + QUERIES)
    path = workspace / ".github" / "workflows" / "agentci.yml"
    workflow = re.sub(r"^      - uses: actions/[^\n]*\n(?: {8,}[^\n]*\n)*", "", path.read_text(), flags=re.M)
    workflow = workflow.replace("uses: agentci/action/run@v2", "uses: ./run").replace(
        "uses: agentci/action@v2", "uses: ./"
    )
    path.write_text(workflow.replace("name: AgentCI", f"name: agentci-init-e2e-{uuid.uuid4().hex[:12]}", 1))
    event = {"ref": "refs/heads/main", "before": "0" * 40, "repository": {"full_name": "octo/agent"}}
    code, log = run_act(workspace, "push", event, timeout_s=1200)
    assert code == 0, log[-4000:]
    assert "agentci run: 2 runs in" in log and "0 failed · 0 infra errors" in log
    results = json.loads((workspace / "agentci-results.json").read_text())
    assert {r["id"]: r["status"] for r in results["results"]} == {"refund": "pass", "order": "pass"}
    assert sorted(p.name for p in (workspace / "agentci-traces").iterdir()) == ["order.jsonl", "refund.jsonl"]

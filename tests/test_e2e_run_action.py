"""The composite action `run/` end to end: `act` runs tests/e2e/run/workflow.yml as GitHub would. `uses: ./run`
installs the agentci CLI from the action's checkout into its own virtual environment (the hashed lock) and runs the
spec's agent; `uses: ./` (the Docker action) then evaluates the traces it wrote: the README's two-step recipe.

Needs Docker, the Dockerfile's base image and `act`, like tests/test_e2e_action.py; skips without them (a failure
under AGENTCI_REQUIRE_E2E=1)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from conftest import action_workspace, run_act

E2E = Path(__file__).parent / "e2e" / "run"


def make_workspace(path: Path) -> Path:
    path = action_workspace(path)
    workflow = (E2E / "workflow.yml").read_text()
    workflow = workflow.replace("name: agentci-run-e2e", f"name: agentci-run-e2e-{uuid.uuid4().hex[:12]}", 1)
    (path / ".github" / "workflows" / "agentci.yml").write_text(workflow)
    for name in ("agentci.yaml", "agent.py"):
        shutil.copy(E2E / name, path / name)
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
    assert "e2e-secret-token-123" not in log
    assert (workspace / "e2e-outputs.txt").read_text() == "agent-traces pass"

"""The judge inside the action's container.

`act` builds the Dockerfile and runs a workflow whose judge (the real anthropic SDK in the image) reaches the local
provider server on 127.0.0.1. Twice, on pushes: the first run asks the provider, the second finds the verdict in the
cache the first left in the workspace and makes no request. (On a pull request a cache is trusted only as it is at the
base commit: tests/integration/test_judge_cache_trust.py.)

Needs what tests/e2e/test_action_in_act.py needs (Docker, the base image, `act`); skips, or fails under AGENTCI_REQUIRE_E2E=1,
the same way.
"""

from __future__ import annotations

import json
import uuid

from helpers import run_act
from integration.test_judge_action import SPEC

from e2e.test_action_in_act import git, make_workspace

KEY = "sk-ant-e2e-secret-31"

WORKFLOW = """\
name: agentci-judge-e2e-{name}
on: push
jobs:
  agentci:
    runs-on: ubuntu-latest
    steps:
      - uses: ./
        id: agentci
        with:
          spec: agentci.yaml
          traces: traces/
          comment-mode: "off"
          judge-mode: required
          anthropic-api-key: ${{{{ secrets.ANTHROPIC_KEY }}}}
"""


def act(workspace) -> tuple[int, str]:
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "--allow-empty", "-m", "run")
    event = {"ref": "refs/heads/feature", "before": "0" * 40, "after": git(workspace, "rev-parse", "HEAD")}
    return run_act(workspace, "push", event, secrets={"ANTHROPIC_KEY": KEY})


def test_the_judge_in_the_container_asks_once_then_uses_its_cache(container_engine, tmp_path, llm):
    workspace = make_workspace(tmp_path / "repo")
    (workspace / ".github" / "workflows" / "agentci.yml").write_text(WORKFLOW.format(name=uuid.uuid4().hex[:12]))
    (workspace / "agentci.yaml").write_text(SPEC.format(url=llm.anthropic_url))
    (workspace / "traces").mkdir()
    rows = [
        {"id": "refund-policy", "final_answer": "Refunds within 30 days."},
        {"id": "order-status", "final_answer": "It has shipped."},
    ]
    (workspace / "traces" / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    code, log = act(workspace)
    assert code == 0, log[-3000:]
    assert llm.count == 1 and llm.received[0].headers["authorization"] == f"Bearer {KEY}"
    results = json.loads((workspace / "agentci-results.json").read_text())
    assert results["results"][0]["correctness"]["checks"][1]["status"] == "pass"
    assert results["summary"]["judge"]["requests"] == 1 and KEY not in log

    code, log = act(workspace)
    assert code == 0, log[-3000:]
    assert llm.count == 1  # the verdict came from .agentci/judge-cache.json
    assert json.loads((workspace / "agentci-results.json").read_text())["summary"]["judge"]["cache_hits"] == 1

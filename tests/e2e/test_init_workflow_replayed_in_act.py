"""From `agentci init` to the pull request's comment, under `act`, with no model key (issue 43).

A repository with an agent function on the real `openai` SDK and its requirements.txt; `agentci init --python
agent:answer`; its example query replaced; the agent's model calls recorded once on the developer's machine (against
the local fake OpenAI server, with a key) and committed. Then the workflow init wrote runs on a pull request with no
key and no model server, as a fork's would: it installs the agent's requirements, runs the agent replayed
(agentci/action/run, the function under the workflow's Python, where `openai` was installed) and evaluates it
(agentci/action), which posts the sticky comment to the local GitHub API server.

Only what act cannot do offline changes in the workflow: the two agentci actions are this checkout's (`./run`, `./`),
the `actions/*` steps go (act binds the workspace and its image has Python; the report's upload needs GitHub's
artifact service), and the action is given the local GitHub API's URL. Needs Docker, the base image and act, like
tests/e2e/test_action_in_act.py; skips without them (a failure under AGENTCI_REQUIRE_E2E=1).
"""

from __future__ import annotations

import re
import uuid

from fakes.github_server import FakeGitHub
from fakes.llm_server import FakeLLMServer
from helpers import action_workspace, hermetic_environment, run_cli

from e2e.test_action_in_act import REPO, act, git

AGENT = """\
from openai import OpenAI


def answer(query):
    response = OpenAI(max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": query}], temperature=0
    )
    return {"final_answer": response.choices[0].message.content, "tool_calls": []}
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


def support_model(messages: list[dict], tools: list[dict]) -> dict:
    question = messages[-1]["content"]
    return {"content": "Refunds are accepted within 30 days." if "refund" in question else "Your order has shipped."}


def test_inits_workflow_replays_committed_recordings_with_no_key_and_comments_on_the_pull_request(
    container_engine, tmp_path
):
    workspace = action_workspace(tmp_path / "repo")
    (workspace / "agent.py").write_text(AGENT)
    (workspace / "requirements.txt").write_text("openai\n")
    init = run_cli("init", workspace, "--python", "agent:answer")
    assert init.returncode == 0, init.stderr
    spec = workspace / "agentci_spec.yaml"
    spec.write_text(spec.read_text().split("\nqueries:")[0] + "\n" + QUERIES)
    with FakeLLMServer(agent_model=support_model) as model:  # the developer's machine, once, with a key
        env = hermetic_environment(OPENAI_API_KEY="sk-developer-0123456789", OPENAI_BASE_URL=model.openai_url)
        recorded = run_cli("record", cwd=workspace, env=env)
    assert recorded.returncode == 0, recorded.stderr
    assert sorted(p.parent.name for p in (workspace / "recordings").glob("*/run-0.json")) == ["order", "refund"]

    path = workspace / ".github" / "workflows" / "agentci.yml"
    workflow = re.sub(r"^      - uses: actions/[^\n]*\n(?: {8,}[^\n]*\n)*", "", path.read_text(), flags=re.M)
    workflow = workflow.replace("uses: agentci/action/run@v2", "uses: ./run").replace(
        "uses: agentci/action@v2", "uses: ./"
    )
    workflow = workflow.replace(
        "          traces: ${{ steps.run.outputs.traces }}\n",
        "          traces: ${{ steps.run.outputs.traces }}\n          github-api-url: ${{ vars.API_URL }}\n",
        1,
    )
    assert "github-api-url" in workflow and "pip install -r requirements.txt" in workflow
    path.write_text(workflow.replace("name: AgentCI", f"name: agentci-init-replayed-{uuid.uuid4().hex[:12]}", 1))
    git(workspace, "init", "-q", "-b", "feature")
    git(workspace, "remote", "add", "origin", f"https://github.com/{REPO}.git")

    with FakeGitHub() as github:  # no model server now, and act is given no model key
        code, log = act(workspace, github.url)
        assert code == 0, log[-5000:]
        assert "agentci run: 2 runs in" in log and "model calls 2 replayed, 0 live, nothing paid" in log
        [comment] = github.comments(REPO, 7)
    body = comment["body"]
    assert body.startswith("<!-- agentci-comment: agentci -->")
    assert "✅ AgentCI" in body and "2 passed" in body, body
    assert "Model calls (replay): 2 replayed · 0 live · nothing paid" in body, body
    assert github.state.violations == []

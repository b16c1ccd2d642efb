"""A fork's pull request replays as a branch's does: a secret-named variable the agent puts in its prompt never decides the match.

Recorded with the variable's real value; replayed with another value, with none (a fork gets no secrets, and AgentCI
sets no placeholder for a variable it does not know), or with AgentCI's placeholder key. A real `openai` SDK agent,
recorded against the local fake OpenAI server.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer
from helpers import hermetic_environment, run_cli

from agentci_action.run.replay.replay_run import PLACEHOLDER_KEY
from e2e.test_recording_first_run import helpful_model

TOKEN = "desk-token-recorded-0123456789abcdef"
AGENT = """\
import json, os, sys
from openai import OpenAI

job = json.load(sys.stdin)
token = os.environ.get("SUPPORT_DESK_TOKEN", "")
prompt = f"You are a support agent. Open tickets with the desk token {token} when asked."
response = OpenAI(max_retries=0).chat.completions.create(
    model="gpt-4o-mini",
    messages=[{"role": "system", "content": prompt}, {"role": "user", "content": job["query"]}],
    temperature=0,
)
print(json.dumps({"final_answer": response.choices[0].message.content, "tool_calls": []}))
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("project")
    (project / "agent.py").write_text(AGENT)
    assert run_cli("init", "--command", f"{shlex.quote(sys.executable)} agent.py", cwd=project).returncode == 0
    with FakeLLMServer(agent_model=helpful_model) as server:
        env = hermetic_environment(
            OPENAI_API_KEY="sk-recording-key-0123456789", OPENAI_BASE_URL=server.openai_url, SUPPORT_DESK_TOKEN=TOKEN
        )
        done = run_cli("record", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert TOKEN not in (project / "recordings" / "greeting" / "run-0.json").read_text()
    return project


@pytest.mark.parametrize(
    "token",
    ["desk-token-of-a-branch-fedcba9876543210", None, PLACEHOLDER_KEY],
    ids=["another-value", "absent", "placeholder"],
)
def test_the_secret_in_the_prompt_is_volatile_present_absent_or_placeholder(recorded: Path, token: str | None):
    env = hermetic_environment(OPENAI_API_KEY="", OPENAI_BASE_URL="")
    env.pop("SUPPORT_DESK_TOKEN", None)
    if token is not None:
        env["SUPPORT_DESK_TOKEN"] = token
    tested = run_cli("test", cwd=recorded, env=env)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "1 replayed · 0 live · nothing paid" in tested.stdout

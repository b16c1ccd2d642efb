"""`agentci init --python module:function`: a `python:` runner replayed, and the next steps it prints run as printed.

The agent is a function calling the real `openai` SDK, recorded against the local fake OpenAI server with a key and
replayed with neither. In a workflow, the run action runs the function under its `python` input's interpreter (where
the agent's packages are), not in AgentCI's own virtual environment.
"""

from __future__ import annotations

import json
import shlex
import stat
import sys
from pathlib import Path

import pytest
import yaml
from fakes.llm_server import FakeLLMServer
from helpers import hermetic_environment, run_cli
from integration.test_cli_names import run_step_of_the_run_action
from integration.test_init import steps_using, workflow_of
from integration.test_recording_first_run import no_key

from agentci_action.spec.names import SPEC_FILE
from e2e.test_recording_first_run import helpful_model, run_printed, with_key

AGENT = """\
import os
from openai import OpenAI


def answer(query):
    response = OpenAI(max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": query}], temperature=0
    )
    usage = response.usage
    return {
        "final_answer": response.choices[0].message.content + os.environ.get("AGENT_PYTHON_MARK", ""),
        "tool_calls": [],
        "llm_calls": [{"model": response.model, "input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens}],
    }
"""


def initialised(directory: Path) -> str:
    (directory / "agent.py").write_text(AGENT)
    (directory / "requirements.txt").write_text("openai\n")
    result = run_cli("init", "--python", "agent:answer", cwd=directory)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_init_writes_a_python_runner_whose_next_steps_run_as_printed(tmp_path: Path):
    printed = initialised(tmp_path)
    spec = yaml.safe_load((tmp_path / SPEC_FILE).read_text())
    assert spec["runner"] == {"python": "agent:answer", "timeout_s": 120, "replay": {}}
    assert not (tmp_path / "traces").exists()  # the agent makes the traces
    steps = [line.strip() for line in printed.splitlines() if line.startswith("  agentci ")]
    assert [shlex.split(s, comments=True)[:2] for s in steps] == [["agentci", "record"], ["agentci", "test"]]
    with FakeLLMServer(agent_model=helpful_model) as server:
        recorded = run_printed(steps[0], tmp_path, with_key(server))
    assert recorded.returncode == 0, recorded.stderr
    assert "1 model call recorded" in recorded.stderr
    assert (tmp_path / "recordings" / "greeting" / "run-0.json").is_file()
    tested = run_printed(steps[1], tmp_path, no_key())  # replayed: no key, no server
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "1 replayed · 0 live · nothing paid" in tested.stdout and "PASS: 1 query · 1 passed" in tested.stdout


def test_the_workflow_runs_the_function_with_no_model_key(tmp_path: Path):
    initialised(tmp_path)
    flow = workflow_of(tmp_path)
    (run,) = steps_using(flow, "agentci/action/run")
    (evaluate,) = steps_using(flow, "agentci/action")
    assert run["with"] == {"spec": SPEC_FILE} and "env" not in run
    assert evaluate["with"] == {"spec": SPEC_FILE, "traces": "${{ steps." + run["id"] + ".outputs.traces }}"}
    steps = flow["jobs"]["agentci"]["steps"]
    assert steps.index(run) - 1 == steps.index({"run": "pip install -r requirements.txt"})


def test_the_run_action_runs_the_function_under_its_python_input(tmp_path: Path):
    """AgentCI's virtual environment has none of the agent's packages: the function runs where they are installed."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    initialised(workspace)
    with FakeLLMServer(agent_model=helpful_model) as server:
        assert run_cli("record", cwd=workspace, env=with_key(server)).returncode == 0
    agent_python = tmp_path / "agent-python"  # the interpreter the workflow set up, marked
    agent_python.write_text(f'#!/bin/sh\nAGENT_PYTHON_MARK=" (agent python)" exec {shlex.quote(sys.executable)} "$@"\n')
    agent_python.chmod(agent_python.stat().st_mode | stat.S_IXUSR)
    done = run_step_of_the_run_action(workspace, tmp_path, python=str(agent_python))
    assert done.returncode == 0, done.stderr
    trace = json.loads((workspace / "agentci-traces" / "greeting.jsonl").read_text())
    assert trace["final_answer"] == "I can help you track orders and explain refunds. (agent python)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--python", "agent.answer"], "error: --python: 'agent.answer' is not module:function (e.g. agent:answer)"),
        (["--python", "agent:answer", "--command", "python agent.py"], "not allowed with argument"),
    ],
    ids=["not-module-function", "both"],
)
def test_a_runner_init_cannot_write_is_refused_before_anything_is_written(tmp_path: Path, options, message):
    result = run_cli("init", tmp_path, *options, env=hermetic_environment())
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []

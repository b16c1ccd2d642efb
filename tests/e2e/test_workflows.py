"""The workflows we ship or write (the dog-food workflow, agentci init's) only use inputs the action declares."""

import re
import shutil
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT, github_outputs, hermetic_environment

from agentci_action.cli.cmd_init import FILES, render

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def _action_steps(workflow: dict):
    for job in workflow["jobs"].values():
        for step in job.get("steps", []):
            if step.get("uses") in ("./",) or str(step.get("uses", "")).startswith("agentci/action@"):
                yield step


def _check(path):
    workflow = yaml.safe_load(path.read_text())
    steps = list(_action_steps(workflow))
    assert steps, f"{path} does not use the action"
    for step in steps:
        unknown = set(step.get("with", {})) - set(ACTION["inputs"])
        assert not unknown, f"{path}: inputs the action does not declare: {unknown}"
        required = {name for name, spec in ACTION["inputs"].items() if spec.get("required")}
        assert required <= set(step.get("with", {})), f"{path}: missing required inputs"
    return workflow


def test_dog_food_workflow_runs_every_example_through_the_action():
    workflow = _check(ROOT / ".github" / "workflows" / "agentci-examples.yml")
    examples = set(workflow["jobs"]["example"]["strategy"]["matrix"]["example"])
    assert examples == {p.parent.name for p in (ROOT / "examples").glob("*/agentci_spec.yaml")}


@pytest.mark.parametrize("command", [None, "python agent.py"], ids=["traces", "runner"])
def test_init_workflow_uses_declared_inputs(command, tmp_path):
    template = ROOT / "agentci_action" / "templates" / next(t for t, dest in FILES.items() if dest.endswith(".yml"))
    (tmp_path / "agentci.yml").write_text(render(template.read_text(), command))
    _check(tmp_path / "agentci.yml")


def test_documented_workflow_snippets_use_declared_inputs():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    checked = 0
    for block in re.findall(r"```yaml\n(.*?)```", "".join(page.read_text() for page in pages), flags=re.S):
        doc = yaml.safe_load(block)
        if isinstance(doc, dict) and "jobs" in doc:
            for step in _action_steps(doc):
                assert set(step.get("with", {})) <= set(ACTION["inputs"]), block
                checked += 1
    assert checked >= 1


def run_action_script(tmp_path, cwd, **inputs: str) -> subprocess.CompletedProcess[str]:
    """run/action.yml's own script, run as the runner runs it, with `inputs` as its AGENTCI_* variables.

    Run with bash, its env, the test's own Python as the action's environment and its `python` input; the other
    variables empty and GITHUB_OUTPUT in tmp_path.
    """
    step = next(
        s for s in yaml.safe_load((ROOT / "run" / "action.yml").read_text())["runs"]["steps"] if s.get("id") == "run"
    )
    venv = tmp_path / "temp" / "agentci-venv" / "bin"
    venv.mkdir(parents=True, exist_ok=True)
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "python").chmod(0o755)
    env = {
        **hermetic_environment(),
        **dict.fromkeys(step["env"], ""),
        "AGENTCI_RESUME": "false",
        "AGENTCI_PYTHON": sys.executable,  # the input's default names the runner's python3; here the test's own
        **inputs,
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
    }
    return subprocess.run(["bash", "-c", step["run"]], env=env, cwd=cwd, capture_output=True, text=True)


def test_a_newline_in_the_run_action_s_output_input_adds_no_output_of_its_own(tmp_path):
    """An `output` input that holds a newline and a line of its own: the one output `traces` holds the value whole."""
    value = "traces-dir\nstatus=pass\ninjected<<EOF"
    done = run_action_script(tmp_path, tmp_path, AGENTCI_SPEC=str(tmp_path / "missing.yaml"), AGENTCI_OUTPUT=value)
    assert done.returncode == 2, done.stderr  # the spec is missing: the run itself fails after the output is set
    assert github_outputs((tmp_path / "github_output").read_text()) == {"traces": value}


def test_the_run_action_s_replay_input_is_the_run_s_mode(tmp_path):
    """The end-to-end workflow's agent (tests/fixtures/action/run/) without act.

    Replayed from its recordings by the spec's `replay:`, with no key and no server; with the input `off` it asks the
    model it was given, which is not there.
    """
    agent = tmp_path / "agent"
    shutil.copytree(ROOT / "tests" / "fixtures" / "action" / "run", agent)
    spec = yaml.safe_load((agent / "agentci.yaml").read_text())
    (agent / "agentci.yaml").write_text(yaml.safe_dump({**spec, "runner": {**spec["runner"], "retries": 0}}))
    model = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test-0123456789abcdef"}
    inputs = {"AGENTCI_SPEC": "agentci.yaml", "AGENTCI_OUTPUT": "traces", **model}
    replayed = run_action_script(tmp_path, agent, **inputs, AGENTCI_REPLAY="replay")
    assert replayed.returncode == 0, replayed.stderr
    assert "model calls 2 replayed, 0 live, nothing paid" in replayed.stderr
    live = run_action_script(tmp_path, agent, **inputs, AGENTCI_REPLAY="off")
    assert live.returncode == 2 and "model calls" not in live.stderr  # a model that cannot be reached: [INFRA]
    assert "after a model outage" in live.stderr or "Connection refused" in live.stderr, live.stderr

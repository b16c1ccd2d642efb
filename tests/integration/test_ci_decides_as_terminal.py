"""CI decides what the terminal decides (issue 43, item 4).

examples/repeated-runs, its recorded runs replayed by a `python:` runner: `agentci test` in the terminal, and the
workflow `agentci init` writes (the run action's own `run:` script in bash, then the action in process on the traces it
wrote) give the same verdicts and the same runs per query, adaptive runs included.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action.cli.cmd_init import init_project
from agentci_action.github.action import main as action_main

EXAMPLE = ROOT / "examples" / "repeated-runs"

# The agent: each query's recorded run `run` of examples/repeated-runs/traces/runs.jsonl, answered again
AGENT = """
import json
from pathlib import Path

RECORDED = {}
for line in (Path(__file__).parent / "recorded.jsonl").read_text().splitlines():
    row = json.loads(line)
    RECORDED[row.pop("id"), row.pop("run")] = row


def answer(query, id, run):
    return RECORDED[id, run]
"""


@pytest.fixture
def project(tmp_path):
    """The example with a runner that replays its recordings, and the workflow `agentci init` writes for it."""
    spec = (EXAMPLE / "agentci_spec.yaml").read_text()
    (tmp_path / "agentci_spec.yaml").write_text(
        spec.replace("\ndefaults:", "\nrunner:\n  python: agent:answer\n\ndefaults:", 1)
    )
    shutil.copytree(EXAMPLE / "baselines", tmp_path / "baselines")
    shutil.copy(EXAMPLE / "traces" / "runs.jsonl", tmp_path / "recorded.jsonl")
    (tmp_path / "agent.py").write_text(AGENT)
    init_project(tmp_path / "init", command="python agent.py")
    return tmp_path


def workflow_steps(project: Path) -> tuple[dict, dict]:
    """The run action's and the action's `with:` in the workflow init wrote."""
    workflow = yaml.safe_load((project / "init" / ".github" / "workflows" / "agentci.yml").read_text())
    steps = workflow["jobs"]["agentci"]["steps"]
    [run_step] = [s for s in steps if s.get("uses", "").startswith("agentci/action/run@")]
    [action_step] = [s for s in steps if s.get("uses", "").startswith("agentci/action@")]
    return run_step.get("with", {}), action_step["with"]


def run_action_script(project: Path, given: dict, base_sha: str = "") -> subprocess.CompletedProcess:
    """run/action.yml's step that runs the agent, in bash as the runner runs it, with `given` and the defaults.

    The event's values are empty but the base commit, `base_sha` (none, as on a workflow_dispatch, by default).
    """
    action = yaml.safe_load((ROOT / "run" / "action.yml").read_text())
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "run"]
    inputs = {name: str(given.get(name, spec["default"])) for name, spec in action["inputs"].items()}
    expression = re.compile(r"\$\{\{ (?:inputs\.([\w-]+)|([^}]*)) \}\}")

    def value(found: re.Match) -> str:
        return inputs[found[1]] if found[1] else base_sha if "base.sha" in found[2] else ""

    env = {name: expression.sub(value, text) for name, text in step["env"].items()}
    venv = project / "runner-temp" / "agentci-venv" / "bin"  # the install step's virtual environment: this Python
    venv.mkdir(parents=True, exist_ok=True)
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a link would leave the venv
    (venv / "python").chmod(0o755)
    environment = hermetic_environment(
        **env, RUNNER_TEMP=str(project / "runner-temp"), GITHUB_OUTPUT=str(project / "run-output.txt")
    )
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), environment.get("PYTHONPATH", "")])
    return subprocess.run(["bash", "-c", step["run"]], cwd=project, env=environment, capture_output=True, text=True)


def run_the_action(project: Path, given: dict, traces: str) -> int:
    """The action in process on the run action's traces, as the workflow hands them over (no pull request)."""
    (project / "event.json").write_text("{}")
    env = {
        **hermetic_environment(),
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": str(project / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "m" * 40,
        "GITHUB_WORKSPACE": str(project),
        "GITHUB_STEP_SUMMARY": str(project / "summary.md"),
        "GITHUB_OUTPUT": str(project / "action-output.txt"),
        "INPUT_RESULTS-PATH": "ci-results.json",
    }
    env.update({f"INPUT_{name.upper()}": str(value) for name, value in given.items() if name != "traces"})
    env["INPUT_TRACES"] = traces
    cwd = Path.cwd()
    os.chdir(project)
    try:
        return action_main(env, io.StringIO())
    finally:
        os.chdir(cwd)


def decided(results: dict) -> tuple[dict, dict]:
    """Each query's verdict against the baseline and its runs, from a results JSON."""
    verdicts = {q["id"]: q["pass_rate"]["verdict"] for q in results["diff"]["queries"]}
    return verdicts, {r["id"]: r["reliability"]["runs"] for r in results["results"]}


def test_the_workflow_init_writes_decides_what_agentci_test_decides(project):
    tested = run_cli("test", "--spec", "agentci_spec.yaml", "--format", "json", cwd=project)
    terminal = decided(json.loads(tested.stdout))

    run_with, action_with = workflow_steps(project)
    ran = run_action_script(project, run_with)
    assert ran.returncode == 0, ran.stderr
    traces = re.search(r"traces<<(\S+)\n(.*)\n\1", (project / "run-output.txt").read_text())[2]
    assert action_with["traces"] == "${{ steps.run.outputs.traces }}"
    code = run_the_action(project, action_with, traces)
    ci = decided(json.loads((project / "ci-results.json").read_text()))

    assert ci == terminal
    assert code == tested.returncode == 1  # convert-currency regressed
    # 45 runs, as the traces were recorded: 5 where the verdict came first, 10 once unchanged, 20 while open
    assert terminal == (
        {
            "capital-japan": "unchanged",
            "population-lagos": "inconclusive",
            "convert-currency": "regressed",
            "summarise-paper": "unchanged",
        },
        {"capital-japan": 10, "population-lagos": 20, "convert-currency": 5, "summarise-paper": 10},
    )
    assert re.findall(r"agentci run: (\d+) runs in", ran.stderr) == re.findall(
        r"agentci run: (\d+) runs in", tested.stderr
    )


def test_fixed_runs_and_no_baseline_take_the_minimum_without_evaluating(project):
    for extra in (["--runs", "5"], ["--baseline", "none"]):
        output = project / f"out{extra[0]}"
        ran = run_cli("run", "--spec", "agentci_spec.yaml", "--output", output, *extra, cwd=project)
        assert ran.returncode == 0, ran.stderr
        assert re.findall(r"agentci run: (\d+) runs in", ran.stderr) == ["20"]
        assert sorted(len(f.read_text().splitlines()) for f in output.iterdir()) == [5, 5, 5, 5]


def runs_written(directory: Path) -> dict[str, int]:
    return {f.stem: len(f.read_text().splitlines()) for f in directory.iterdir()}


def test_baseline_base_takes_adaptive_runs_against_the_base_commits_baseline(project):
    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], cwd=project, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "base")
    git("add", "agentci_spec.yaml", "baselines")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "base with its baseline")
    base = git("rev-parse", "HEAD").strip()
    shutil.rmtree(project / "baselines")  # the pull request dropped it: only the base commit has one

    ran = run_action_script(project, {"baseline": "base"}, base_sha=base)
    assert ran.returncode == 0, ran.stderr
    expected = {"capital-japan": 10, "population-lagos": 20, "convert-currency": 5, "summarise-paper": 10}
    assert runs_written(project / "agentci-traces") == expected
    shutil.rmtree(project / "agentci-traces")
    ran = run_action_script(project, {"baseline": "base"})  # no base commit, no saved version: the minimum
    assert ran.returncode == 0, ran.stderr
    assert set(runs_written(project / "agentci-traces").values()) == {5}

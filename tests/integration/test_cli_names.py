"""Names that agree.

The spec is agentci_spec.yaml everywhere (agentci.yaml still read by default, with a deprecation notice), named as SPEC
or --spec on every command, found by default; `agentci --version`.
"""

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, github_outputs, hermetic_environment, run_cli

from agentci_action import __version__
from agentci_action.cli.cmd_init import FILES
from agentci_action.github.action import main as action_main
from agentci_action.spec.names import DEPRECATED_SPEC_FILE, SPEC_FILE

SPEC = "agent: demo\nqueries:\n  - id: math\n    query: 'What is 2+2?'\n    correctness: {expected_in_answer: ['4']}\n"
TRACE = {"id": "math", "final_answer": "4", "tool_calls": [], "llm_calls": []}


@pytest.fixture
def project(tmp_path):
    """A directory with a spec under `name` and its trace, as a user's repository."""

    def _project(name: str = SPEC_FILE):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(SPEC)
        (tmp_path / "traces").mkdir(exist_ok=True)
        (tmp_path / "traces" / "t.jsonl").write_text(json.dumps(TRACE) + "\n")
        return tmp_path

    return _project


def test_version():
    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"agentci {__version__}"


COMMANDS = [
    "validate",
    "test",
    "save",
    "queries",
    "baselines",
    "diff",
    "merge",
    "run",
    "record",
    "goldens",
]  # every one that reads a spec


def test_one_default_spec_name_in_both_actions_every_command_init_and_the_examples(tmp_path):
    assert SPEC_FILE in FILES.values()
    assert {p.name for p in (ROOT / "examples").glob("*/agentci*.yaml")} == {SPEC_FILE}
    for action in ("action.yml", "run/action.yml"):
        assert yaml.safe_load((ROOT / action).read_text())["inputs"]["spec"]["default"] == SPEC_FILE, action
    for command in COMMANDS:
        shown = " ".join(run_cli(command, "--help").stdout.split())  # argparse wraps the help text
        assert f"(default: ./{SPEC_FILE})" in shown, command
    for layout, options in (("runner", ["--command", "python agent.py"]), ("traces", [])):
        assert run_cli("init", tmp_path / layout, *options).returncode == 0
        workflow = yaml.safe_load((tmp_path / layout / ".github" / "workflows" / "agentci.yml").read_text())
        specs = {
            step["with"]["spec"] for step in workflow["jobs"]["agentci"]["steps"] if "spec" in step.get("with", {})
        }
        assert specs == {SPEC_FILE}, layout


def run_step_of_the_run_action(workspace: Path, tmp_path: Path, **inputs: str) -> subprocess.CompletedProcess:
    """The composite action run/action.yml's `run` step ("Run the agent") as the runner runs it.

    Its env made from the inputs (the defaults for those not given), in `workspace`; its virtual environment's python is
    this one.
    """
    action = yaml.safe_load((ROOT / "run" / "action.yml").read_text())
    (step,) = [step for step in action["runs"]["steps"] if step.get("id") == "run"]
    values = {name: inputs.get(name, str(spec.get("default", ""))) for name, spec in action["inputs"].items()}
    env = {
        name: re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m[1]], value)
        for name, value in step["env"].items()
    }
    python = tmp_path / "runner-temp" / "agentci-venv" / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    env |= {"RUNNER_TEMP": str(tmp_path / "runner-temp"), "GITHUB_OUTPUT": str(tmp_path / "github-output")}
    return subprocess.run(
        [step["shell"], "-c", step["run"]],
        cwd=workspace,
        env=hermetic_environment(**env),
        capture_output=True,
        text=True,
    )


AGENT = 'import json, sys\njob = json.load(sys.stdin)\nprint(json.dumps({"final_answer": "4"}))\n'


def test_the_run_action_left_to_its_default_runs_the_spec_init_wrote(tmp_path):
    """It used to default to agentci.yaml: in a directory set up by init, "agentci.yaml: spec file not found"."""
    workspace = tmp_path / "repo"
    assert run_cli("init", workspace, "--command", "python3 agent.py").returncode == 0
    (workspace / "agent.py").write_text(AGENT)
    done = run_step_of_the_run_action(workspace, tmp_path)
    assert done.returncode == 0, done.stderr
    assert github_outputs((tmp_path / "github-output").read_text()) == {"traces": "agentci-traces"}
    assert json.loads((workspace / "agentci-traces" / "greeting.jsonl").read_text())["final_answer"] == "4"
    assert "warning" not in done.stderr


def test_the_run_action_reads_the_old_default_name_with_a_warning(tmp_path):
    workspace = tmp_path / "repo"
    assert run_cli("init", workspace, "--command", "python3 agent.py").returncode == 0
    (workspace / SPEC_FILE).rename(workspace / DEPRECATED_SPEC_FILE)
    (workspace / "agent.py").write_text(AGENT)
    done = run_step_of_the_run_action(workspace, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"warning: {DEPRECATED_SPEC_FILE} is read because there is no {SPEC_FILE}" in done.stderr
    named = run_step_of_the_run_action(workspace, tmp_path, spec="missing.yaml")  # a name given is read as given
    assert named.returncode == 2 and "missing.yaml: spec file not found" in named.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["validate"],
        ["test", "--traces", "traces/"],
        ["queries"],
        ["baselines"],
        ["save", "--traces", "traces/", "--version", "v1"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_takes_the_spec_either_way_or_finds_it(project, command):
    cwd = project("specs/demo.yaml")
    outputs = []
    for spec_args in (["specs/demo.yaml"], ["--spec", "specs/demo.yaml"]):
        done = run_cli(
            *command[:1], *spec_args, *command[1:], *(["--overwrite"] if command[0] == "save" else []), cwd=cwd
        )
        assert done.returncode == 0, (spec_args, done.stderr)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    (cwd / "specs" / "demo.yaml").rename(cwd / SPEC_FILE)
    done = run_cli(*command, *(["--overwrite"] if command[0] == "save" else []), cwd=cwd)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


def test_diff_and_merge_take_the_spec_either_way(project):
    cwd = project()
    assert run_cli("save", "--traces", "traces/", "--version", "v1", cwd=cwd).returncode == 0
    assert run_cli("save", "--traces", "traces/", "--version", "v2", cwd=cwd).returncode == 0
    diffs = [
        run_cli("diff", *spec, "--baseline", "v1", "--compare", "v2", cwd=cwd)
        for spec in ([SPEC_FILE], ["--spec", SPEC_FILE], [])
    ]
    assert [d.returncode for d in diffs] == [0, 0, 0] and len({d.stdout for d in diffs}) == 1
    for shard in ("1/2", "2/2"):
        out = f"results/shard-{shard[0]}.json"
        assert run_cli("test", "--traces", "traces/", "--shard", shard, "--output", out, cwd=cwd).returncode == 0
    merges = [
        run_cli("merge", *spec, "results/shard-*.json", cwd=cwd) for spec in ([SPEC_FILE], ["--spec", SPEC_FILE], [])
    ]
    assert [m.returncode for m in merges] == [0, 0, 0], merges[0].stderr
    assert len({m.stdout for m in merges}) == 1


def test_the_old_default_name_is_read_with_a_deprecation_notice(project):
    cwd = project(DEPRECATED_SPEC_FILE)
    done = run_cli("test", "--traces", "traces/", cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert f"warning: {DEPRECATED_SPEC_FILE} is read because there is no {SPEC_FILE}" in done.stderr
    named = run_cli("test", DEPRECATED_SPEC_FILE, "--traces", "traces/", cwd=cwd)
    assert named.returncode == 0 and "warning" not in named.stderr  # a name the user chose is not deprecated


def test_no_spec_or_two_different_ones_is_an_input_error(project, tmp_path):
    empty = run_cli("validate", cwd=tmp_path)
    assert empty.returncode == 2
    assert f"no spec named and no {SPEC_FILE} here: give its path (SPEC or --spec), or run agentci init" in empty.stderr
    cwd = project()
    (cwd / "other.yaml").write_text(SPEC)
    both = run_cli("validate", SPEC_FILE, "--spec", "other.yaml", cwd=cwd)
    assert both.returncode == 2 and "the spec is named twice" in both.stderr
    same = run_cli("validate", SPEC_FILE, "--spec", f"./{SPEC_FILE}", cwd=cwd)
    assert same.returncode == 0, same.stderr


def test_the_action_reads_the_old_default_name_with_a_warning(project, monkeypatch):
    cwd = project(DEPRECATED_SPEC_FILE)
    monkeypatch.chdir(cwd)
    (cwd / "event.json").write_text(json.dumps({"before": "b" * 40, "after": "a" * 40}))
    env = {
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(cwd / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_WORKSPACE": str(cwd),
        "GITHUB_STEP_SUMMARY": str(cwd / "summary.md"),
        "GITHUB_OUTPUT": str(cwd / "output.txt"),
        "INPUT_SPEC": SPEC_FILE,  # what the runner passes when the workflow leaves `spec` to its default
        "INPUT_TRACES": "traces/",
    }
    out = io.StringIO()
    assert action_main(env, out) == 0, out.getvalue()
    assert f"::warning title=AgentCI::{DEPRECATED_SPEC_FILE} is read because there is no {SPEC_FILE}" in out.getvalue()
    assert json.loads((cwd / "agentci-results.json").read_text())["summary"]["passed"] == 1

"""Recording a query again replaces its whole set of run files (run/replay/recording_set.py).

`agentci record --all` writes every run into a fresh sibling folder and swaps it in, so no run of an earlier recording
is left beside the new ones; a linked folder on the way is refused (exit 2) and nothing is written where it points.
`agentci record` (record-missing) keeps the runs it has and adds the missing ones.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
import yaml
from fakes.llm_server import FakeLLMServer
from helpers import hermetic_environment, run_cli

from agentci_action._util.errors import EXIT_ERROR

AGENT = """\
import json, sys
from openai import OpenAI

job = json.load(sys.stdin)
response = OpenAI(max_retries=0).chat.completions.create(
    model="gpt-4o-mini", messages=[{"role": "user", "content": job["query"]}], temperature=0
)
print(json.dumps({"final_answer": response.choices[0].message.content, "tool_calls": []}))
"""


def model_saying(answer: str):
    return lambda messages, tools: {"content": answer}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    result = run_cli("init", "--command", f"{shlex.quote(sys.executable)} agent.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path


def with_runs(project: Path, runs: int) -> None:
    spec_file = project / "agentci_spec.yaml"
    spec = yaml.safe_load(spec_file.read_text())
    spec["queries"][0]["runs"] = runs
    spec_file.write_text(yaml.safe_dump(spec, sort_keys=False))


def record(project: Path, answer: str, *flags: str) -> int:
    with FakeLLMServer(agent_model=model_saying(answer)) as server:
        env = hermetic_environment(OPENAI_API_KEY="sk-test-0123456789", OPENAI_BASE_URL=server.openai_url)
        return run_cli("record", *flags, cwd=project, env=env).returncode


def listing(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_recording_again_with_fewer_runs_leaves_no_old_run(project: Path):
    with_runs(project, 3)
    assert record(project, "I can help with orders (old model).", "--all") == 0
    assert listing(project / "recordings" / "greeting") == ["run-0.json", "run-1.json", "run-2.json"]
    with_runs(project, 1)
    assert record(project, "I can help with refunds (new model).", "--all") == 0
    assert listing(project / "recordings") == ["greeting"]  # no fresh or old folder left beside it
    assert listing(project / "recordings" / "greeting") == ["run-0.json"]
    assert "new model" in (project / "recordings" / "greeting" / "run-0.json").read_text()


def test_record_missing_keeps_the_recorded_runs_and_adds_the_missing_ones(project: Path):
    assert record(project, "I can help with orders (old model).") == 0
    with_runs(project, 2)
    assert record(project, "I can help with refunds (new model).") == 0
    folder = project / "recordings" / "greeting"
    assert listing(folder) == ["run-0.json", "run-1.json"]
    assert "old model" in (folder / "run-0.json").read_text()
    assert "new model" in (folder / "run-1.json").read_text()


@pytest.mark.parametrize("linked", ["recordings", "recordings/greeting"])
def test_a_linked_folder_is_refused_and_nothing_is_written_where_it_points(project: Path, tmp_path: Path, linked: str):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "run-7.json").write_text("kept\n")
    link = project / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    with FakeLLMServer(agent_model=model_saying("I can help.")) as server:
        env = hermetic_environment(OPENAI_API_KEY="sk-test-0123456789", OPENAI_BASE_URL=server.openai_url)
        result = run_cli("record", "--all", cwd=project, env=env)
    assert result.returncode == EXIT_ERROR
    assert "symbolic link" in result.stderr
    assert listing(outside) == ["run-7.json"]
    assert link.is_symlink()
    if linked == "recordings/greeting":
        assert listing(project / "recordings") == ["greeting"]  # no fresh folder left beside the link


def test_init_offers_a_scheduled_drift_job_that_records_live_and_pushes_nothing(tmp_path: Path):
    """The job, uncommented as init's comment says, re-records with the key and reports drift; zizmor finds nothing."""
    import json
    import shutil
    import subprocess

    from agentci_action.cli.cmd_init import init_project

    init_project(tmp_path, command="python agent.py")
    text = (tmp_path / ".github" / "workflows" / "agentci.yml").read_text()
    in_use = "".join(line[1:] if line.startswith("#  ") else line for line in text.splitlines(True))
    flow = yaml.safe_load(in_use)
    assert "schedule" in flow[True]  # YAML reads the key `on` as true
    job = flow["jobs"]["agentci-drift"]
    assert job["if"] == "${{ github.event_name == 'schedule' }}" and job["permissions"] == {"contents": "read"}
    runs = [step.get("run", "") for step in job["steps"]]
    assert any("agentci record --all" in run for run in runs)
    assert any("git diff --stat -- recordings/" in run and "GITHUB_STEP_SUMMARY" in run for run in runs)
    assert not any("git push" in run or "git commit" in run for run in runs)
    assert all(
        step["with"]["persist-credentials"] is False for step in job["steps"] if "checkout@" in step.get("uses", "")
    )
    uncommented = tmp_path / "audit" / ".github" / "workflows" / "agentci.yml"
    uncommented.parent.mkdir(parents=True)
    uncommented.write_text(in_use)
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    assert zizmor, "zizmor is in the test extras"
    done = subprocess.run(
        [zizmor, "--offline", "--min-severity", "low", "--format", "json", str(uncommented)],
        capture_output=True,
        text=True,
    )
    findings = [(f["ident"], f["locations"][-1]["concrete"]["feature"]) for f in json.loads(done.stdout or "[]")]
    assert {ident for ident, _ in findings} <= {"unpinned-uses"}, findings

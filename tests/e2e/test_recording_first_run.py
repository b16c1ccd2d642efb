"""From `agentci init` to a replayed run, with a real `openai` SDK agent, and every command AgentCI prints as advice.

The agent talks to the local fake OpenAI server (tests/fakes/llm_server.py) while it is recorded, with a key; after
that there is no server and no key, as on a pull request from a fork. Each command printed as a remedy is run exactly
as printed (split as a shell would, its comment dropped).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from fakes.llm_server import FakeLLMServer
from helpers import hermetic_environment, run_cli
from integration.test_recording_first_run import KEY, files, initialised, no_key


def helpful_model(messages: list[dict], tools: list[dict]) -> dict:
    return {"content": "I can help you track orders and explain refunds."}


def with_key(server: FakeLLMServer) -> dict[str, str]:
    return hermetic_environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.openai_url)


def run_printed(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """An `agentci ...` or shell command exactly as AgentCI printed it."""
    argv = shlex.split(command, comments=True)
    if argv[0] == "agentci":
        return run_cli(*argv[1:], cwd=cwd, env=env)
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env)


def remedy(output: str) -> str:
    """The one command a message names between backticks after "record them with" / "record it with"."""
    (command,) = set(re.findall(r"record (?:them|it) with `([^`]+)`", output))
    return command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    initialised(tmp_path)
    return tmp_path


def test_init_writes_replay_and_its_next_steps_run_as_printed(tmp_path: Path):
    project = tmp_path
    printed = initialised(project)
    spec = yaml.safe_load((project / "agentci_spec.yaml").read_text())
    assert spec["runner"]["replay"] == {}
    steps = [line.strip() for line in printed.splitlines() if line.startswith("  agentci ")]
    assert [shlex.split(s, comments=True)[:2] for s in steps] == [["agentci", "record"], ["agentci", "test"]]
    with FakeLLMServer(agent_model=helpful_model) as server:
        recorded = run_printed(steps[0], project, with_key(server))
    assert recorded.returncode == 0, recorded.stderr
    assert "1 model call recorded" in recorded.stderr
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (commit,) = re.findall(r"\(commit it: (git add [^)]+)\)", recorded.stderr)
    assert run_printed(commit, project, no_key()).returncode == 0
    staged = subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True, check=True).stdout
    assert staged.split() == ["recordings/greeting/run-0.json"]
    text = (project / "recordings" / "greeting" / "run-0.json").read_text()
    assert KEY not in text and "<volatile>" in text  # the key in the prompt is neither kept nor matched on
    tested = run_printed(steps[1], project, no_key())  # replayed: no key, no server
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "1 replayed · 0 live · nothing paid" in tested.stdout


@pytest.mark.parametrize("key", ["", "sk-another-key-from-a-branch-0123"], ids=["fork-no-key", "another-key"])
def test_a_key_in_the_prompt_replays_without_it(project: Path, key: str):
    with FakeLLMServer(agent_model=helpful_model) as server:
        assert run_cli("record", cwd=project, env=with_key(server)).returncode == 0
    env = hermetic_environment(OPENAI_API_KEY=key, OPENAI_BASE_URL="")
    tested = run_cli("test", cwd=project, env=env)
    assert tested.returncode == 0, tested.stdout + tested.stderr


@pytest.mark.parametrize("layout", ["no-folder", "empty-folder"])
def test_nothing_recorded_says_not_recorded_yet_and_names_the_command_that_records(project: Path, layout: str):
    if layout == "empty-folder":
        (project / "recordings").mkdir()
    before = files(project)
    tested = run_cli("test", cwd=project, env=no_key())
    assert tested.returncode != 0
    output = tested.stdout + tested.stderr
    assert "not recorded yet" in output and "recordings/greeting/run-0.json does not exist" in output
    assert "differs" not in output  # no diff against nothing
    assert files(project) == before  # a replayed run writes nothing
    with FakeLLMServer(agent_model=helpful_model) as server:
        fixed = run_printed(remedy(output), project, with_key(server))
    assert fixed.returncode == 0, fixed.stderr
    assert set(files(project)) - set(before) == {"recordings/greeting/run-0.json"}
    assert run_cli("test", cwd=project, env=no_key()).returncode == 0


def test_a_missing_run_in_the_middle_is_named_and_recorded_alone(project: Path):
    spec = project / "agentci_spec.yaml"
    spec.write_text(spec.read_text().replace("    tags: [smoke]\n", "    tags: [smoke]\n    runs: 3\n"))
    with FakeLLMServer(agent_model=helpful_model) as server:
        assert run_cli("record", cwd=project, env=with_key(server)).returncode == 0
    (project / "recordings" / "greeting" / "run-1.json").unlink()
    before = files(project)
    tested = run_cli("test", cwd=project, env=no_key())
    output = tested.stdout + tested.stderr
    assert tested.returncode != 0 and "recordings/greeting/run-1.json does not exist" in output
    assert "run-0.json does not exist" not in output and "run-2.json does not exist" not in output
    with FakeLLMServer(agent_model=helpful_model) as server:
        assert run_printed(remedy(output), project, with_key(server)).returncode == 0
    after = files(project)
    assert {k: v for k, v in after.items() if k != "recordings/greeting/run-1.json"} == before  # the others untouched
    assert run_cli("test", cwd=project, env=no_key()).returncode == 0


def test_a_recording_of_a_query_the_spec_no_longer_has_is_named_with_the_command_that_removes_it(project: Path):
    with FakeLLMServer(agent_model=helpful_model) as server:
        assert run_cli("record", cwd=project, env=with_key(server)).returncode == 0
        spec = project / "agentci_spec.yaml"
        spec.write_text(spec.read_text().replace("- id: greeting", "- id: welcome"))
        recorded = run_cli("record", cwd=project, env=with_key(server))
    assert recorded.returncode == 0, recorded.stderr
    (note,) = [line for line in recorded.stderr.splitlines() if "no longer has" in line]
    assert "recordings/greeting/" in note
    removed = run_printed(re.findall(r"remove it with `([^`]+)`", note)[0], project, no_key())
    assert removed.returncode == 0 and not (project / "recordings" / "greeting").exists()
    assert (project / "recordings" / "welcome" / "run-0.json").is_file()

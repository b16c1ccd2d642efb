"""From `agentci init` to a replayed run, the checks that run no agent.

The recording itself, with a real `openai` SDK agent, and every command AgentCI prints as advice run as printed:
tests/e2e/test_recording_first_run.py (the agent and helpers below are shared with it).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from helpers import hermetic_environment, run_cli

KEY = "sk-test-first-run-0123456789abcdef"
# A real SDK agent that puts its key in its prompt, as some do: recorded with the key, replayed with none or the
# placeholder AgentCI gives it, the prompt must match all the same.
AGENT = """\
import json, os, sys
from openai import OpenAI

job = json.load(sys.stdin)
key = os.environ.get("OPENAI_API_KEY", "")
prompt = f"You are a support agent (account key {key}). Say how you can help."
response = OpenAI(max_retries=0).chat.completions.create(
    model="gpt-4o-mini",
    messages=[{"role": "system", "content": prompt}, {"role": "user", "content": job["query"]}],
    temperature=0,
)
usage = response.usage
print(json.dumps({"final_answer": response.choices[0].message.content, "tool_calls": [], "llm_calls": [
    {"model": response.model, "input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens}]}))
"""


def no_key() -> dict[str, str]:
    """A pull request from a fork: no model key, no model server."""
    return hermetic_environment(OPENAI_API_KEY="", OPENAI_BASE_URL="")


def initialised(directory: Path) -> str:
    """The agent and what `agentci init --command` wrote for it in `directory`; what init printed."""
    (directory / "agent.py").write_text(AGENT)
    (directory / "requirements.txt").write_text("openai\n")
    result = run_cli("init", "--command", f"{shlex.quote(sys.executable)} agent.py", cwd=directory)
    assert result.returncode == 0, result.stderr
    return result.stdout


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("where", ["recordings", "recordings/greeting"])
def test_a_file_where_the_recordings_folder_belongs_is_one_error_naming_it(tmp_path: Path, where: str):
    project = tmp_path
    initialised(project)
    (project / where).parent.mkdir(parents=True, exist_ok=True)
    (project / where).write_text("not a folder\n")
    before = files(project)
    for command, env in (("test", no_key()), ("record", with_key_unreachable())):
        result = run_cli(command, cwd=project, env=env)
        assert result.returncode == 2, result.stdout + result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and where in errors[0] and "is a file" in errors[0], result.stderr
        assert "`agentci record --spec agentci_spec.yaml`" in errors[0]
        assert files(project) == before


def with_key_unreachable() -> dict[str, str]:
    """A key but a model no one answers at (the run must stop before it asks)."""
    return hermetic_environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL="http://127.0.0.1:9/v1")


@pytest.mark.parametrize(
    ("manifest", "install"),
    [
        ("requirements.txt", "pip install -r requirements.txt"),
        ("pyproject.toml", "pip install ."),
        ("package.json", "npm ci"),
        (None, "pip install -r requirements.txt  # EDIT: install what your agent imports"),
    ],
)
def test_inits_workflow_sets_up_the_agent_and_gives_it_no_key(tmp_path: Path, manifest: str | None, install: str):
    """Checked without Docker: the steps a runner needs, in order, and comments that say what the workflow does."""
    if manifest:
        (tmp_path / manifest).write_text("")
    assert run_cli("init", "--command", "python agent.py", cwd=tmp_path).returncode == 0
    text = (tmp_path / ".github" / "workflows" / "agentci.yml").read_text()
    steps = yaml.safe_load(text)["jobs"]["agentci"]["steps"]
    uses = [step.get("uses", "").split("@")[0] or step["run"] for step in steps]
    assert uses[:4] == ["actions/checkout", "actions/setup-python", install.split("  #")[0], "agentci/action/run"]
    assert f"- run: {install}\n" in text  # the marked line to edit, when no manifest was found
    assert "env" not in steps[3]  # replayed: the agent gets no model key, a fork's pull request runs the same
    assert "recordings/, committed beside the spec" in text
    assert "zizmor reports them as unpinned-uses" in text  # the moving tag, said as it is
    for line in text.splitlines():
        if re.match(r"\s*-?\s*uses: ", line) and not line.split("uses: ")[1].startswith("agentci/"):
            assert re.search(r"@[0-9a-f]{40} # v", line), line  # every other action pinned by commit

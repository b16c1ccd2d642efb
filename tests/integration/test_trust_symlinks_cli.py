"""No write through a linked `.agentci`, end to end: the real CLI and the action, a judge on a local provider.

With `.agentci` a symbolic link to a directory outside the working directory, evaluating a spec whose judge caches
its verdicts in `.agentci/judge-cache.json` stops with exit 2 naming the link, and nothing lands where it points.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers import hermetic_environment, run_cli

from agentci_action._util.errors import EXIT_ERROR
from agentci_action.github.action import main

KEY = "sk-ant-trust-symlinks-never-print-me-42"

SPEC = """\
agent: demo
judge_config:
  model: claude-haiku-4-5
  base_url: {url}
  max_attempts: 1
queries:
  - id: judged
    query: How do I reset my password?
    correctness:
      llm_judge:
        - template: actionable_steps
"""


@pytest.fixture
def project(tmp_path: Path, llm) -> Path:
    """A project with a judged query and its trace."""
    project = tmp_path / "project"
    (project / "traces").mkdir(parents=True)
    (project / "agentci_spec.yaml").write_text(SPEC.format(url=llm.anthropic_url), encoding="utf-8")
    trace = {"id": "judged", "final_answer": "Open Settings, then Reset."}
    (project / "traces" / "t.jsonl").write_text(json.dumps(trace) + "\n", encoding="utf-8")
    return project


@pytest.fixture
def linked_project(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(the project, its `.agentci` a link to a directory outside it; that directory)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".agentci").symlink_to(elsewhere, target_is_directory=True)
    return project, elsewhere


def run_action(project: Path) -> tuple[int, str]:
    """The action in process on a push to `project` (no pull request, so no GitHub call): (exit code, its log)."""
    (project / "event.json").write_text(json.dumps({"before": "b" * 40, "after": "a" * 40}))
    env = {
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(project / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_WORKSPACE": str(project),
        "GITHUB_STEP_SUMMARY": str(project / "summary.md"),
        "GITHUB_OUTPUT": str(project / "output.txt"),
        "INPUT_SPEC": "agentci_spec.yaml",
        "INPUT_TRACES": "traces/",
        "INPUT_ANTHROPIC-API-KEY": KEY,
        "INPUT_RESULTS-PATH": "agentci-results.json",
    }
    out = io.StringIO()
    return main(env, out), out.getvalue()


def test_agentci_test_refuses_a_linked_judge_cache_folder(linked_project):
    project, elsewhere = linked_project
    done = run_cli(
        "test",
        "--spec",
        "agentci_spec.yaml",
        "--traces",
        "traces/t.jsonl",
        cwd=project,
        env=hermetic_environment(ANTHROPIC_API_KEY=KEY),
    )
    assert done.returncode == EXIT_ERROR, done.stdout + done.stderr
    assert ".agentci is a symbolic link" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and KEY not in done.stdout + done.stderr
    assert list(elsewhere.iterdir()) == []  # no judge-cache.json, no temporary file


def test_the_action_refuses_a_linked_judge_cache_folder(linked_project, monkeypatch):
    project, elsewhere = linked_project
    monkeypatch.chdir(project)
    code, log = run_action(project)
    assert code == EXIT_ERROR
    assert "::error title=AgentCI::agentci: could not write the judge cache" in log
    assert ".agentci is a symbolic link" in log
    assert list(elsewhere.iterdir()) == []


def test_a_link_planted_as_the_html_report_fails_the_action(project, tmp_path, monkeypatch):
    """Not the warning an unwritable HTML report is: a link there was planted (exit 2), and is not followed."""
    monkeypatch.chdir(project)
    target = tmp_path / "elsewhere.html"
    (project / "agentci-results.html").symlink_to(target)
    code, log = run_action(project)
    assert code == EXIT_ERROR
    assert "::error title=AgentCI::agentci: could not write the HTML report" in log
    assert "agentci-results.html is a symbolic link" in log
    assert not target.exists() and (project / "agentci-results.json").is_file()

"""The PR comment lists the recordings the PR added, changed or removed against its base commit.

A temporary git repository holds the base commit; the working tree then re-records one run (its system prompt's
third line changed), removes one and adds one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import run_cli

from agentci_action.compare.base_ref import BaseRef
from agentci_action.compare.recording_changes import RecordingChange, recording_changes
from agentci_action.report.recording_phrases import console_lines, markdown_section
from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest, RecordedResponse, render


def recording(run: int, system: str, answer: str = "Shipped.") -> str:
    request = RecordedRequest(
        provider="openai",
        method="POST",
        path="/chat/completions",
        content={"body": {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": system}]}},
    )
    response = RecordedResponse(status=200, headers={}, content={"body": {"answer": answer}})
    return render("order-status", run, [RecordedCall(request=request, response=response)])


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "recordings" / "order-status"
    folder.mkdir(parents=True)
    (folder / "run-0.json").write_text(recording(0, "You are a support agent.\nBe brief.\nNever refund."))
    (folder / "run-1.json").write_text(recording(1, "You are a support agent."))
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "base")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_comment_lists_an_added_a_changed_and_a_removed_recording(repository: Path):
    folder = repository / "recordings" / "order-status"
    (folder / "run-0.json").write_text(recording(0, "You are a support agent.\nBe brief.\nRefund when asked."))
    (folder / "run-1.json").unlink()
    (folder / "run-2.json").write_text(recording(2, "You are a support agent."))
    changes = recording_changes(repository / "recordings", BaseRef("HEAD"))
    assert changes == [
        RecordingChange("order-status", "run-0", "changed", "call 1: system prompt line 3"),
        RecordingChange("order-status", "run-1", "removed"),
        RecordingChange("order-status", "run-2", "added"),
    ]
    section = markdown_section(changes)
    assert section.startswith("### Recordings changed in this PR\n\n1 added · 1 changed · 1 removed\n")
    assert "- order-status run-0 changed: call 1: system prompt line 3" in section
    assert console_lines(changes)[0] == "Recordings changed in this PR: 1 added · 1 changed · 1 removed"
    assert json.loads(json.dumps([c.as_json() for c in changes]))[1] == {
        "query": "order-status",
        "run": "run-1",
        "change": "removed",
        "detail": "",
    }


def test_an_answer_re_recorded_alone_is_named(repository: Path):
    folder = repository / "recordings" / "order-status"
    (folder / "run-1.json").write_text(recording(1, "You are a support agent.", answer="Refunded."))
    changes = recording_changes(repository / "recordings", BaseRef("HEAD"))
    assert changes == [RecordingChange("order-status", "run-1", "changed", "call 1: answer")]


def test_no_change_no_section(repository: Path):
    assert recording_changes(repository / "recordings", BaseRef("HEAD")) == []
    assert markdown_section([]) == "" and console_lines([]) == []


SPEC = """\
version: 1
agent: support
runner:
  command: "python agent.py"
  replay: {}
queries:
  - id: order-status
    query: "Where is my order?"
    correctness:
      expected_in_answer: ["shipped"]
"""


def test_agentci_test_against_the_base_commit_lists_them_in_markdown_console_and_json(repository: Path):
    (repository / "agentci_spec.yaml").write_text(SPEC)
    (repository / "traces").mkdir()
    (repository / "traces" / "order-status.json").write_text('{"id": "order-status", "final_answer": "It shipped."}\n')
    git(repository, "add", ".")
    git(repository, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "spec")
    folder = repository / "recordings" / "order-status"
    (folder / "run-0.json").write_text(recording(0, "You are a support agent.\nBe brief.\nRefund when asked."))
    (folder / "run-1.json").unlink()
    common = ("test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--baseline-ref", "HEAD")
    shown = run_cli(*common, "--format", "markdown", cwd=repository)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "### Recordings changed in this PR\n\n1 changed · 1 removed\n" in shown.stdout
    assert "- order-status run-0 changed: call 1: system prompt line 3" in shown.stdout
    console = run_cli(*common, cwd=repository)
    assert "Recordings changed in this PR: 1 changed · 1 removed" in console.stdout
    page = run_cli(*common, "--format", "html", cwd=repository).stdout  # the report the comment links to
    assert "<h2>Recordings changed in this PR</h2><p>1 changed · 1 removed</p>" in page
    assert "<li>order-status run-0 changed: call 1: system prompt line 3</li>" in page
    results = json.loads(run_cli(*common, "--format", "json", cwd=repository).stdout)
    assert results["recordings_changed"] == [
        {"query": "order-status", "run": "run-0", "change": "changed", "detail": "call 1: system prompt line 3"},
        {"query": "order-status", "run": "run-1", "change": "removed", "detail": ""},
    ]

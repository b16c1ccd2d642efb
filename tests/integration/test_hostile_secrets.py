"""Secrets never printed.

Every line of a multi-line secret input is masked, and no header, URL credential or request quoting one reaches the log,
the summary, the outputs, the comment or the results, whatever the exception.
"""

from __future__ import annotations

import io
import json

from fakes.github_server import FakeGitHub

from agentci_action._util.redaction import redact, secret_parts
from agentci_action.github.action import main as action_main

SPEC = """
agent: demo
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
"""
LINES = ("ghs_firstlineOfTheToken", "secondLineOfTheToken99")
TOKEN = "\n".join(LINES) + "\n"


def test_secret_parts_and_redact_cover_every_line_and_url_credentials():
    assert secret_parts(["abc\n  long-secret-line \n\nxyz1"]) == ["long-secret-line", "xyz1"]
    text = "Invalid header value b'token ghs_firstlineOfTheToken\\nsecondLineOfTheToken99' at https://bob:hunter2@h/x"
    assert redact(text, [TOKEN]) == "Invalid header value b'token ***\\n***' at https://***@h/x"


def everything(workspace) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in workspace.rglob("*") if p.is_file())


def test_a_multi_line_token_is_masked_on_every_line_and_never_printed(write, write_traces, tmp_path, monkeypatch):
    """requests refuses a header with a newline and quotes it in the exception: the comment warning must not."""
    write("spec.yaml", SPEC)
    write_traces("t.jsonl", [{"id": "math", "final_answer": "4"}])
    (tmp_path / "event.json").write_text(
        json.dumps({"pull_request": {"number": 7, "head": {"sha": "h" * 40}, "base": {"sha": "b" * 40}}})
    )
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with FakeGitHub() as github:
        code = action_main(
            {
                "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
                "GITHUB_REPOSITORY": "octo/agent",
                "GITHUB_WORKSPACE": str(tmp_path),
                "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
                "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
                "INPUT_SPEC": "spec.yaml",
                "INPUT_TRACES": "t.jsonl",
                "INPUT_GITHUB-TOKEN": TOKEN,
                "INPUT_GITHUB-API-URL": github.url,
                "INPUT_CHECK-RUN": "true",
            },
            out,
        )
    log = out.getvalue().splitlines()
    assert code == 0
    assert log[:2] == [f"::add-mask::{LINES[0]}", f"::add-mask::{LINES[1]}"]
    rest = "\n".join(log[2:]) + everything(tmp_path)
    assert all(line not in rest for line in LINES)
    assert any(line.startswith("::warning title=AgentCI::Could not post the PR comment") for line in log)
    assert json.loads((tmp_path / "agentci-results.json").read_text())["summary"]["passed"] == 1

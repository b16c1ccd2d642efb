"""A conversation whose turn 2 regresses is reported at turn 2 by `test`, `diff`, the action and the Python API alike.

The first diverged turn with its answers before and after, the failing turn first, the annotation on the turn's line.
Hostile turn text stays inert in every report.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from fakes.github_server import FakeGitHub
from helpers import hermetic_environment, run_cli

import agentci_action
from agentci_action.github.action import main as action_main
from integration.test_action import environment

SPEC = """\
agent: support
queries:
  - id: refund
    turns:
      - user: I want a refund.
        correctness: {expected_in_answer: [order number]}
      - user: It is order A-1234.
        correctness: {expected_in_answer: [A-1234]}
        path: {forbidden_tools: [delete_account]}
      - user: Thanks.
    correctness: {expected_in_answer: [days]}
"""
TURN_2_LINE = 7


def conversation(second_answer: str, second_tools: list[str]) -> dict:
    return {
        "id": "refund",
        "turns": [
            {"query": "I want a refund.", "final_answer": "What is your order number?"},
            {
                "query": "It is order A-1234.",
                "final_answer": second_answer,
                "tool_calls": [{"name": name} for name in second_tools],
            },
            {"query": "Thanks.", "final_answer": "The money arrives in 3-5 days."},
        ],
    }


V1 = conversation("Order A-1234 is refunded.", ["lookup_order", "issue_refund"])
V2 = conversation("I closed your account instead.", ["lookup_order", "delete_account"])


@pytest.fixture
def project(tmp_path, write, write_traces):
    write("agentci.yaml", SPEC)
    write_traces("baseline/v1.jsonl", [V1])
    write_traces("traces/v2.jsonl", [V2])
    spec = tmp_path / "agentci.yaml"
    for version, traces, forced in (("v1", "baseline/v1.jsonl", ()), ("v2", "traces/v2.jsonl", ("--force-save",))):
        done = run_cli("save", "--spec", spec, "--traces", tmp_path / traces, "--version", version, *forced)
        assert done.returncode == 0, done.stderr
    return tmp_path


def _assert_turn_2(diverged: dict) -> None:
    assert diverged["turn"] == 2 and diverged["line"] == TURN_2_LINE and diverged["user"] == "It is order A-1234."
    assert diverged["status"] == {"before": "pass", "after": "fail"}
    assert diverged["answer"] == {
        "before": "Order A-1234 is refunded.",
        "after": "I closed your account instead.",
        "split_before": None,
        "split_after": None,
    }
    assert diverged["route_after"] == ["lookup_order", "delete_account"]


def test_test_and_diff_name_turn_2(project):
    spec = project / "agentci.yaml"
    tested = run_cli("test", "--spec", spec, "--traces", project / "traces", "--baseline", "v1", "--format", "json")
    assert tested.returncode == 1, tested.stderr
    report = json.loads(tested.stdout)
    (result,) = report["results"]
    assert [t["status"] for t in result["turns"]] == ["pass", "fail", "pass"]
    (changed,) = report["diff"]["queries"]
    _assert_turn_2(changed["first_diverged_turn"])

    diffed = run_cli("diff", "--spec", spec, "--baseline", "v1", "--compare", "v2", "--format", "json")
    (changed,) = json.loads(diffed.stdout)["queries"]
    _assert_turn_2(changed["first_diverged_turn"])

    console = run_cli("diff", "--spec", "agentci.yaml", "--baseline", "v1", "--compare", "v2", cwd=project).stdout
    words = " ".join(console.replace("║", " ").split())  # the box's wrapping undone
    assert f"First diverged turn 2 (agentci.yaml:{TURN_2_LINE}): It is order A-1234." in words
    assert "Turn 2 before PASS · Order A-1234 is refunded. · tools: lookup_order, issue_refund" in words
    assert "Turn 2 after FAIL · I closed your account instead. · tools: lookup_order, delete_account" in words

    text = run_cli("test", "--spec", "agentci.yaml", "--traces", "traces", cwd=project).stdout
    turns = [line.strip() for line in text.splitlines() if line.strip().startswith("turn ")]
    assert turns[0].startswith(f"turn 2 ✗ FAIL  (agentci.yaml:{TURN_2_LINE})")  # the failing turn first
    assert [t.split()[1] for t in turns] == ["2", "1", "3"]


def test_the_python_api_names_turn_2(project, monkeypatch):
    monkeypatch.chdir(project)
    outcome = agentci_action.evaluate(agentci_action.Evaluation(spec="agentci.yaml", traces=["traces"], baseline="v1"))
    (result,) = outcome.run.results
    assert result.turns[1].status.value == "fail" and result.turns[1].line == TURN_2_LINE
    _assert_turn_2(outcome.diff.queries[0].first_diverged_turn.model_dump(mode="json"))


def test_the_action_annotates_turn_2_and_shows_it_in_the_comment(project, monkeypatch):
    monkeypatch.chdir(project)
    with FakeGitHub() as github:
        env = environment(project, github.url, INPUT_TRACES="traces/", **{"baseline-traces": "baseline/"})
        out = io.StringIO()
        assert action_main(env, out) == 1
        log = out.getvalue()
        assert f"::error file=agentci.yaml,line={TURN_2_LINE},title=AgentCI correctness%3A refund turn 2::" in log
        (comment,) = [c["body"] for c in github.comments("octo/agent", 7)]
        assert "turn 2 of 3: It is order A-1234." in comment
        assert "**First diverged at turn 2**" in comment
        assert "- Order A-1234 is refunded." in comment and "+ I closed your account instead." in comment
        assert github.state.violations == []


HOSTILE = "::error::pwned @octocat <img src=x onerror=alert(1)> ](javascript:x) ```"


def test_hostile_turn_text_stays_inert(tmp_path, write, write_traces):
    spec = write("agentci.yaml", SPEC.replace("I want a refund.", f"'{HOSTILE}'").replace("[order number]", "[zzz]"))
    hostile = conversation("ok", [])
    hostile["turns"][0] = {"query": HOSTILE, "final_answer": HOSTILE}
    write_traces("t.jsonl", [hostile])
    env = hermetic_environment(GITHUB_ACTIONS="true")
    github = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl", "--format", "github", env=env).stdout
    stop = re.search(r"^::stop-commands::(\w+)$", github, re.M)
    assert stop, github
    inside, _, outside = github.partition(f"::{stop.group(1)}::")
    assert "turn 1 ✗ FAIL" in inside and "::error::pwned @octocat" in inside  # shown, where commands are off
    assert "::error::pwned" not in outside  # the turn's text is printed only between the stop-commands markers
    assert "@octocat" not in outside.replace("%40", "")  # annotations carry the message escaped, never a command
    markdown = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl", "--format", "markdown").stdout
    assert "<img" not in markdown and "@octocat" not in markdown and "](javascript:" not in markdown
    assert "turn 1 of 3:" in markdown and "octocat" in markdown and "pwned" in markdown  # shown, made inert
    page = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl", "--format", "html").stdout
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_html_page_shows_the_turns_failing_first_and_the_first_diverged_turn(project):
    page = run_cli(
        "test", "--spec", "agentci.yaml", "--traces", "traces", "--baseline", "v1", "--format", "html", cwd=project
    ).stdout
    turns = page[page.index('class="turns"') :]
    assert turns.index("turn 2 · agentci.yaml:7") < turns.index("turn 1 · agentci.yaml:5")  # the failing first
    diverged = turns[turns.index("First diverged at turn 2 · agentci.yaml:7") :]
    assert "Order A-1234 is refunded." in diverged and "I closed your account instead." in diverged

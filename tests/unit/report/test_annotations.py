"""Workflow-command annotations: escaping, placement on the spec's lines, GitHub's per-step caps."""

from __future__ import annotations

import re

from helpers.results_builder import HOSTILE, layer, mixed_run, query, run

from agentci_action.report.file_annotations import (
    Annotation,
    annotations_for,
    cap,
    check_run_annotation,
    escape_data,
    escape_property,
    repo_path,
    stop_commands,
    workflow_command,
    workflow_commands,
)

COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::(.*)$")


def test_escaping_follows_the_runner_rules_percent_first():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_data("%0A") == "%250A"  # an already-escaped newline stays text
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_annotation_lands_on_the_query_line_with_escaped_properties():
    line = workflow_command(Annotation("error", "specs/a,b.yaml", 12, "AgentCI correctness: q:1", "bad\nthing"))
    assert line == "::error file=specs/a%2Cb.yaml,line=12,title=AgentCI correctness%3A q%3A1::bad%0Athing"


def test_hostile_agent_text_cannot_become_a_command():
    lines = workflow_commands(annotations_for(mixed_run()))
    for line in lines:
        assert "\n" not in line and "\r" not in line
        match = COMMAND.match(line)
        assert match, line
        properties = match.group(2) or ""
        assert "::" not in properties  # the data part starts at the first '::'
    hostile = next(line for line in lines if "prompt-injection" in line)
    assert hostile.startswith("::error file=agentci_spec.yaml,line=35,title=AgentCI correctness%3A prompt-injection::")
    assert "%250A" in hostile  # the literal %0A of the answer is escaped, not decoded by the runner


def test_levels_error_for_blocking_warning_for_the_rest_errors_first():
    found = annotations_for(mixed_run())
    assert [(a.level, a.line) for a in found] == [("error", 27), ("error", 35), ("warning", 11)]
    blocked = found[0]  # the refund made before the lookup: a path rule whose severity is fail
    assert blocked.title == "AgentCI path: refund-damaged"
    assert blocked.message.startswith("[expected_tool_calls: severity fail] expected_tool_calls not matched (strict)")
    assert "; warning: match mode 'strict' against the baseline failed" in blocked.message  # its own status
    not_blocking = run(query("q", 3, "fail", blocking=False, correctness=layer("fail", "wrong")))
    assert [a.level for a in annotations_for(not_blocking)] == ["warning"]
    errored = run(query("q", 3, "error", correctness=layer("error", "judge unreachable")))
    assert [a.level for a in annotations_for(errored)] == ["error"]


def test_caps_keep_ten_of_each_and_count_the_rest_in_one_notice():
    results = [query(f"f{i}", i + 1, "fail", correctness=layer("fail", "wrong")) for i in range(13)]
    results += [query(f"w{i}", 100 + i, "warn", path=layer("warn", "slow")) for i in range(11)]
    found = annotations_for(run(*results))
    shown, notice = cap(found)
    assert [a.level for a in shown] == ["error"] * 10 + ["warning"] * 10
    assert [a.line for a in shown[:10]] == list(range(1, 11))  # spec order within a level
    assert notice is not None and notice.level == "notice"
    assert notice.message.startswith("3 more errors and 1 more warning not shown")
    lines = workflow_commands(found)
    assert len(lines) == 21 and lines[-1].startswith("::notice title=AgentCI::3 more errors")


def test_no_notice_under_the_caps():
    assert cap(annotations_for(mixed_run()))[1] is None


def test_paths_are_relative_to_the_workspace():
    assert repo_path("/github/workspace/specs/a.yaml", "/github/workspace") == "specs/a.yaml"
    assert repo_path("./agentci.yaml", "/github/workspace") == "agentci.yaml"
    assert repo_path("/elsewhere/a.yaml", "/github/workspace") == "/elsewhere/a.yaml"


def test_stop_commands_use_a_fresh_token_and_close_it():
    first, second = stop_commands([HOSTILE]), stop_commands(["x"])
    token = first[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and first[1] == HOSTILE and first[2] == f"::{token}::"
    assert second[0] != first[0]


def test_check_run_annotation_shape():
    a = Annotation("error", "agentci.yaml", 4, "t", "m")
    assert check_run_annotation(a) == {
        "path": "agentci.yaml",
        "start_line": 4,
        "end_line": 4,
        "annotation_level": "failure",
        "title": "t",
        "message": "m",
    }


def test_skipped_correctness_checks_get_one_notice_on_the_spec_that_survives_the_caps():
    from agentci_action.engine.results import Check, LayerResult, Status

    skipped = LayerResult.from_checks(
        [Check(name="llm_judge", status=Status.SKIP, message="llm_judge skipped: no key\n::error::x")]
    )
    warnings = [query(f"w{i}", i + 1, "warn", path=layer("warn", "recall low")) for i in range(12)]
    found = annotations_for(run(query("judged", 40, "pass", correctness=skipped), *warnings))
    notices = [a for a in found if a.level == "notice"]
    assert [(a.file, a.line, a.title) for a in notices] == [("agentci_spec.yaml", 1, "AgentCI: not verified")]
    assert notices[0].message == "1 correctness check skipped, not passed: llm_judge skipped: no key⏎::error::x"
    lines = workflow_commands(found)
    assert sum(line.startswith("::warning ") for line in lines) == 10
    assert any(
        line.startswith("::notice file=agentci_spec.yaml,line=1,title=AgentCI%3A not verified::1 correctness")
        for line in lines
    )
    assert all(COMMAND.match(line) for line in lines)


def test_the_actions_own_warnings_come_first_and_count_in_the_cap():
    warnings = [query(f"w{i}", i + 1, "warn", path=layer("warn", "recall low")) for i in range(12)]
    own = [Annotation("warning", "", 0, "AgentCI", "Could not post the PR comment: GitHub answered 403.")]
    shown, notice = cap(annotations_for(run(*warnings)), own=own)
    assert [a.level for a in shown] == ["warning"] * 10 and shown[0] == own[0]
    assert [a.line for a in shown[1:]] == list(range(1, 10))
    assert notice.message.startswith("3 more warnings not shown")  # 12 found + 1 own − 10 shown

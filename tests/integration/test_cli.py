"""The real `agentci` command: reports, formats, exit codes 0/1/2, and no stack traces for user mistakes."""

import importlib.metadata
import io
import json
import re

import pytest
from helpers import ROOT, hermetic_environment, run_cli

import agentci_action
from agentci_action.engine.results import RunResult
from agentci_action.github.action import main as action_main
from agentci_action.report.markdown import render_summary

EXAMPLE = ROOT / "examples" / "rag"
SPEC = """
agent: demo
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
    path: {forbidden_tools: [shell]}
"""


def test_example_runs_and_prints_three_layers_per_query():
    result = run_cli("test", "--spec", EXAMPLE / "agentci_spec.yaml", "--traces", EXAMPLE / "traces")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "! WARN  weather-tokyo" in out and "tool calls: 11 > max 0" in out
    for layer in ("correctness", "path", "cost"):
        assert sum(line.startswith(f"    {layer:<11} ") for line in out.splitlines()) == 4
    report, diff = out.split("╔", 1)
    total = next(line for line in report.splitlines() if line.startswith(("PASS:", "WARN:", "FAIL:", "ERROR:")))
    assert total.startswith(
        "WARN: 4 queries · 4 passed (1 with a warning) · 0 failed"
    )  # the judge's own line may follow
    assert "AgentCI diff · rag-agent · v2-fixed → current" in diff  # the newest baseline that passed its precheck


def test_json_format_to_a_file(tmp_path, write, write_traces):
    spec = write("s.yaml", SPEC)
    traces = write_traces("t.jsonl", [{"id": "math", "final_answer": "5", "tool_calls": [{"name": "calc"}]}])
    out = tmp_path / "out" / "results.json"
    result = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json", "--output", out)
    assert result.returncode == 1 and result.stdout == ""
    data = json.loads(out.read_text())
    assert data["schema_version"] == "agentci.results/v2"
    assert data["agentci_version"] == agentci_action.__version__ == importlib.metadata.version("agentci-action")
    assert data["summary"]["failed"] == 1
    (query,) = data["results"]
    assert (query["id"], query["line"], query["status"]) == ("math", 3, "fail")
    assert query["correctness"]["messages"] == ["expected in answer but missing: '4'"]
    assert query["path"]["details"]["tool_calls"] == 1


def test_forbidden_tool_blocks_unless_fail_on_none(write, write_traces):
    spec = write("s.yaml", SPEC)
    traces = write_traces("t.jsonl", [{"id": "math", "final_answer": "4", "tool_calls": [{"name": "Shell"}]}])
    assert run_cli("test", "--spec", spec, "--traces", traces).returncode == 1
    assert run_cli("test", "--spec", spec, "--traces", traces, "--fail-on", "none").returncode == 0


def test_input_errors_exit_2_with_file_and_line(tmp_path, write, write_traces):
    spec = write("s.yaml", SPEC)
    missing_trace = run_cli("test", "--spec", spec, "--traces", write_traces("t.jsonl", [{"id": "other"}]))
    assert missing_trace.returncode == 2
    assert f"error: {spec}:3: no trace for query 'math'" in missing_trace.stderr
    bad_json = run_cli("test", "--spec", spec, "--traces", write("bad.json", '{"id": "math",\n "x": }'))
    assert bad_json.returncode == 2 and "bad.json:2: malformed JSON" in bad_json.stderr
    no_spec = run_cli("test", "--spec", tmp_path / "nope.yaml", "--traces", tmp_path)
    assert no_spec.returncode == 2 and "spec file not found" in no_spec.stderr
    bad_fail_on = run_cli("test", "--spec", spec, "--traces", tmp_path, "--fail-on", "speed")
    assert bad_fail_on.returncode == 2 and "unknown fail-on layer(s) speed" in bad_fail_on.stderr
    for result in (missing_trace, bad_json, no_spec, bad_fail_on):
        assert "Traceback" not in result.stderr


def test_baseline_traces_feed_similarity_and_multiplier(write, write_traces):
    spec = write(
        "s.yaml",
        """
        agent: demo
        queries:
          - id: q
            query: q
            path: {min_sequence_similarity: 0.9}
            cost: {max_cost_multiplier: 1.5}
    """,
    )
    current = write_traces("now.jsonl", [{"id": "q", "tool_calls": [{"name": "a"}], "total_cost_usd": 0.4}])
    baseline = write_traces(
        "base.jsonl", [{"id": "q", "tool_calls": [{"name": "a"}, {"name": "b"}], "total_cost_usd": 0.1}]
    )
    result = run_cli("test", "--spec", spec, "--traces", current, "--baseline-traces", baseline, "--format", "json")
    data = json.loads(result.stdout)["results"][0]
    assert data["path"]["details"]["sequence_similarity"] == pytest.approx(2 / 3)
    assert data["cost"]["details"]["cost_multiplier"] == 4.0
    assert data["status"] == "warn" and result.returncode == 0
    assert json.loads(result.stdout)["warnings"] == []


def test_baseline_traces_matching_no_query_are_warned_not_dropped(write, write_traces):
    spec = write("s.yaml", SPEC)
    current = write_traces("now.jsonl", [{"id": "math", "final_answer": "4"}])
    baseline = write_traces(
        "base.jsonl",
        [
            {"id": "math", "final_answer": "4"},
            {"id": "maths", "final_answer": "4"},
            {"query": "What is 3+3?", "final_answer": "6"},
        ],
    )
    expected = [
        f"baseline traces: {baseline}:2: trace with id 'maths' matches no query in the spec",
        f"baseline traces: {baseline}:3: trace with query 'What is 3+3?' matches no query in the spec",
    ]
    as_json = run_cli("test", "--spec", spec, "--traces", current, "--baseline-traces", baseline, "--format", "json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["warnings"] == expected
    console = run_cli("test", "--spec", spec, "--traces", current, "--baseline-traces", baseline)
    assert all(f"warning: {note}" in console.stdout for note in expected)


def test_untrusted_answer_text_is_inert_in_the_console(write, write_traces):
    spec = write("s.yaml", "agent: demo\nqueries:\n  - id: q\n    query: q\n    correctness: {exact_match: ok}\n")
    evil = "nope\n::error file=x::owned\x1b[31m"
    result = run_cli("test", "--spec", spec, "--traces", write_traces("t.jsonl", [{"id": "q", "final_answer": evil}]))
    assert result.returncode == 1
    assert not any(line.lstrip().startswith("::") for line in result.stdout.splitlines())
    assert "\x1b" not in result.stdout


def test_schema_command_prints_the_checked_in_schema():
    result = run_cli("schema")
    assert result.returncode == 0
    assert result.stdout == (ROOT / "agentci_action" / "spec" / "agentci_spec.schema.json").read_text()


def test_baseline_variants_through_the_command(write, write_traces):
    spec = write("s.yaml", SPEC.replace("path: {forbidden_tools: [shell]}", "path: {match_mode: strict}"))
    traces = write_traces(
        "t.jsonl", [{"id": "math", "final_answer": "4", "tool_calls": [{"name": "think"}, {"name": "calc"}]}]
    )
    routes = [[{"name": "calc"}], [{"name": "think"}, {"name": "calc"}]]
    variants = write_traces("b.jsonl", [{"id": "math", "final_answer": "4", "tool_calls": calls} for calls in routes])
    result = run_cli("test", "--spec", spec, "--traces", traces, "--baseline-traces", variants, "--format", "json")
    assert result.returncode == 0, result.stderr
    path = json.loads(result.stdout)["results"][0]["path"]
    assert (path["status"], path["details"]["baseline_variant"], path["details"]["baseline_variants"]) == ("pass", 1, 2)
    too_many = write_traces("b6.jsonl", [{"id": "math", "final_answer": "4", "tool_calls": routes[0]}] * 6)
    rejected = run_cli("test", "--spec", spec, "--traces", traces, "--baseline-traces", too_many)
    assert rejected.returncode == 2
    assert (
        f"error: {spec}:3: query 'math' has 6 baseline traces (variants); at most 5 are accepted, "
        f"the first extra one is {too_many}:6" in rejected.stderr
    )


def test_console_wraps_a_long_path_explanation_instead_of_cutting_it(write, write_traces):
    spec = write(
        "s.yaml",
        SPEC.replace(
            "path: {forbidden_tools: [shell]}",
            "path: {expected_tool_calls: [{name: search, arguments: {q: weather in Paris, limit: 3}}]}",
        ),
    )
    evil = "weather in Rome\u202e\n::error::x"
    traces = write_traces(
        "t.jsonl",
        [{"id": "math", "final_answer": "4", "tool_calls": [{"name": "search", "arguments": {"q": evil, "limit": 3}}]}],
    )
    result = run_cli("test", "--spec", spec, "--traces", traces)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("    path        warn  expected_tool_calls not matched")
    )
    block = [lines[start]] + [line for line in lines[start + 1 : start + 6] if line.startswith(" " * 24)]
    assert len(block) > 1 and all(len(line) <= 24 + 110 for line in block)
    assert " ".join(line.strip() for line in block).endswith(
        'arguments of search at step 0 vs expected_tool_calls[0]: q expected "weather in Paris", got "weather in Rome\\u202e\\n::error::x"'
    )
    assert not any(line.startswith("::error") for line in lines)


HOSTILE_SPEC = """
agent: demo
queries:
  - id: q
    query: "::error title=x::pwned"
    correctness: {exact_match: ok}
  - id: slow
    query: "slow one"
    cost: {max_llm_calls: 0}
"""
HOSTILE_TRACES = [
    {"id": "q", "final_answer": "nope\n   ::warning::evil"},
    {"id": "slow", "final_answer": "x", "llm_calls": [{"model": "m", "cost_usd": 0.1}]},
]


def without_tokens(lines: list[str]) -> list[str]:
    """The stop-commands token is random: name it TOKEN."""
    token = lines[0].removeprefix("::stop-commands::")
    return [line.replace(token, "TOKEN") for line in lines]


def test_github_format_prints_exactly_what_the_action_prints(tmp_path, monkeypatch, write, write_traces):
    write("agentci.yaml", HOSTILE_SPEC)
    write_traces("traces/t.jsonl", HOSTILE_TRACES)
    cli = run_cli("test", "--spec", "agentci.yaml", "--traces", "traces", "--format", "github", cwd=tmp_path)
    assert cli.returncode == 1, cli.stderr
    (tmp_path / "event.json").write_text("{}")
    env = {
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_WORKSPACE": str(tmp_path),
        "INPUT_SPEC": "agentci.yaml",
        "INPUT_TRACES": "traces",
        "INPUT_BASELINE": "none",
        "INPUT_ANNOTATIONS": "true",
        "INPUT_RESULTS-PATH": str(tmp_path / "r.json"),
    }
    log = io.StringIO()
    monkeypatch.chdir(tmp_path)  # the runner's working directory is the workspace
    assert action_main(env, log) == 1, log.getvalue()
    action_lines = log.getvalue().splitlines()
    start = next(i for i, line in enumerate(action_lines) if line.startswith("::stop-commands::"))
    assert without_tokens(cli.stdout.splitlines()) == without_tokens(action_lines[start:])
    printed = cli.stdout.splitlines()
    end = printed.index(printed[0].replace("stop-commands::", "") + "::")
    commands = printed[end + 1 :]
    assert commands[0].startswith("::error file=agentci.yaml,line=3,title=AgentCI correctness%3A q::")
    assert commands[1].startswith("::warning file=agentci.yaml,line=6,title=AgentCI cost%3A slow::")
    assert any("::error title=x::pwned" in line for line in printed[1:end]) and not any(
        "pwned" in line for line in commands
    )


def test_markdown_format_is_the_job_summary(write, write_traces):
    spec, traces = write("s.yaml", HOSTILE_SPEC), write_traces("t.jsonl", HOSTILE_TRACES)
    as_json = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json")
    markdown = run_cli("test", "--spec", spec, "--traces", traces, "--format", "markdown")
    assert markdown.returncode == 1 and markdown.stdout.startswith("## ❌ AgentCI: 1 of 2 queries failed")
    assert markdown.stdout == render_summary(RunResult.model_validate_json(as_json.stdout))


def test_console_under_github_actions_keeps_untrusted_text_inert(write, write_traces):
    spec, traces = write("s.yaml", HOSTILE_SPEC), write_traces("t.jsonl", HOSTILE_TRACES)
    local = run_cli("test", "--spec", spec, "--traces", traces)
    assert any(
        line.lstrip().startswith("::error title=x::pwned") for line in local.stdout.splitlines()
    )  # what the runner would obey
    in_actions = run_cli("test", "--spec", spec, "--traces", traces, env=hermetic_environment(GITHUB_ACTIONS="true"))
    lines = in_actions.stdout.splitlines()
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0]).group(1)
    assert lines[-1] == f"::{token}::" and lines[1:-1] == local.stdout.splitlines()
    to_file = run_cli(
        "test",
        "--spec",
        spec,
        "--traces",
        traces,
        "--output",
        write("out/r.txt", ""),
        env=hermetic_environment(GITHUB_ACTIONS="true"),
    )
    assert to_file.stdout == "" and "stop-commands" not in (spec.parent / "out" / "r.txt").read_text()

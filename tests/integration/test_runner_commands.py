"""`agentci test` and `save` without --traces run the agent first.

The Python API runs it too; all agree with `agentci run` followed by `agentci test --traces`.
"""

from __future__ import annotations

import json

import pytest
from helpers import hermetic_environment, run_cli

import agentci_action
from agentci_action.spec.loader import load_spec

AGENT = """
import json, os, sys
job = json.load(sys.stdin)
if job["id"] == "broken" and os.environ.get("BREAK") == "1":
    sys.exit("crashed")
answer = "4" if os.environ.get("MODE", "fixed") == "fixed" else "5"
print(json.dumps({"final_answer": answer, "tool_calls": [{"name": "calc"}]}))
"""

SPEC = """
agent: demo
runner:
  command: python agent.py
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
  - id: broken
    query: "And 2+2 again?"
    correctness: {expected_in_answer: ["4"]}
"""


def project(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    return spec


def results(stdout: str) -> dict:
    return {r["id"]: (r["status"], r["correctness"]["messages"]) for r in json.loads(stdout)["results"]}


def test_test_without_traces_runs_the_agent_and_agrees_with_run_then_test(tmp_path):
    spec = project(tmp_path)
    direct = run_cli("test", "--spec", spec, "--format", "json", "--record", tmp_path / "rec")
    assert direct.returncode == 0, direct.stderr
    assert "agentci run: 2 runs in" in direct.stderr
    assert sorted(p.name for p in (tmp_path / "rec").iterdir()) == ["broken.jsonl", "math.jsonl"]
    assert run_cli("run", "--spec", spec, "--output", tmp_path / "out").returncode == 0
    recorded = run_cli("test", "--spec", spec, "--traces", tmp_path / "out", "--format", "json")
    assert results(direct.stdout) == results(recorded.stdout) == {"math": ("pass", []), "broken": ("pass", [])}
    broken = run_cli("test", "--spec", spec, "--format", "json", env=hermetic_environment(MODE="broken"))
    assert broken.returncode == 1 and results(broken.stdout)["math"] == (
        "fail",
        ["expected in answer but missing: '4'"],
    )


def test_a_crash_is_an_error_of_its_query_and_the_others_are_evaluated(tmp_path):
    spec = project(tmp_path)
    result = run_cli("test", "--spec", spec, "--format", "json", env=hermetic_environment(BREAK="1"))
    assert result.returncode == 2
    assert results(result.stdout) == {
        "math": ("pass", []),
        "broken": ("error", ["query 'broken' run 0: exit code 1; stderr: crashed"]),
    }


def test_without_traces_or_runner_the_error_says_what_to_add(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("agent: demo\nqueries:\n  - query: q\n")
    for command in (("test",), ("save", "--version", "v1")):
        result = run_cli(*command, "--spec", spec)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "the spec has no `runner:`" in result.stderr and "--traces" in result.stderr


def test_save_without_traces_runs_the_agent_and_refuses_runs_without_a_trace(tmp_path):
    spec = project(tmp_path)
    result = run_cli("save", "--spec", spec, "--version", "v1")
    assert result.returncode == 0, result.stderr
    assert "saved baseline v1: 2 queries, 2 traces, precheck passed" in result.stdout
    result = run_cli("save", "--spec", spec, "--version", "v2", env=hermetic_environment(BREAK="1"))
    assert result.returncode == 2 and not (tmp_path / "baselines" / "v2.json").exists()
    assert "error: 1 run(s) of the agent gave no trace, so 'v2' was not saved" in result.stderr


def test_python_api_runs_a_callable_or_the_spec_runner(tmp_path):
    spec = load_spec(project(tmp_path))

    def agent(query, id, run):
        return {"final_answer": "4" if id == "math" else "no idea", "tool_calls": [{"name": "calc"}]}

    traces = agentci_action.run_agent(spec, agent, runs=2)
    assert [(t.id, t.run, t.final_answer) for t in traces] == [
        ("math", 0, "4"),
        ("math", 1, "4"),
        ("broken", 0, "no idea"),
        ("broken", 1, "no idea"),
    ]
    run = agentci_action.run_spec(spec, agent=agent)
    assert {r.id: r.status.value for r in run.results} == {"math": "pass", "broken": "fail"}
    assert run.model_dump(exclude={"results"}) == agentci_action.run_spec(spec, traces[::2]).model_dump(
        exclude={"results"}
    )
    by_runner = agentci_action.run_spec(spec)  # the spec's own command
    assert {r.id: r.status.value for r in by_runner.results} == {"math": "pass", "broken": "pass"}


def test_a_lone_surrogate_in_an_agent_answer_is_written_as_u_fffd(tmp_path):
    """An agent's answer cut mid-emoji (valid JSON, a lone surrogate) is recorded, not a crash.

    The trace file is valid UTF-8 JSON with U+FFFD where the surrogate was, as every other output writes it.
    """
    spec = load_spec(project(tmp_path))

    def agent(query, id, run):
        return {"final_answer": "4 \ud83d", "tool_calls": [{"name": "calc"}]}

    traces = agentci_action.run_agent(spec, agent, output=tmp_path / "recorded")
    assert [t.final_answer for t in traces] == ["4 \ud83d", "4 \ud83d"]
    record = json.loads((tmp_path / "recorded" / "math.jsonl").read_bytes().decode("utf-8"))
    assert record["final_answer"] == "4 \ufffd"


# runner.inherit_env: an allow-list of the environment the agent inherits (default: all of it).

ENV_AGENT = """
import json, os, sys
json.load(sys.stdin)
print(json.dumps({"final_answer": " ".join(sorted(os.environ)), "tool_calls": []}))
"""
ENV_WORKER = """
import os

def answer(query):
    return {"final_answer": " ".join(sorted(os.environ))}
"""


def seen_by_the_agent(tmp_path, runner: str, inherit: str) -> set[str]:
    (tmp_path / "agent.py").write_text(ENV_AGENT)
    (tmp_path / "worker_agent.py").write_text(ENV_WORKER)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"agent: demo\nrunner:\n  {runner}\n  env: {{GIVEN: 'yes'}}\n{inherit}queries:\n  - {{id: q, query: q}}\n"
    )
    env = hermetic_environment(KEEP_ME="1", SECRET_TOKEN="s3cr3t-value", GITHUB_TOKEN="ghs_x")
    done = run_cli("run", "--spec", spec, "--output", tmp_path / "out", env=env)
    assert done.returncode == 0, done.stderr
    return set(json.loads((tmp_path / "out" / "q.jsonl").read_text())["final_answer"].split())


def test_by_default_the_agent_inherits_the_whole_environment_but_the_runner_s_tokens(tmp_path):
    seen = seen_by_the_agent(tmp_path, "command: python agent.py", "")
    assert {"KEEP_ME", "SECRET_TOKEN", "GIVEN", "AGENTCI_QUERY_ID"} <= seen
    assert "GITHUB_TOKEN" not in seen  # withheld unless inherit_env names it or runner.env sets it


@pytest.mark.parametrize("runner", ["command: python agent.py", "python: worker_agent:answer"])
def test_inherit_env_passes_only_what_it_names_then_env_and_agentci_s_own(tmp_path, runner):
    seen = seen_by_the_agent(tmp_path, runner, "  inherit_env: [PATH, 'KEEP_*']\n")
    assert "KEEP_ME" in seen and "GIVEN" in seen and "PATH" in seen
    assert not {"SECRET_TOKEN", "GITHUB_TOKEN", "HOME"} & seen
    if runner.startswith("command"):
        assert "AGENTCI_QUERY_ID" in seen and "AGENTCI_TRACE_FILE" in seen


def test_without_path_the_program_is_not_found_and_the_error_says_why(tmp_path):
    (tmp_path / "spec.yaml").write_text(
        "agent: demo\nrunner:\n  command: python agent.py\n  inherit_env: [HOME]\nqueries:\n  - {id: q, query: q}\n"
    )
    done = run_cli("run", "--spec", tmp_path / "spec.yaml", "--output", tmp_path / "out")
    assert done.returncode == 2 and "(runner.inherit_env does not pass PATH on)" in done.stderr, done.stderr


def test_an_inherit_env_entry_that_is_no_variable_name_is_an_error_at_its_line(tmp_path):
    (tmp_path / "spec.yaml").write_text(
        "agent: demo\nrunner:\n  command: python agent.py\n  inherit_env: [PATH, 'A=B']\nqueries:\n  - {id: q, query: q}\n"
    )
    done = run_cli("validate", tmp_path / "spec.yaml")
    assert done.returncode != 0 and "spec.yaml:4" in done.stderr and "inherit_env 'A=B'" in done.stderr, done.stderr

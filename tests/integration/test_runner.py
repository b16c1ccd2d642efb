"""`agentci run`: the runner block, the command and python runners, retries, timeouts, trace files, and more.

The spec's runner block, the command and python runners, retries, timeouts, the trace files, --resume, interruption,
progress and secrets. Agents here are small real programs run as the runner runs them.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import hermetic_environment, run_cli

from agentci_action._util.errors import SpecError
from agentci_action._util.progress import Progress, ProgressOutput
from agentci_action.run import RunOptions, RunSetup, run_agent
from agentci_action.run.secrets import Masker
from agentci_action.spec.loader import load_spec

# A configurable agent: reads the query on stdin and behaves as the query's id says.
AGENT = r"""
import json, os, sys, time, subprocess
job = json.load(sys.stdin)
qid = job["id"]
count = os.path.join(os.environ.get("COUNT_DIR", "."), qid + ".count")
n = int(open(count).read()) + 1 if os.path.exists(count) else 1
open(count, "w").write(str(n))
answer = {"final_answer": "answer: " + job["query"], "tool_calls": [{"name": "search", "arguments": {"q": job["query"]}}],
          "llm_calls": [{"model": "gpt-4o", "input_tokens": 100, "output_tokens": 20}]}
print("log: starting", qid)
if qid == "echo":
    answer["final_answer"] = json.dumps({"stdin": job, "env": {k: os.environ.get(k) for k in
        ("AGENTCI_QUERY_ID", "AGENTCI_QUERY", "AGENTCI_RUN", "EXTRA")}, "trace_file": bool(os.environ.get("AGENTCI_TRACE_FILE"))})
elif qid == "crash":
    print("Traceback (most recent call last):\nValueError: the agent broke", file=sys.stderr)
    sys.exit(3)
elif qid == "flaky" and n < 2:
    sys.exit(75)
elif qid == "ratelimit":
    print(json.dumps({"error": {"type": "rate_limit_error", "message": "Rate limit exceeded"}}))
    sys.exit(0)
elif qid == "refused":
    print(json.dumps({"error": "invalid tool configuration"}))
    sys.exit(0)
elif qid == "nojson":
    print("just some logs\nand no trace at all")
    sys.exit(0)
elif qid == "notrace":
    print(json.dumps([1, 2, 3]))
    sys.exit(0)
elif qid == "file":
    json.dump({"final_answer": "from the file"}, open(os.environ["AGENTCI_TRACE_FILE"], "w"))
elif qid == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    open(os.path.join(os.environ["COUNT_DIR"], "child.pid"), "w").write(str(child.pid))
    time.sleep(300)
elif qid == "slow":
    time.sleep(float(os.environ.get("SLOW_S", "0.5")))
elif qid == "wait":
    while not os.path.exists(os.path.join(os.environ["COUNT_DIR"], "release")):
        time.sleep(0.02)
elif qid == "secret":
    print("the key is", os.environ["MY_TOKEN"], file=sys.stderr)
    answer["final_answer"] = "leaking " + os.environ["MY_TOKEN"] + " and " + os.environ["SERVICE_API_KEY"]
    if os.environ.get("CRASH_SECRET"):
        sys.exit(1)
print(json.dumps(answer, indent=2))
print("log: done")
"""


def make_spec(tmp_path: Path, ids: list[str], runner: str = "", extra: str = "") -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    queries = "".join(f"  - id: {qid}\n    query: question {qid}\n    tags: [{qid}]\n" for qid in ids)
    runner = runner or "command: python agent.py\n  retries: 2\n  backoff_s: 0.01\n  timeout_s: 20\n"
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"agent: demo\nrunner:\n  {runner}{extra}queries:\n{queries}")
    return spec


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def environ(tmp_path):
    counts = tmp_path / "counts"
    counts.mkdir()
    return hermetic_environment(COUNT_DIR=str(counts), EXTRA="x")


def run(tmp_path, spec, environ, **options):
    output = tmp_path / "out"
    return run_agent(
        load_spec(spec),
        RunOptions(output, **options),
        RunSetup(
            environ=environ, progress=Progress("agentci run", 1, "run", output=ProgressOutput(stream=io.StringIO()))
        ),
    ), output


def attempts(environ, qid: str) -> int:
    return int((Path(environ["COUNT_DIR"]) / f"{qid}.count").read_text())


# The spec block


@pytest.mark.parametrize(
    "runner, line, fragment",
    [
        ("command: a\n  python: m:f\n", 2, "exactly one of `command`"),
        ("cwd: .\n", 2, "exactly one of `command`"),
        ("command: '  '\n", 3, "command is empty"),
        ('command: "python \'unclosed"\n', 3, "cannot be split into arguments"),
        ("python: not-a-target\n", 3, "String should match pattern"),
        ("command: a\n  env: {N: 3}\n", 4, "env 'N': quote the value"),
        ("command: a\n  workerz: 3\n", 4, "did you mean 'workers'"),
        ("command: a\n  trace_format: xml\n", 4, "unknown trace_format 'xml'"),
        ("command: a\n  timeout_s: 0\n", 4, "greater than 0"),
    ],
)
def test_runner_block_mistakes_are_errors_at_their_line(tmp_path, runner, line, fragment):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"agent: demo\nrunner:\n  {runner}queries:\n  - query: q\n")
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    (problem,) = caught.value.problems
    assert fragment in problem.message and problem.line == line, problem


def test_command_as_a_list_and_its_lines_are_remembered(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "agent: demo\nrunner:\n  cwd: sub\n  command: [python, agent.py, --mode, 'a b']\nqueries:\n  - query: q\n"
    )
    runner = load_spec(spec).runner
    assert runner.argv == ["python", "agent.py", "--mode", "a b"]
    assert runner.where("command") == (str(spec), 4) and runner.where("cwd") == (str(spec), 3)


# The command runner


def test_query_reaches_the_program_on_stdin_and_in_the_environment(tmp_path, environ):
    spec = make_spec(tmp_path, ["echo"])
    outcome, output = run(tmp_path, spec, environ)
    (trace,) = lines(output / "echo.jsonl")
    seen = json.loads(trace["final_answer"])
    assert seen["stdin"] == {
        "id": "echo",
        "query": "question echo",
        "run": 0,
        "tags": ["echo"],
        "metadata": {"agent": "demo"},
    }
    assert seen["env"] == {
        "AGENTCI_QUERY_ID": "echo",
        "AGENTCI_QUERY": "question echo",
        "AGENTCI_RUN": "0",
        "EXTRA": "x",
    }
    assert seen["trace_file"] is True
    assert (trace["id"], trace["query"], trace["run"]) == ("echo", "question echo", 0)
    assert trace["total_tokens"] == 120 and trace["total_cost_usd"] > 0  # priced like a recorded trace
    assert outcome.ok and outcome.ran == 1


def test_last_json_document_on_stdout_wins_over_logs_and_the_trace_file_over_stdout(tmp_path, environ):
    spec = make_spec(tmp_path, ["ok", "file"])
    outcome, output = run(tmp_path, spec, environ)
    assert lines(output / "ok.jsonl")[0]["final_answer"] == "answer: question ok"  # logs before and after ignored
    assert lines(output / "file.jsonl")[0]["final_answer"] == "from the file"
    assert outcome.ok


@pytest.mark.parametrize(
    "qid, message",
    [
        ("nojson", "printed no JSON document on stdout (3 lines, the last: 'and no trace at all')"),
        ("notrace", "returned JSON that is not a trace: unrecognised trace format; known: "),
        ("refused", "the agent reported an error instead of a trace: invalid tool configuration"),
        ("crash", "exit code 3; stderr: Traceback (most recent call last): | ValueError: the agent broke"),
    ],
)
def test_an_agent_that_fails_is_an_error_for_its_query_not_retried(tmp_path, environ, qid, message):
    spec = make_spec(tmp_path, [qid, "ok"])
    outcome, output = run(tmp_path, spec, environ)
    (record,) = lines(output / f"{qid}.jsonl")
    assert record["metadata"]["agentci_error"].startswith(f"query {qid!r} run 0: ")
    assert message in record["metadata"]["agentci_error"]
    assert attempts(environ, qid) == 1 and (outcome.failed, outcome.infra) == (1, 0)
    assert lines(output / "ok.jsonl")[0]["final_answer"] == "answer: question ok"  # the others still run


def test_infrastructure_failures_are_retried_then_labelled_infra(tmp_path, environ):
    spec = make_spec(tmp_path, ["flaky", "ratelimit"])
    outcome, output = run(tmp_path, spec, environ)
    assert attempts(environ, "flaky") == 2 and lines(output / "flaky.jsonl")[0]["final_answer"].startswith("answer")
    assert attempts(environ, "ratelimit") == 3  # retries: 2
    error = lines(output / "ratelimit.jsonl")[0]["metadata"]["agentci_error"]
    assert error.startswith("[INFRA] query 'ratelimit' run 0: the agent reported a transient error:")
    assert error.endswith("(3 attempts)") and "Rate limit exceeded" in error
    assert (outcome.failed, outcome.infra) == (0, 1)


def test_timeout_kills_the_process_group_and_leaves_no_child(tmp_path, environ):
    spec = make_spec(tmp_path, ["hang"], runner="command: python agent.py\n  retries: 0\n  timeout_s: 1\n")
    started = time.monotonic()
    _outcome, output = run(tmp_path, spec, environ)
    assert time.monotonic() - started < 8
    error = lines(output / "hang.jsonl")[0]["metadata"]["agentci_error"]
    assert (
        error
        == "[INFRA] query 'hang' run 0: timed out after 1 s (runner.timeout_s); killed with its process group (1 attempt)"
    )
    child = int((Path(environ["COUNT_DIR"]) / "child.pid").read_text())
    time.sleep(0.2)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_missing_program_is_a_spec_error_at_the_command_line(tmp_path):
    spec = make_spec(tmp_path, ["ok"], runner="command: no-such-agent-program --x\n")
    result = run_cli("run", "--spec", spec, "--output", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {spec}:3: runner.command: program 'no-such-agent-program' not found on PATH: install it, or give its path\n"
    )
    relative = make_spec(tmp_path, ["ok"], runner="command: ./bin/agent\n")
    result = run_cli("run", "--spec", relative, "--output", tmp_path / "out")
    assert f"runner.command: program './bin/agent' not found (relative to {tmp_path})" in result.stderr


def test_spec_without_runner_says_how_to_add_one(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("agent: demo\nqueries:\n  - query: q\n")
    result = run_cli("run", "--spec", spec, "--output", tmp_path / "out")
    assert result.returncode == 2 and "the spec has no `runner:`" in result.stderr and "Traceback" not in result.stderr


def test_workers_run_in_parallel_and_repeated_runs_fill_one_file_per_query(tmp_path, environ):
    spec = make_spec(tmp_path, ["slow", "ok"], runner="command: python agent.py\n  workers: 6\n")
    started = time.monotonic()
    outcome, output = run(tmp_path, spec, {**environ, "SLOW_S": "2"}, runs=3)
    elapsed = time.monotonic() - started
    assert [t["run"] for t in lines(output / "slow.jsonl")] == [0, 1, 2]
    assert [t["run"] for t in lines(output / "ok.jsonl")] == [0, 1, 2]
    assert outcome.ran == 6 and elapsed < 5  # three 2 s runs at once (6 s one after another)
    assert sorted(p.name for p in output.iterdir()) == ["ok.jsonl", "slow.jsonl"]  # no temporary files left


def test_each_trace_is_on_disk_as_soon_as_its_run_ends(tmp_path, environ):
    spec = make_spec(tmp_path, ["ok", "wait"], runner="command: python agent.py\n  workers: 2\n")
    done = {}
    worker = threading.Thread(target=lambda: done.setdefault("run", run(tmp_path, spec, environ)))
    worker.start()
    deadline = time.monotonic() + 10
    while not (tmp_path / "out" / "ok.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lines(tmp_path / "out" / "ok.jsonl")[0]["id"] == "ok" and not (tmp_path / "out" / "wait.jsonl").exists()
    (Path(environ["COUNT_DIR"]) / "release").write_text("")
    worker.join(10)
    assert done["run"][0].ok


def test_resume_runs_only_what_is_missing_or_failed(tmp_path, environ):
    spec = make_spec(tmp_path, ["ok", "flaky"], runner="command: python agent.py\n  retries: 0\n  workers: 1\n")
    first, output = run(tmp_path, spec, environ, runs=2)
    assert first.infra == 1  # flaky's first attempt (exit 75) is not retried with retries: 0
    second, _ = run(tmp_path, spec, environ, runs=3, resume=True)
    assert (second.ran, second.resumed, second.infra) == (3, 3, 0)  # the failed flaky run again, and run 2 of both
    assert attempts(environ, "ok") == 3 and attempts(environ, "flaky") == 4
    assert [t["run"] for t in lines(output / "flaky.jsonl")] == [0, 1, 2]
    assert not any("agentci_error" in t["metadata"] for t in lines(output / "flaky.jsonl"))
    fresh, _ = run(tmp_path, spec, environ, runs=1)  # without --resume the old files are replaced
    assert [t["run"] for t in lines(output / "ok.jsonl")] == [0] and fresh.resumed == 0


def test_cli_exit_codes_selection_and_summary(tmp_path, environ):
    spec = make_spec(tmp_path, ["ok", "crash", "ratelimit"])
    out = tmp_path / "out"
    result = run_cli("run", "--spec", spec, "--output", out, "--tags", "ok", env=environ)
    assert result.returncode == 0 and sorted(p.name for p in out.iterdir()) == ["ok.jsonl"]
    assert "agentci run: 1 run in " in result.stderr and "0 failed · 0 infra errors · agent tokens 120" in result.stderr
    result = run_cli("run", "--spec", spec, "--output", out, "--tags", "ok,crash", env=environ)
    assert result.returncode == 1 and "error: query 'crash' run 0: exit code 3" in result.stderr
    result = run_cli("run", "--spec", spec, "--output", out, env=environ)
    assert result.returncode == 2 and "error: [INFRA] query 'ratelimit' run 0" in result.stderr
    assert "1 failed · 1 infra error ·" in result.stderr
    for i in (1, 2):
        run_cli("run", "--spec", spec, "--output", tmp_path / f"s{i}", "--shard", f"{i}/2", env=environ)
    shards = [sorted(p.name for p in (tmp_path / f"s{i}").iterdir()) for i in (1, 2)]
    assert sorted(shards[0] + shards[1]) == ["crash.jsonl", "ok.jsonl", "ratelimit.jsonl"] and all(shards)
    assert run_cli("run", "--spec", spec, "--output", out, "--timeout", "0").returncode == 2


def test_evaluating_the_traces_makes_a_failed_run_an_error_of_its_query(tmp_path, environ):
    spec = make_spec(tmp_path, ["ok", "crash"])
    run_cli("run", "--spec", spec, "--output", tmp_path / "out", env=environ)
    result = run_cli("test", "--spec", spec, "--traces", tmp_path / "out", "--format", "json", env=environ)
    assert result.returncode == 2
    by_id = {r["id"]: r for r in json.loads(result.stdout)["results"]}
    assert by_id["ok"]["status"] == "pass" and by_id["crash"]["status"] == "error"
    assert by_id["crash"]["correctness"]["messages"] == [
        "query 'crash' run 0: exit code 3; stderr: Traceback (most recent call last): | ValueError: the agent broke"
    ]
    assert by_id["crash"]["path"]["status"] == "skip"


def test_sigterm_keeps_finished_traces_and_kills_running_agents(tmp_path, environ):
    spec = make_spec(tmp_path, ["ok", "hang"], runner="command: python agent.py\n  workers: 2\n")
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentci_action", "run", "--spec", str(spec), "--output", str(out)],
        env=environ,
        stderr=subprocess.PIPE,
        text=True,
    )
    pid_file = Path(environ["COUNT_DIR"]) / "child.pid"
    deadline = time.monotonic() + 20
    while not ((out / "ok.jsonl").exists() and pid_file.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 2
    assert lines(out / "ok.jsonl")[0]["id"] == "ok" and sorted(p.name for p in out.iterdir()) == ["ok.jsonl"]
    time.sleep(0.3)
    assert not _alive(int(pid_file.read_text()))
    assert "Traceback" not in process.stderr.read()


# Secrets


def test_secrets_never_reach_traces_errors_or_output(tmp_path, environ):
    runner = "command: python agent.py\n  env: {MY_TOKEN: tok-1234567890, MODE: short}\n"
    spec = make_spec(tmp_path, ["secret"], runner=runner)
    environ = {**environ, "SERVICE_API_KEY": "sk-abcdefghijkl"}
    out = tmp_path / "out"
    result = run_cli("run", "--spec", spec, "--output", out, env=environ)
    assert result.returncode == 0
    text = (out / "secret.jsonl").read_text()
    assert "leaking *** and ***" in text and "tok-1234567890" not in text and "sk-abcdefghijkl" not in text
    result = run_cli("run", "--spec", spec, "--output", out, env={**environ, "CRASH_SECRET": "1"})
    assert result.returncode == 1 and "stderr: the key is ***" in result.stderr
    for written in (result.stdout, result.stderr, (out / "secret.jsonl").read_text()):
        assert "tok-1234567890" not in written and "sk-abcdefghijkl" not in written


def test_masker_masks_json_escaped_values_and_leaves_short_ones():
    mask = Masker(['pa"ss\\word-long', "short"])
    assert mask('{"a": "pa\\"ss\\\\word-long"} short') == '{"a": "***"} short'


# The python runner

PY_AGENT = """
import asyncio, os

def answer(query, id, run):
    if id == "raise":
        raise ValueError("the tool exploded")
    if id == "none":
        return None
    return {"final_answer": f"{query} #{run} {os.environ.get('PY_MODE', '-')}", "tool_calls": [{"name": "lookup"}]}

async def answer_async(query, **kwargs):
    await asyncio.sleep(0.01)
    return {"final_answer": "async " + kwargs["id"]}

class RateLimitError(Exception):
    pass

def limited(query):
    raise RateLimitError("429 too many requests")
"""


@pytest.mark.parametrize("target", ["agent_py:answer", "agent_py:answer_async"])
def test_python_runner_calls_a_sync_or_async_function(tmp_path, environ, target):
    (tmp_path / "agent_py.py").write_text(PY_AGENT)
    spec = make_spec(tmp_path, ["ok"], runner=f"python: {target}\n  env: {{PY_MODE: fixed}}\n")
    _outcome, output = run(tmp_path, spec, environ, runs=2)
    answers = [t["final_answer"] for t in lines(output / "ok.jsonl")]
    assert answers == (
        ["question ok #0 fixed", "question ok #1 fixed"] if target.endswith(":answer") else ["async ok"] * 2
    )
    assert "PY_MODE" not in os.environ  # set only while the agent runs


@pytest.mark.parametrize(
    "qid, target, message",
    [
        ("raise", "agent_py:answer", "query 'raise' run 0: raised ValueError: the tool exploded (at agent_py.py:6)"),
        ("none", "agent_py:answer", "the function returned NoneType, not a trace"),
        ("ok", "agent_py:limited", "[INFRA] query 'ok' run 0: raised RateLimitError: 429 too many requests"),
    ],
)
def test_python_runner_failures(tmp_path, environ, qid, target, message):
    (tmp_path / "agent_py.py").write_text(PY_AGENT)
    spec = make_spec(tmp_path, [qid], runner=f"python: {target}\n  retries: 1\n  backoff_s: 0\n")
    _, output = run(tmp_path, spec, environ)
    assert message in lines(output / f"{qid}.jsonl")[0]["metadata"]["agentci_error"]


def test_python_module_that_does_not_import_is_a_spec_error(tmp_path):
    (tmp_path / "broken_mod.py").write_text("import no_such_dependency_xyz\n")
    spec = make_spec(tmp_path, ["ok"], runner="python: broken_mod:run\n")
    result = run_cli("run", "--spec", spec, "--output", tmp_path / "out")
    assert result.returncode == 2 and result.stderr == (
        f"error: {spec}:3: runner.python: module 'broken_mod' does not import (from {tmp_path}): "
        "ModuleNotFoundError: No module named 'no_such_dependency_xyz'\n"
    )


def test_an_output_that_cannot_be_written_is_a_one_line_error(tmp_path):
    spec = make_spec(tmp_path, ["ok"])
    (tmp_path / "taken").write_text("a file, not a directory")
    result = run_cli("run", "--spec", spec, "--output", tmp_path / "taken")
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: could not create the trace directory {tmp_path / 'taken'}: ")
    assert "Traceback" not in result.stderr

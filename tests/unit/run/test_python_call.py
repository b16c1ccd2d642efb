"""The `python:` runner.

The spec's function runs in worker processes, so a run that overruns its timeout is killed with everything it started
while the other runs go on; and a function may return an OpenAI Agents SDK `RunResult`, read through the SDK's own
tracing (a real Agents SDK agent against the local scripted OpenAI server).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fakes.scripted_openai import ScriptedOpenAIServer, Turn
from helpers import ROOT, hermetic_environment
from integration.test_runner import _alive, lines

from agentci_action import load_spec
from agentci_action._util.progress import Progress, ProgressOutput
from agentci_action.run import RunOptions, RunSetup, run_agent
from agentci_action.trace.tokenizer import tokenizer_for

HANGING = """
import os, subprocess, time
from pathlib import Path

WORKER = os.getpid()

def answer(query, id, run):
    if id == "hang":
        child = subprocess.Popen(["sleep", "300"])
        Path("pids").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(300)
    if id == "exit":
        os._exit(3)
    return {"final_answer": f"{query} #{run}", "metadata": {"worker": os.getpid(), "imported_in": WORKER}}

async def answer_async(query, id):
    if id == "hang":
        Path("pids").write_text(f"{os.getpid()} {os.getpid()}")
        while True:  # never awaits: cancelling the task could not stop it, killing the process does
            time.sleep(0.05)
    return {"final_answer": "async " + id}
"""


def spec_for(tmp_path: Path, ids: list[str], runner: str) -> Path:
    (tmp_path / "hanging.py").write_text(HANGING)
    queries = "".join(f"  - id: {qid}\n    query: question {qid}\n" for qid in ids)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"agent: demo\nrunner:\n  {runner}queries:\n{queries}")
    return spec


def run(spec: Path, environ: dict[str, str], **options):
    output = spec.parent / "out"
    progress = Progress("agentci run", 1, "run", output=ProgressOutput(stream=io.StringIO()))
    return run_agent(
        load_spec(spec), RunOptions(output, **options), RunSetup(environ=environ, progress=progress)
    ), output


def worker_processes(marker: str) -> list[int]:
    """Live processes whose command line names the worker script and `marker` (the module:function)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(a.endswith(b"run/worker.py") for a in argv) and marker.encode() in argv and _alive(int(proc.name)):
                found.append(int(proc.name))
    return found


@pytest.mark.parametrize("target", ["hanging:answer", "hanging:answer_async"])
def test_a_function_that_overruns_is_killed_with_what_it_started_and_the_other_runs_are_right(tmp_path, target):
    spec = spec_for(tmp_path, ["hang", "a", "b"], f"python: {target}\n  timeout_s: 2\n  retries: 0\n  workers: 2\n")
    threads = set(threading.enumerate())  # others' threads may end meanwhile (a server's keep-alive handlers)
    started = time.monotonic()
    outcome, output = run(spec, hermetic_environment())
    assert time.monotonic() - started < 15
    error = lines(output / "hang.jsonl")[0]["metadata"]["agentci_error"]
    assert error == (
        "[INFRA] query 'hang' run 0: timed out after 2 s (runner.timeout_s); its worker process was killed with its "
        "group (1 attempt)"
    )
    expected = ["question a #0", "question b #0"] if target.endswith(":answer") else ["async a", "async b"]
    assert [lines(output / f"{q}.jsonl")[0]["final_answer"] for q in ("a", "b")] == expected
    assert (outcome.infra, outcome.failed) == (1, 0)
    worker, child = map(int, (tmp_path / "pids").read_text().split())
    time.sleep(0.2)
    assert not _alive(worker) and not _alive(child)
    assert worker_processes(target) == []  # the idle workers were stopped too
    assert set(threading.enumerate()) <= threads  # no thread left behind in this process


def test_sigterm_kills_the_workers_and_what_they_started_and_keeps_finished_traces(tmp_path):
    spec = spec_for(tmp_path, ["a", "hang"], "python: hanging:answer\n  workers: 2\n  timeout_s: 60\n")
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentci_action", "run", "--spec", str(spec), "--output", str(out)],
        env=hermetic_environment(),
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not ((out / "a.jsonl").exists() and (tmp_path / "pids").exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 2
    assert sorted(p.name for p in out.iterdir()) == ["a.jsonl"]
    worker, child = map(int, (tmp_path / "pids").read_text().split())
    time.sleep(0.3)
    assert not _alive(worker) and not _alive(child) and worker_processes("hanging:answer") == []
    assert "Traceback" not in process.stderr.read()


def test_workers_import_the_module_once_and_serve_many_runs(tmp_path):
    spec = spec_for(tmp_path, ["a", "b", "c"], "python: hanging:answer\n  workers: 1\n")
    _, output = run(spec, hermetic_environment(), runs=3)
    traces = [t for q in ("a", "b", "c") for t in lines(output / f"{q}.jsonl")]
    assert [t["final_answer"] for t in traces[:3]] == ["question a #0", "question a #1", "question a #2"]
    assert len({t["metadata"]["worker"] for t in traces}) == 1  # one worker served all nine runs
    assert all(t["metadata"]["imported_in"] == t["metadata"]["worker"] for t in traces)
    assert os.getpid() not in {t["metadata"]["worker"] for t in traces}


def test_a_worker_that_dies_is_an_error_for_its_run_and_is_replaced(tmp_path):
    spec = spec_for(tmp_path, ["exit", "a"], "python: hanging:answer\n  workers: 1\n  retries: 0\n")
    outcome, output = run(spec, hermetic_environment())
    error = lines(output / "exit.jsonl")[0]["metadata"]["agentci_error"]
    assert error.startswith("query 'exit' run 0: the worker process running the function died (exit code 3)")
    assert lines(output / "a.jsonl")[0]["final_answer"] == "question a #0" and outcome.failed == 1


def test_a_module_that_hangs_while_importing_is_a_clear_error_and_its_worker_is_killed(tmp_path):
    from agentci_action.run.process import LiveProcesses
    from agentci_action.run.python_call import PythonWorkers

    (tmp_path / "slow_import.py").write_text("import time\ntime.sleep(300)\n")
    live = LiveProcesses()
    workers = PythonWorkers("slow_import:run", tmp_path, hermetic_environment(), live)
    workers.start_timeout_s = 1
    with pytest.raises(ValueError, match=r"^module 'slow_import' did not import within 1 s"):
        workers.check()
    assert worker_processes("slow_import:run") == []


def test_what_the_function_prints_never_reaches_the_trace_channel(tmp_path):
    (tmp_path / "noisy.py").write_text(
        'def answer(query):\n    print(\'{"final_answer": "a log line that looks like a trace"}\')\n'
        "    return {'final_answer': 'the real answer'}\n"
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text("agent: demo\nrunner:\n  python: noisy:answer\nqueries:\n  - {id: a, query: q}\n")
    _, output = run(spec, hermetic_environment())
    assert lines(output / "a.jsonl")[0]["final_answer"] == "the real answer"


# The OpenAI Agents SDK: a RunResult read through the SDK's tracing

QUESTION = "What's the weather in Paris, in Fahrenheit?"
ANSWER = "It is 69.8 °F in Paris."
SCRIPT = {
    QUESTION: [
        Turn(tool_calls=[("transfer_to_weather", {})], prompt_tokens=31, completion_tokens=7),
        Turn(tool_calls=[("get_weather", {"city": "Paris"})], prompt_tokens=52, completion_tokens=11),
        Turn(tool_calls=[("to_fahrenheit", {"celsius": 21})], prompt_tokens=68, completion_tokens=9),
        Turn(content=ANSWER, prompt_tokens=83, completion_tokens=10),
    ]
}


@pytest.fixture
def openai_server():
    with ScriptedOpenAIServer(SCRIPT) as server:
        yield server


def check_agents_sdk_trace(trace: dict, model: str = "gpt-4o-mini") -> None:
    """Chat Completions' generation spans name the model asked for; a Responses call's span, the model that answered."""
    assert trace["final_answer"] == ANSWER
    assert [(c["name"], c["arguments"], c.get("result"), c.get("agent")) for c in trace["tool_calls"]] == [
        ("transfer_to_weather", {}, None, "triage"),  # the handoff's own call: every tool check sees it
        ("get_weather", {"city": "Paris"}, "{'city': 'Paris', 'celsius': 21}", "weather"),  # the SDK records str()
        ("to_fahrenheit", {"celsius": 21}, "69.8", "weather"),
    ]
    assert trace["handoffs"] == [{"from": "triage", "to": "weather"}]
    assert [(c["model"], c["input_tokens"], c["output_tokens"]) for c in trace["llm_calls"]] == [
        (model, 31, 7),
        (model, 52, 11),
        (model, 68, 9),
        (model, 83, 10),
    ]
    assert trace["metadata"]["status"] == "completed"


@pytest.mark.parametrize(
    "function, api",
    [("answer", "chat_completions"), ("answer_async", "chat_completions"), ("answer", "responses")],
)
def test_a_python_runner_may_return_an_agents_sdk_run_result(tmp_path, openai_server, function, api):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"agent: weather\nrunner:\n  python: agents_sdk_agent:{function}\n  cwd: {ROOT / 'tests' / 'agents'}\n"
        f"  env: {{OPENAI_BASE_URL: '{openai_server.openai_url}', OPENAI_API_KEY: sk-test-agents, AGENT_OPENAI_API: {api}}}\n"
        f'queries:\n  - id: paris\n    query: "{QUESTION}"\n'
    )
    outcome, output = run(spec, hermetic_environment(), runs=2)
    assert outcome.ok, outcome.errors
    traces = lines(output / "paris.jsonl")
    assert [t["run"] for t in traces] == [0, 1]
    for trace in traces:
        check_agents_sdk_trace(trace, "gpt-4o-mini" if api == "chat_completions" else openai_server.model)
        check_agents_sdk_breakdowns(trace, api)


def check_agents_sdk_breakdowns(trace: dict, api: str) -> None:
    """A Responses call's span keeps the input items it sent, and its Response the instructions and tools.

    Each call is split by component, counted by the model's tokenizer. A Chat Completions generation span records no
    tool definitions: not attributed.
    """
    breakdowns = [call.get("input_breakdown") for call in trace["llm_calls"]]
    if api == "chat_completions":
        assert breakdowns == [None] * 4
        return
    count = tokenizer_for("gpt-4o-mini").count
    first, second, third, _ = ({(p["component"], p.get("name")): p["tokens"] for p in b["parts"]} for b in breakdowns)
    assert first[("system_prompt", None)] == count("Hand weather questions to the weather agent.")
    assert first[("query", None)] == count(QUESTION)
    assert {name for component, name in first if component == "tool_schemas"} == {"transfer_to_weather"}
    assert second[("system_prompt", None)] == count("You answer weather questions.")
    assert {name for component, name in second if component == "tool_schemas"} == {"get_weather", "to_fahrenheit"}
    assert third[("tool_results", "get_weather")] == count("{'city': 'Paris', 'celsius': 21}")
    assert ("history", None) in third and ("query", None) in third
    assert all(b["exact"] and b["tokenizer"] == "o200k_base" for b in breakdowns)


def test_a_run_result_whose_run_the_sdk_did_not_trace_is_an_error_that_says_so(tmp_path, openai_server):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"agent: weather\nrunner:\n  python: agents_sdk_agent:answer\n  cwd: {ROOT / 'tests' / 'agents'}\n"
        f"  env: {{OPENAI_BASE_URL: '{openai_server.openai_url}', OPENAI_API_KEY: sk-test-agents, "
        f"OPENAI_AGENTS_DISABLE_TRACING: '1'}}\n"
        f'queries:\n  - id: paris\n    query: "{QUESTION}"\n'
    )
    outcome, output = run(spec, hermetic_environment())
    assert outcome.failed == 1
    error = lines(output / "paris.jsonl")[0]["metadata"]["agentci_error"]
    assert error.startswith("query 'paris' run 0: returned an Agents SDK RunResult, but the SDK recorded no trace")


def test_a_callable_given_to_the_api_may_return_an_agents_sdk_run_result(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-agents")
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "agents"))
    import agents_sdk_agent

    spec = tmp_path / "spec.yaml"
    spec.write_text(f'agent: weather\nqueries:\n  - id: paris\n    query: "{QUESTION}"\n')
    progress = Progress("agentci run", 1, "run", output=ProgressOutput(stream=io.StringIO()))
    outcome = run_agent(
        load_spec(spec), RunOptions(tmp_path / "out"), RunSetup(agent=agents_sdk_agent.answer, progress=progress)
    )
    assert outcome.ok, outcome.errors
    check_agents_sdk_trace(lines(tmp_path / "out" / "paris.jsonl")[0])

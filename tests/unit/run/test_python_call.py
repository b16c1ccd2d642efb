"""The `python:` runner.

The spec's function runs in worker processes, so a run that overruns its timeout is killed with everything it started
while the other runs go on. A function returning an OpenAI Agents SDK `RunResult` runs the real SDK:
tests/e2e/test_agents_sdk_run_result.py.
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
from helpers import hermetic_environment
from integration.test_runner import _alive, lines

from agentci_action import load_spec
from agentci_action._util.progress import Progress, ProgressOutput
from agentci_action.run import RunOptions, RunSetup, run_agent

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

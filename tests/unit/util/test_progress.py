"""Progress on stderr (agentci_action/_util/progress.py) for the agent's runs and for judge calls.

The line itself, then the real commands under a real terminal (a pty: a live line rewritten in place) and with a pipe
(CI: plain lines), against a slow local judge server. A deterministic suite prints no progress at all.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
import time

import pytest
from fakes.llm_server import FakeLLMServer
from helpers import hermetic_environment, run_cli

from agentci_action._util.progress import CLEAR, Progress, ProgressOutput, duration

KEY = "sk-ant-progress-test-never-print-me"

SPEC = """\
agent: demo
judge_config:
  model: claude-haiku-4-5
  base_url: {url}
queries:
{queries}
"""
JUDGED = """\
  - id: q{i}
    query: Question {i}?
    correctness:
      llm_judge:
        - template: actionable_steps
"""
PLAIN = """\
  - id: q{i}
    query: Question {i}?
    correctness:
      expected_in_answer: ["{i}"]
"""


def project(tmp_path, url: str, count: int, template: str = JUDGED) -> list[str]:
    """A spec of `count` queries and their traces; the CLI arguments of `agentci test` on them (JSON on stdout)."""
    queries = "".join(template.format(i=i) for i in range(count))
    (tmp_path / "agentci_spec.yaml").write_text(SPEC.format(url=url, queries=queries))
    lines = [json.dumps({"id": f"q{i}", "final_answer": f"Step {i}: open Settings."}) for i in range(count)]
    (tmp_path / "traces.jsonl").write_text("\n".join(lines) + "\n")
    spec, traces = tmp_path / "agentci_spec.yaml", tmp_path / "traces.jsonl"
    return ["test", str(spec), "--traces", str(traces), "--format", "json", "--workers", "1"]


def on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """The real CLI, in this process, with stderr on a pseudo-terminal: exit code, stdout and the terminal's bytes."""
    master, slave = os.openpty()
    seen = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            seen.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    with open(slave, "w", encoding="utf-8") as terminal:
        done = run_cli(*args, env=env, stderr=terminal)
    reader.join(10)
    os.close(master)
    return done.returncode, done.stdout, seen.decode().replace("\r\n", "\n")  # the terminal's own newline translation


# The line


def test_the_line_counts_times_and_estimates():
    progress = Progress(
        "agentci test",
        4,
        "query",
        "queries",
        ("judge requests", "cached", "failed"),
        output=ProgressOutput(stream=io.StringIO()),
    )
    progress.started -= 30  # as if 30 s had passed
    assert progress.line() == "agentci test: 0/4 queries · judge requests 0 · cached 0 · failed 0 · 0:30 elapsed"
    progress.advance(judge_requests=2, cached=1)
    progress.advance(failed=1)
    assert progress.line() == (
        "agentci test: 2/4 queries · judge requests 2 · cached 1 · failed 1 · 0:30 elapsed · ETA 0:30"
    )
    progress.total = 1
    progress.done = 0
    assert progress.line().startswith("agentci test: 0/1 query ·")
    assert duration(3725) == "1:02:05" and duration(59.6) == "1:00"


def test_a_terminal_gets_one_line_rewritten_and_errors_above_it():
    out = io.StringIO()
    progress = Progress(
        "agentci run",
        2,
        "run",
        counters=("failed", "infra"),
        output=ProgressOutput(stream=out, live=True, interval_s=0),
    )
    progress.start("agentci run: 2 runs of demo on 1 worker")
    progress.advance()
    progress.advance("query 'x' run 0: boom", failed=1)
    progress.finish()
    assert out.getvalue() == (
        "agentci run: 2 runs of demo on 1 worker\n"
        f"{CLEAR}agentci run: 0/2 runs · failed 0 · infra 0 · 0:00 elapsed"
        f"{CLEAR}agentci run: 1/2 runs · failed 0 · infra 0 · 0:00 elapsed · ETA 0:00"
        f"{CLEAR}error: query 'x' run 0: boom\n"
        f"{CLEAR}agentci run: 2/2 runs · failed 1 · infra 0 · 0:00 elapsed"
        f"{CLEAR}"  # cleared at the end: the command's own summary follows on a clean line
    )


def test_a_pipe_gets_plain_lines_no_more_often_than_the_interval_and_secrets_masked():
    out = io.StringIO()
    progress = Progress(
        "agentci run", 3, "run", counters=("failed",), output=ProgressOutput(stream=out, live=False, interval_s=0)
    )
    progress.advance()
    progress.advance("run 1: token hunter2 leaked", failed=1)
    assert CLEAR not in out.getvalue()
    assert out.getvalue().splitlines() == [
        "agentci run: 1/3 runs · failed 0 · 0:00 elapsed · ETA 0:00",
        "error: run 1: token hunter2 leaked",
        "agentci run: 2/3 runs · failed 1 · 0:00 elapsed · ETA 0:00",
    ]
    quiet = io.StringIO()
    progress = Progress(
        "agentci run", 3, "run", output=ProgressOutput(stream=quiet, live=False, interval_s=60, mask=lambda s: s)
    )
    progress.advance()
    assert quiet.getvalue() == ""  # not yet time for a line
    masked = io.StringIO()
    progress = Progress(
        "x",
        1,
        "run",
        output=ProgressOutput(stream=masked, live=False, interval_s=0, mask=lambda s: s.replace("pw", "***")),
    )
    progress.advance("the pw is out")
    assert "pw" not in masked.getvalue() and "the *** is out" in masked.getvalue()


def test_the_clock_writes_while_nothing_finishes():
    out = io.StringIO()
    progress = Progress(
        "agentci test", 1, "query", "queries", output=ProgressOutput(stream=out, live=False, interval_s=0.05)
    )
    progress.start()
    time.sleep(0.3)
    progress.finish()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("agentci test: 0/1 query · 0:00 elapsed") for line in lines)
    written = out.getvalue()
    time.sleep(0.1)
    assert out.getvalue() == written  # stopped


# The commands: agentci test, diff and save against a slow judge


@pytest.fixture
def slow_llm():
    with FakeLLMServer(delay=0.8) as server:
        yield server


def test_a_terminal_shows_a_live_line_while_the_judge_works(tmp_path, slow_llm):
    args = project(tmp_path, slow_llm.anthropic_url, 3)
    code, stdout, terminal = on_terminal(args, hermetic_environment(ANTHROPIC_API_KEY=KEY))
    assert code == 0, terminal
    assert json.loads(stdout)["summary"]["judge"]["requests"] == 3  # the report itself is untouched, on stdout
    header, rest = terminal.split("\n", 1)
    assert header == "agentci test: current run: 3 queries to evaluate · judge claude-haiku-4-5 · 1 worker"
    frames = [frame for frame in rest.split(CLEAR) if frame]
    assert frames[0].startswith("agentci test: 0/3 queries · judge requests 0 · cached 0 · failed 0 · 0:0")
    assert any(f.startswith("agentci test: 1/3 queries · judge requests 1 · cached 0 · failed 0 ·") for f in frames)
    assert any(re.search(r" · ETA \d+:\d\d", f) for f in frames)
    assert re.fullmatch(
        r"agentci test: 3 queries evaluated in \d+:\d\d · judge requests 3 · cached 0 · failed 0\n", frames[-1]
    ), frames[-1]
    assert all("\n" not in f for f in frames[:-1])  # every progress frame rewrites the same line
    assert KEY not in terminal + stdout


def test_a_pipe_gets_the_header_plain_lines_and_the_totals(tmp_path, slow_llm, monkeypatch):
    args = project(tmp_path, slow_llm.anthropic_url, 3)
    monkeypatch.setenv("AGENTCI_PROGRESS_INTERVAL_S", "1")  # read from the process's environment, not the command's
    env = hermetic_environment(ANTHROPIC_API_KEY=KEY)
    done = run_cli(*args, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert CLEAR not in done.stderr
    assert lines[0] == "agentci test: current run: 3 queries to evaluate · judge claude-haiku-4-5 · 1 worker"
    middle = lines[1:-1]
    assert middle and all(
        re.fullmatch(r"agentci test: [0-3]/3 queries · judge requests \d · .* elapsed.*", m) for m in middle
    )
    assert re.fullmatch(
        r"agentci test: 3 queries evaluated in \d+:\d\d · judge requests 3 · cached 0 · failed 0", lines[-1]
    )
    # cached verdicts: still a header and the totals, the counts saying so
    again = run_cli(*args, env=env)
    assert again.stderr.splitlines()[-1].endswith("judge requests 0 · cached 3 · failed 0")


def test_a_deterministic_suite_prints_no_progress(tmp_path, llm):
    args = project(tmp_path, llm.anthropic_url, 3, PLAIN)
    code, stdout, terminal = on_terminal(args, hermetic_environment(ANTHROPIC_API_KEY=KEY))
    assert code == 0 and json.loads(stdout)["summary"]["passed"] == 3
    assert terminal == ""
    piped = run_cli(*args, env=hermetic_environment(ANTHROPIC_API_KEY=KEY))
    assert piped.returncode == 0 and piped.stderr == ""


def test_judge_checks_without_a_key_are_not_slow_work(tmp_path, llm):
    args = project(tmp_path, llm.anthropic_url, 2)
    done = run_cli(*args, env=hermetic_environment())
    assert done.returncode == 0 and "agentci test:" not in done.stderr and llm.count == 0


def test_diff_and_save_show_each_side(tmp_path, slow_llm, monkeypatch):
    args = project(tmp_path, slow_llm.anthropic_url, 2)
    spec, traces = args[1], args[3]
    monkeypatch.setenv("AGENTCI_PROGRESS_INTERVAL_S", "60")
    env = hermetic_environment(ANTHROPIC_API_KEY=KEY)
    saved = run_cli("save", spec, "--traces", traces, "--version", "v1", env=env)
    assert saved.returncode == 0, saved.stderr
    assert saved.stderr.splitlines() == [
        "agentci save: precheck: 2 queries to evaluate · judge claude-haiku-4-5 · 4 workers",
        saved.stderr.splitlines()[-1],
    ]
    assert re.fullmatch(
        r"agentci save: 2 queries evaluated in \d+:\d\d · judge requests 2 · cached 0 · failed 0\n",
        saved.stderr.splitlines()[-1] + "\n",
    )
    run_cli("save", spec, "--traces", traces, "--version", "v2", env=env)
    diffed = run_cli("diff", spec, "--baseline", "v1", "--compare", "v2", "--format", "json", env=env)
    assert diffed.returncode == 0, diffed.stderr
    lines = diffed.stderr.splitlines()
    assert lines[:2] == [
        "agentci diff: v2: 2 queries to evaluate · judge claude-haiku-4-5 · 4 workers",
        "agentci diff: v1: 2 queries to evaluate",
    ]
    assert lines[-1].startswith("agentci diff: 4 queries evaluated in ") and lines[-1].endswith(
        " · cached 4 · failed 0"
    )
    tested = run_cli(*args[:4], "--baseline", "v1", "--format", "json", env=env)
    assert tested.stderr.splitlines()[:2] == [
        "agentci test: current run: 2 queries to evaluate · judge claude-haiku-4-5 · 4 workers",
        "agentci test: v1: 2 queries to evaluate",
    ]


def test_agent_runs_show_a_live_line_and_the_summary_on_its_own_line(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys, time\nq = json.load(sys.stdin)\ntime.sleep(0.6)\n"
        "print(json.dumps({'final_answer': 'ok ' + q['id']}))\n"
    )
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text(
        f"agent: demo\nrunner:\n  command: [{sys.executable!r}, agent.py]\n  workers: 1\nqueries:\n"
        "  - {id: a, query: A}\n  - {id: b, query: B}\n"
    )
    code, _, terminal = on_terminal(["run", str(spec), "--output", str(tmp_path / "out")], hermetic_environment())
    assert code == 0, terminal
    assert terminal.startswith("agentci run: 2 runs of demo on 1 worker\n")
    frames = [frame for frame in terminal.split("\n", 1)[1].split(CLEAR) if frame]
    assert any(f.startswith("agentci run: 1/2 runs · failed 0 · infra 0 · ") for f in frames)
    assert frames[-1].startswith("agentci run: 2 runs in ") and frames[-1].endswith(f"→ {tmp_path / 'out'}\n")

"""Run the agent's program once.

The query as JSON on stdin, AGENTCI_* variables, a timeout that kills the program's whole process group (children
included, none left behind), and its exit code read as: 0 a trace · 75 (EX_TEMPFAIL) an infrastructure failure, retried
· anything else a crash, not retried, unless its stderr shows a model outage (outages.py), which is an infrastructure
failure too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentci_action._util.text import one_line
from agentci_action.run.jobs import Finished, InfraFailure, Job, RunFailure
from agentci_action.run.outages import outage_in_stderr

EX_TEMPFAIL = 75
STDERR_TAIL = 5  # lines of a crashed program's stderr quoted in its error
GRACE_S = 2.0  # between SIGTERM and SIGKILL


class LiveProcesses:
    """The programs running now, so an interrupted run (Ctrl-C, SIGTERM) can kill their process groups."""

    def __init__(self) -> None:
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.closed = False

    def add(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.add(process)
            if self.closed:
                signal_group(process, signal.SIGKILL)

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(process)

    def kill_all(self) -> None:
        with self._lock:
            self.closed = True
            running = list(self._running)
        for process in running:
            signal_group(process, signal.SIGKILL)


def kill_group(process: subprocess.Popen[bytes], grace_s: float = GRACE_S) -> None:
    """SIGTERM to the program's process group, SIGKILL to the group after `grace_s` (children included)."""
    signal_group(process, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace_s)
    signal_group(process, signal.SIGKILL)


def signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


@dataclass(frozen=True)
class Program:
    """The agent's program as a run starts it: `argv` in `cwd`, killed after `timeout_s`, kept in `live` meanwhile."""

    argv: list[str]
    cwd: Path
    timeout_s: float
    live: LiveProcesses

    def run(self, job: Job, environ: Mapping[str, str], trace_file: Path) -> Finished:
        """Start the program in its own session (so its group can be killed), feed `job` to it, wait for it."""
        argv, cwd, timeout_s, live = self.argv, self.cwd, self.timeout_s, self.live
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(environ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise RunFailure(f"program {argv[0]!r} not found (in {cwd}): check runner.command") from None
        except PermissionError:
            raise RunFailure(
                f"program {argv[0]!r} is not executable: chmod +x it, or run it through its interpreter"
            ) from None
        live.add(process)
        try:
            stdout, stderr = process.communicate(
                json.dumps(job.payload(), ensure_ascii=False).encode(), timeout=timeout_s
            )
        except subprocess.TimeoutExpired:
            kill_group(process)
            process.communicate()
            raise InfraFailure(
                f"timed out after {timeout_s:g} s (runner.timeout_s); killed with its process group"
            ) from None
        finally:
            signal_group(process, signal.SIGKILL)  # children the program left running in its group
            live.discard(process)
        finished = Finished(
            trace_file,
            stdout.decode("utf-8", "replace"),
            stderr.decode("utf-8", "replace"),
            process.returncode,
        )
        if process.returncode == EX_TEMPFAIL:
            raise InfraFailure(f"exit code {EX_TEMPFAIL} (temporary failure){_tail(finished.stderr)}")
        if process.returncode != 0:
            outage = outage_in_stderr(finished.stderr)
            if outage is not None:
                raise InfraFailure(f"{_exit_status(process.returncode)} after a model outage: {outage}")
            raise RunFailure(f"{_exit_status(process.returncode)}{_tail(finished.stderr)}")
        return finished


def _exit_status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _tail(stderr: str) -> str:
    """The last lines of stderr, joined on one line, for the error message."""
    lines = [one_line(line) for line in stderr.strip().splitlines() if line.strip()]
    return f"; stderr: {' | '.join(lines[-STDERR_TAIL:])[-600:]}" if lines else "; no stderr"

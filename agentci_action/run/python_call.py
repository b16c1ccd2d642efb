"""Run the agent's function, given the query, sync or async, returning the trace.

Given also id, run, tags, metadata, and a conversation's turn, history and session_id, when its signature names them, or
takes **kwargs.

The spec's `python: module:function` runs in worker processes (worker.py), one run at a time each, as many as the
runner's `workers`: each imports the module once, and a run that overruns `timeout_s` has its worker killed with
its whole process group (nothing it started is left running) and replaced by a fresh one. A callable handed to
the Python API (`run_agent(spec, agent=...)`) is the caller's own object, so it runs in this process: an async one
is cancelled at the timeout, a sync one cannot be stopped from outside and is left to finish on its thread (the run
is reported as timed out); name it `module:function` in the spec's runner to have it killed instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from agentci_action._util.text import one_line
from agentci_action.run import agents_sdk
from agentci_action.run.jobs import Finished, InfraFailure, Job, RunFailure
from agentci_action.run.process import LiveProcesses, kill_group
from agentci_action.run.worker import failure, keywords

WORKER = Path(__file__).with_name("worker.py")
START_TIMEOUT_S = 120.0  # for the module to import in a new worker


def _raise(answer: dict[str, Any]) -> None:
    if "failure" in answer:
        raise (InfraFailure if answer["infra"] else RunFailure)(answer["failure"])


class WorkerRoutes(Protocol):
    """Gives each worker process a route of its own for its life, pointed at the run it serves (runner.replay)."""

    def worker_environment(self) -> tuple[str, dict[str, str]]:
        """A new route's token, and the variables that point a process at it."""
        ...

    def bind(self, token: str, job: Job | None) -> None:
        """Point the route at `job`'s run, or at nothing."""
        ...


class PythonWorkers:
    """Worker processes for `module:function`: started on demand, reused while they behave, killed on a timeout.

    Each is `interpreter` running worker.py, which needs only the standard library: the agent's own Python (where its
    packages are) may run it while AgentCI runs in a virtual environment of its own.
    """

    def __init__(
        self,
        target: str,
        cwd: Path,
        environ: Mapping[str, str],
        live: LiveProcesses,
        routes: WorkerRoutes | None = None,
        interpreter: str = sys.executable,
    ):
        self.target, self.cwd, self.environ, self.live = target, cwd, dict(environ), live
        self.start_timeout_s = START_TIMEOUT_S
        self.routes = routes
        self.interpreter = interpreter
        self._idle: list[subprocess.Popen[bytes]] = []
        self._tokens: dict[int, str] = {}  # a worker's route, by its pid
        self._lock = threading.Lock()

    def check(self) -> None:
        """Start the first worker now: ValueError when the module does not import or has no such function."""
        self._idle.append(self._start())

    def _start(self) -> subprocess.Popen[bytes]:
        token, routed = self.routes.worker_environment() if self.routes else ("", {})
        process = subprocess.Popen(
            [self.interpreter, str(WORKER), self.target, str(self.cwd)],
            cwd=self.cwd,
            env={**self.environ, **routed},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self._tokens[process.pid] = token
        self.live.add(process)
        try:
            answer = self._answer(process, self.start_timeout_s)
        except TimeoutError:
            answer = {
                "import_error": f"module {self.target.partition(':')[0]!r} did not import within "
                f"{self.start_timeout_s:g} s (in a new worker process)"
            }
        if answer is None or "import_error" in answer:
            self._stop(process)
            raise ValueError(answer["import_error"] if answer else f"its worker process died ({_status(process)})")
        return process

    def _answer(self, process: subprocess.Popen[bytes], timeout_s: float) -> dict[str, Any] | None:
        """The worker's next answer; None when it died or `timeout_s` passed first (a timeout kills nothing here)."""
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], timeout_s)
        if not ready:
            raise TimeoutError
        line = process.stdout.readline()
        return json.loads(line) if line else None

    def call(self, job: Job, timeout_s: float, trace_file: Path) -> Finished:
        with self._lock:
            process = self._idle.pop() if self._idle else None
        if process is None:
            try:
                process = self._start()
            except ValueError as exc:
                raise RunFailure(f"a new worker could not start: {one_line(str(exc))}") from None
        assert process.stdin is not None
        began = time.monotonic()
        if self.routes:
            self.routes.bind(self._tokens[process.pid], job)
        try:
            process.stdin.write(json.dumps({"query": job.message, "values": job.values()}).encode() + b"\n")
            process.stdin.flush()
            answer = self._answer(process, timeout_s)
        except TimeoutError:
            self._stop(process)
            raise InfraFailure(
                f"timed out after {timeout_s:g} s (runner.timeout_s); its worker process was killed with its group"
            ) from None
        except (BrokenPipeError, ValueError):
            answer = None
        finally:
            if self.routes:
                self.routes.bind(self._tokens[process.pid], None)
        if answer is None:  # the worker died: os._exit, a signal, a crash in C code
            self._stop(process)
            raise RunFailure(
                f"the worker process running the function died ({_status(process)}) after "
                f"{time.monotonic() - began:.1f} s; its stderr is above"
            )
        with self._lock:
            self._idle.append(process)
        _raise(answer)
        return Finished(trace_file, value=answer["value"])

    def _stop(self, process: subprocess.Popen[bytes]) -> None:
        kill_group(process, grace_s=0)
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream:
                stream.close()
        self.live.discard(process)

    def close(self) -> None:
        """Stop every idle worker (its stdin closes, it exits; its group is killed after a moment regardless)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for process in idle:
            if process.stdin:
                process.stdin.close()
        for process in idle:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(2.0)
            self._stop(process)


def _status(process: subprocess.Popen[bytes]) -> str:
    code = process.returncode
    return f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"


def call_in_process(function: Callable[..., Any], job: Job, timeout_s: float, trace_file: Path) -> Finished:
    """Call a callable of the caller's own in this process, on a thread.

    InfraFailure on a timeout or a provider's transient error, RunFailure on any other exception (its type, message and
    where it was raised).
    """
    kwargs = keywords(function, job.values())
    outcome: dict[str, Any] = {}

    def target() -> None:
        since = agents_sdk.collect() if "agents" in sys.modules else set()
        try:
            result = function(job.message, **kwargs)
            if inspect.isawaitable(result):
                result = asyncio.run(_bounded(result, timeout_s))
            if agents_sdk.is_run_result(result):
                result = agents_sdk.records_of_run(result, job.query.key, since)
            outcome["value"] = result
        except BaseException as exc:  # reported as the run's failure; a KeyboardInterrupt reaches the main thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name=f"agentci-{job.query.key}-{job.run}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise InfraFailure(
            f"timed out after {timeout_s:g} s (runner.timeout_s); the callable is still running in this process "
            "(name it module:function in the spec's runner to have it killed)"
        )
    if isinstance(outcome.get("error"), agents_sdk.NoTrace):
        raise RunFailure(str(outcome["error"]))
    if "error" in outcome:
        answer = failure(outcome["error"])
        raise (InfraFailure if answer["infra"] else RunFailure)(answer["failure"])
    return Finished(trace_file, value=outcome.get("value"))


async def _bounded(awaitable: Any, timeout_s: float) -> Any:
    return await asyncio.wait_for(awaitable, timeout_s)

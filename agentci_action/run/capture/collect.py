"""`agentci collect`: the receiver alone, writing the traces it assembles into a directory as they come in.

For users who drive their agent themselves (a pytest suite, a service under test): it listens on
127.0.0.1 (by default the standard OTLP/HTTP port 4318, so an exporter left at its defaults needs only the token)
until Ctrl-C or SIGTERM, or, given a command, until that command exits. The command runs with the OTEL_*
variables of `environment.DEFAULTS`, the endpoint and the receiver's token (`environment.exporter_environment`);
its exit code is the collector's. Without a command, the collector prints the `OTEL_EXPORTER_OTLP_HEADERS` an
exporter must be given: spans without its token are refused.

Traces are grouped by query: spans whose resource names a run (`agentci.query_id`, `agentci.run` in
OTEL_RESOURCE_ATTRIBUTES) make that run's trace; other spans are read as a span file is (one trace per trace
id, named by an `agentci.query_id` span attribute or matched by its user message). Each query's traces go to
`<id>.jsonl` (canonical JSON Lines, one line per run), traces with no id to `unidentified.jsonl`, traces whose id
is not a query id (a path such as `../../x`) nowhere (logged); a file is rewritten whole (temporary file, then rename) once its spans have been quiet for `quiet_s`, and at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentci_action._util.errors import TraceError
from agentci_action._util.output import replace_file
from agentci_action.run.capture import run_traces
from agentci_action.run.capture.environment import DEFAULTS, exporter_environment, with_token
from agentci_action.run.capture.otlp import spans_of
from agentci_action.run.capture.receiver import Receiver
from agentci_action.run.trace_store import line, query_file
from agentci_action.trace.canonical import Trace

OTLP_HTTP_PORT = 4318
UNIDENTIFIED = "unidentified"


def traces_of(receiver: Receiver) -> list[Trace]:
    """Every trace the receiver's spans make; a run or trace AgentCI cannot read is logged (once), not raised.

    The spans of a run's turns (`agentci.turn` 1, 2, …) make one conversation, its turns in order.
    """
    traces = []
    conversations: dict[tuple[str, int], list[tuple[int, Trace]]] = {}
    for key in receiver.runs():
        spans = receiver.spans(key)
        try:
            if key is None:
                traces.extend(_unnamed(spans, receiver))
                continue
            query_id, run, turn = key
            source = f"otel:{query_id} run {run}" + (f" turn {turn}" if turn else "")
            trace = run_traces.run_trace(spans, query_id, run, source)
            if turn:
                conversations.setdefault((query_id, run), []).append((turn, trace))
            else:
                traces.append(trace)
        except TraceError as exc:
            for problem in exc.problems:
                receiver.note(str(problem), str(problem))
    for (query_id, run), turns in conversations.items():
        replies = [reply for _, reply in sorted(turns, key=lambda numbered: numbered[0])]
        conversation = Trace(id=query_id, run=run, turns=replies).with_derived_totals()
        conversation._source = f"otel:{query_id} run {run}"
        traces.append(conversation)
    return traces


def _unnamed(resource_spans: list[dict[str, Any]], receiver: Receiver) -> list[Trace]:
    """Spans that name no run, read together as a span file.

    When some trace among them is unreadable (a service's HTTP spans, say), each trace id on its own, so the others
    still count.
    """
    source = "otel:spans without agentci.query_id"
    try:
        return run_traces.read({"resourceSpans": resource_spans}, source)
    except TraceError:
        pass
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for resource in resource_spans:
        for span in spans_of(resource):
            by_trace.setdefault(str(span.get("traceId")), []).append(
                {"resource": resource.get("resource") or {}, "scopeSpans": [{"spans": [span]}]}
            )
    traces = []
    for trace_id, spans in by_trace.items():
        try:
            traces.extend(run_traces.read({"resourceSpans": spans}, f"{source}, trace {trace_id}"))
        except TraceError as exc:
            for problem in exc.problems:
                receiver.note(str(problem), str(problem))
    return traces


def write(output: Path, traces: list[Trace], refuse: Callable[[str], None]) -> list[Path]:
    """Rewrite each query's file with its traces (sorted by run), atomically; the files written.

    A trace whose id is not a query id (`../../x`, an absolute path) is never written: `refuse` is told why.
    """
    by_file: dict[Path, list[Trace]] = {}
    for trace in traces:
        try:
            by_file.setdefault(query_file(output, trace.id or UNIDENTIFIED), []).append(trace)
        except ValueError as exc:
            refuse(f"dropped a trace whose spans name a query id that is not one: {exc}")
    return [
        replace_file(path, "".join(line(t) + "\n" for t in sorted(group, key=_run)), "the traces")
        for path, group in sorted(by_file.items())
    ]


def _run(trace: Trace) -> int:
    return trace.run or 0


class Collector:
    """Rewrites the trace files whenever some run's spans have been quiet for `quiet_s` seconds."""

    def __init__(self, receiver: Receiver, output: Path, quiet_s: float):
        self.receiver, self.output, self.quiet_s = receiver, output, quiet_s
        self.files: set[Path] = set()

    def flush(self, everything: bool = False) -> None:
        """Write every file when a run has settled (or, with `everything`, when anything changed)."""
        if self.receiver.settled(self.quiet_s if not everything else 0.0):
            self.files.update(
                write(self.output, traces_of(self.receiver), lambda why: self.receiver.note("query id", why))
            )


def collect(
    output: Path,
    port: int = OTLP_HTTP_PORT,
    command: list[str] | None = None,
    quiet_s: float = 1.0,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run the collector (see the module docstring); the command's exit code, else 0 when stopped."""
    environ = os.environ if environ is None else environ
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if _main_thread() else None
    code = 0
    try:
        with Receiver(port=port, keep_foreign=True, log=_log) as receiver:
            _log(
                f"receiving OTLP/HTTP on {receiver.endpoint} (OTEL_EXPORTER_OTLP_ENDPOINT={receiver.endpoint}); traces → {output}"
            )
            if not command:  # a command gets both variables; an exporter started apart needs the token too
                _log(
                    "spans are taken only with this collector's token: set "
                    f"OTEL_EXPORTER_OTLP_HEADERS={with_token(environ.get('OTEL_EXPORTER_OTLP_HEADERS'), receiver.token)}"
                )
            collector = Collector(receiver, output, quiet_s)
            try:
                if command:
                    code = _run_command(command, receiver, environ, stop, collector)
                else:
                    while not stop.wait(quiet_s / 2):
                        collector.flush()
            except KeyboardInterrupt:
                _log("interrupted: writing what arrived")
            receiver.settle(None, 0.5)
            collector.flush(everything=True)
            _log(
                f"{receiver.spans_received} spans received, {len(collector.files)} trace files in {output}"
                + (f", {sum(receiver.problems.values())} problems logged above" if receiver.problems else "")
            )
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return code


def _log(message: str) -> None:
    """One line of the collector's log, on stderr."""
    print(f"agentci collect: {message}", file=sys.stderr, flush=True)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _run_command(
    command: list[str], receiver: Receiver, environ: Mapping[str, str], stop: threading.Event, collector: Collector
) -> int:
    env = {
        **{name: value for name, value in DEFAULTS.items() if name not in environ},
        **environ,
        **exporter_environment(receiver.endpoint, receiver.token, environ),
    }
    process = subprocess.Popen(command, env=env)
    try:
        while process.poll() is None:
            if stop.wait(collector.quiet_s / 2):
                process.terminate()
                return process.wait()
            collector.flush()
        return process.returncode
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

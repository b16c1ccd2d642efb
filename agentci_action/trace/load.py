"""Read trace files (a file, a directory or a glob; one object, a list, or JSON Lines) into canonical traces.

Every parse or validation problem names the file and the line; nothing is skipped silently.
"""

from __future__ import annotations

import glob
from pathlib import Path

from agentci_action._util.errors import Problem, TraceError
from agentci_action._util.gcpause import gc_paused
from agentci_action._util.limits import MAX_NESTING, deeper_than
from agentci_action.spec.models import ModelPrice
from agentci_action.trace.adapters import convert
from agentci_action.trace.canonical import Trace, compact
from agentci_action.trace.json_records import TOO_DEEP, read_records
from agentci_action.trace.pricing import price_trace

TRACE_SUFFIXES = (".json", ".jsonl", ".ndjson")


def resolve_paths(patterns: list[str]) -> list[Path]:
    """Files named by each pattern: a file, every trace file in a directory (recursively, sorted), or a glob."""
    files: list[Path] = []
    for pattern in patterns:
        path = Path(pattern)
        if path.is_file():
            found = [path]
        elif path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in TRACE_SUFFIXES)
        elif path.exists():  # reading a FIFO without a writer would wait forever
            raise TraceError.at(pattern, 0, "not a regular file (a FIFO or device); name a trace file or directory")
        else:
            found = sorted(Path(p) for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
        if not found:
            raise TraceError.at(
                pattern, 0, "no trace files found (expected a file, a directory of .json/.jsonl files, or a glob)"
            )
        files.extend(f for f in found if f not in files)
    return files


def _too_deep(trace: Trace) -> bool:
    """Whether a value the agent wrote (a call's arguments or result, the metadata) nests deeper than MAX_NESTING.

    Matching and serialising recurse once per level. Only these free-form values are walked (they are few and shallow),
    not the whole record.
    """
    calls = trace.tool_calls
    values = [trace.metadata, *(call.arguments for call in calls), *(call.result for call in calls)]
    return deeper_than(values, MAX_NESTING + 1)  # one walk for all of them, inside one more list


def load_traces(
    patterns: list[str], trace_format: str | None = None, pricing: dict[str, ModelPrice] | None = None
) -> list[Trace]:
    """Load, convert and price every trace named by `patterns`. Raises TraceError listing every problem.

    `trace_format` names an adapter (None or "auto": detect per file); `pricing` is the spec's `pricing:`.
    """
    traces: list[Trace] = []
    problems: list[Problem] = []
    for path in resolve_paths(patterns):
        try:
            with gc_paused():
                converted = list(convert(read_records(path), str(path), trace_format))
                for trace in converted:
                    if _too_deep(trace):
                        file, _, line = trace.source.rpartition(":")
                        raise TraceError.at(file, int(line) if line.isdigit() else 0, TOO_DEEP)
                traces.extend(compact(price_trace(trace, pricing)) for trace in converted)
        except TraceError as exc:
            problems.extend(exc.problems)
    if problems:
        raise TraceError(problems)
    return traces

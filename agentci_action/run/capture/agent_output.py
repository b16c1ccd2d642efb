"""How a run's trace is obtained: the seam between running the agent and reading what it produced.

A `Capture` brackets the whole `agentci run` (`start` before the first run, `stop` after the last: a receiver
for OpenTelemetry spans would listen in between), adds environment variables before each command starts
(`environment`), and turns what the run left behind into the trace's JSON records (`records`) instead of
parsing stdout. `OutputCapture` is the default: the agent's own output.

The rule for a command's output: the file $AGENTCI_TRACE_FILE wins when the program wrote it (not empty);
otherwise stdout, whole, when it is nothing but JSON (one document, a list, or JSON Lines); otherwise the last
JSON document on stdout that starts at the beginning of a line (logs before and after it are ignored).
A callable's return value is the trace itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentci_action._util.errors import TraceError
from agentci_action._util.text import one_line
from agentci_action.run.jobs import Finished, Job, RunFailure
from agentci_action.trace.json_records import Record, read_records

_DECODER = json.JSONDecoder()


class Capture:
    """The default seam's interface; subclasses override what they capture differently."""

    def start(self) -> None:
        """Called once before the first run."""

    def stop(self) -> None:
        """Called once after the last run, also when the run is interrupted."""

    def environment(self, job: Job, trace_file: Path) -> dict[str, str]:
        """Variables added to a command's environment (after the runner's `env:`)."""
        return {"AGENTCI_TRACE_FILE": str(trace_file)}

    def records(self, job: Job, finished: Finished) -> list[Record]:
        """The trace's JSON records; raises RunFailure saying what was found instead."""
        raise NotImplementedError

    def outage(self, job: Job) -> str | None:
        """For a run whose program failed: the model outage what it captured shows (run/outages.py), else None."""
        return None


class OutputCapture(Capture):
    """The trace the agent writes: $AGENTCI_TRACE_FILE, stdout, or a callable's return value."""

    def records(self, job: Job, finished: Finished) -> list[Record]:
        if finished.trace_file.is_file() and finished.trace_file.stat().st_size:
            try:
                return read_records(finished.trace_file)
            except TraceError as exc:
                raise RunFailure(f"$AGENTCI_TRACE_FILE is not JSON: {exc.problems[0].message}") from None
        if finished.returncode is None:
            return records_of_value(finished.value)
        return records_of_output(finished.stdout)


def records_of_value(value: Any) -> list[Record]:
    """A callable's return value as records: a dict, a list of dicts, or a pydantic model (a Trace included)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, str):
        return records_of_output(value)
    if isinstance(value, dict):
        return [Record(value, 1)]
    if isinstance(value, list) and value:
        return [
            Record(item.model_dump(mode="json", by_alias=True) if isinstance(item, BaseModel) else item, 1)
            for item in value
        ]
    raise RunFailure(
        f"the function returned {type(value).__name__}, not a trace: return a dict such as "
        '{"final_answer": "...", "tool_calls": [...]}, a list of records, or a Trace'
    )


def records_of_output(stdout: str) -> list[Record]:
    """The trace on stdout, by the rule in this module's docstring; RunFailure saying what stdout held otherwise."""
    if not stdout.strip():
        raise RunFailure("printed nothing on stdout and wrote no $AGENTCI_TRACE_FILE: print the trace as JSON")
    whole = _all_json(stdout)
    if whole is not None:
        return whole
    found = _last_document(stdout)
    if found is not None:
        return found
    lines = stdout.strip().splitlines()
    raise RunFailure(
        f"printed no JSON document on stdout ({len(lines)} line{'s' * (len(lines) != 1)}, the last: "
        f"{one_line(lines[-1])[:120]!r}) and wrote no $AGENTCI_TRACE_FILE: print the trace as JSON, last, "
        "at the start of a line"
    )


def _all_json(text: str) -> list[Record] | None:
    """Every top-level value when the text is nothing but JSON values, else None."""
    values: list[Record] = []
    pos, line = 0, 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            line += text[pos] == "\n"
            pos += 1
        if pos == len(text):
            return _flatten(values)
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        values.append(Record(value, line))
        line += text.count("\n", pos, end)
        pos = end


def _flatten(values: list[Record]) -> list[Record]:
    """One top-level list stands for its items, as in a trace file."""
    if len(values) == 1 and isinstance(values[0].value, list):
        return [Record(item, values[0].line) for item in values[0].value]
    return values


def _last_document(text: str) -> list[Record] | None:
    """The last JSON object or list that starts at the beginning of a line and parses completely."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for index in range(len(lines) - 1, -1, -1):
        if lines[index][:1] in ("{", "["):
            try:
                value, _ = _DECODER.raw_decode(text, offsets[index])
            except json.JSONDecodeError:
                continue
            return _flatten([Record(value, index + 1)])
    return None

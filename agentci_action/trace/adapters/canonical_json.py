"""The canonical format itself: each record is one Trace object (see DESIGN.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from agentci_action._util.errors import Problem, TraceError
from agentci_action._util.field_errors import field_message
from agentci_action.trace.canonical import Trace, compact

if TYPE_CHECKING:
    from agentci_action.trace.json_records import Record

NAME = "canonical"


CANONICAL_FIELDS = frozenset(Trace.model_fields)
MARKERS = frozenset({"id", "query", "final_answer", "tool_calls"})


def detect(records: list[Record]) -> bool:
    return all(isinstance(r.value, dict) and ("id" in r.value or "query" in r.value) for r in records)


def looks_canonical(records: list[Record]) -> bool:
    """A canonical file with bad records, which `detect` refuses.

    Some object has id, query, final_answer or tool_calls, and most keys of the file's objects are canonical field
    names. Converting it then reports each bad record at its own line instead of calling the whole file an unknown
    format.
    """
    objects = [r.value for r in records if isinstance(r.value, dict)]
    keys = [key for value in objects for key in value]
    return any(MARKERS & value.keys() for value in objects) and 2 * sum(key in CANONICAL_FIELDS for key in keys) > len(
        keys
    )


def convert(records: list[Record], file: str) -> list[Trace]:
    """One Trace per record.

    The list of records is consumed (emptied): each record is let go once its trace is built, so a file's traces are
    never held twice, as parsed JSON and as models, at once.
    """
    traces: list[Trace] = []
    problems: list[Problem] = []
    records.reverse()  # popped from the end, in file order
    while records:
        record = records.pop()
        if not isinstance(record.value, dict):
            problems.append(Problem(file, record.line, f"expected a trace object, got {type(record.value).__name__}"))
            continue
        try:
            trace = compact(Trace.model_validate(record.value).with_derived_totals())  # before the next record
        except ValidationError as exc:
            for err in exc.errors():
                problems.append(Problem(file, record.line_at(err["loc"]), field_message(err, Trace, name_parent=True)))
            continue
        trace._source = f"{file}:{record.line}"
        traces.append(trace)
    if problems:
        raise TraceError(problems)
    return traces

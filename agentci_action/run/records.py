"""The records a run produced → the one canonical trace of that run (id, query and run index set by AgentCI)."""

from __future__ import annotations

import json
import re

from agentci_action._util.errors import TraceError
from agentci_action._util.text import one_line
from agentci_action.run.jobs import InfraFailure, Job, RunFailure
from agentci_action.spec.models import ModelPrice
from agentci_action.trace.adapters import convert
from agentci_action.trace.adapters.canonical_json import CANONICAL_FIELDS
from agentci_action.trace.canonical import RUN_ERROR_KEY, Trace
from agentci_action.trace.json_records import Record
from agentci_action.trace.pricing import price_trace

# An error object (`{"error": ...}` without trace fields) whose text says this is retried as an infrastructure failure.
TRANSIENT = re.compile(
    r"rate.?limit|overloaded|too many requests|\b429\b|\b529\b|\b503\b|temporarily unavailable|try again", re.I
)
TRACE_FIELDS = frozenset({"final_answer", "tool_calls", "llm_calls", "spans", "object", "messages", "output"})


def error_object(records: list[Record]) -> str | None:
    """The text of an error the agent reported instead of a trace ({"error": "..."} or {"error": {...}}), else None."""
    if len(records) != 1 or not isinstance(records[0].value, dict):
        return None
    value = records[0].value
    if "error" not in value or TRACE_FIELDS & value.keys() or not value["error"]:
        return None
    error = value["error"]
    return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False, sort_keys=True)


def trace_of_run(
    records: list[Record],
    job: Job,
    source: str,
    trace_format: str | None = None,
    pricing: dict[str, ModelPrice] | None = None,
) -> Trace:
    """Convert, check there is exactly one trace, stamp it with the job's id, query text and run index, price it.

    The format is detected unless named. A conversation's turn that returns its whole session so far (a LangGraph
    thread's state) is read as that session's last turn. Raises InfraFailure for a transient error object, RunFailure
    for any other error object or anything that is not one trace.
    """
    error = error_object(records)
    if error is not None:
        if TRANSIENT.search(error):
            raise InfraFailure(f"the agent reported a transient error: {one_line(error)[:300]}")
        raise RunFailure(f"the agent reported an error instead of a trace: {one_line(error)[:300]}")
    for record in records:  # a canonical trace needs no id or query: the run's own are set below
        if (
            isinstance(record.value, dict)
            and record.value
            and record.value.keys() <= CANONICAL_FIELDS - {"id", "query"}
        ):
            record.value["id"] = job.query.key
    try:
        traces = convert(records, source, trace_format)
    except TraceError as exc:
        first = exc.problems[0]
        more = f" (and {len(exc.problems) - 1} more problems)" if len(exc.problems) > 1 else ""
        raise RunFailure(f"returned JSON that is not a trace: {first.message}{more}") from None
    if len(traces) != 1:
        raise RunFailure(
            f"returned {len(traces)} traces for one run: return exactly one"
            if traces
            else "returned JSON that validates to no trace: return an object such as "
            '{"final_answer": "...", "tool_calls": [...]}'
        )
    trace = traces[0]
    if job.turn and trace.turns:  # the agent recorded its session so far (adapters/_sessions.py): this turn is the last
        trace = trace.turns[-1]
    trace = trace.model_copy(update={"id": job.query.key, "query": job.message, "run": job.run})
    trace._source = source
    return price_trace(trace, pricing)


def error_trace(job: Job, message: str) -> Trace:
    """The record of a run that produced no trace: evaluated as an error for its query, re-run by --resume."""
    return Trace(id=job.query.key, query=job.query.query, run=job.run, metadata={RUN_ERROR_KEY: message})

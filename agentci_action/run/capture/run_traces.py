"""Captured spans → canonical traces, read by the same OpenTelemetry readers as a saved span file.

All the spans one run exported belong to its trace, whatever their trace ids: an agent without a root span
of its own (say the openai-v2 instrumentation alone) starts a new OpenTelemetry trace at every model call.
So `run_document` puts them under one trace id and marks the first with the run's `agentci.query_id` (the
attribute the readers match a trace by). Spans that name no run (`agentci collect` keeps them) are read as a
span file is: one trace per trace id, matched by the `agentci.query_id` span attribute or the user message.
Spans with no `gen_ai.*` or OpenInference attribute are an error that says which instrumentation to add.
"""

from __future__ import annotations

from typing import Any

from agentci_action._util.errors import Problem, TraceError
from agentci_action.run.capture.otlp import spans_of
from agentci_action.run.capture.receiver import QUERY_ID
from agentci_action.trace.adapters import convert
from agentci_action.trace.canonical import Trace
from agentci_action.trace.json_records import Record


def run_document(resource_spans: list[dict[str, Any]], query_id: str) -> dict[str, Any]:
    """One OTLP/JSON document of a run's spans under the first span's trace id (the input is not changed)."""
    trace_id = next((span.get("traceId") for r in resource_spans for span in spans_of(r)), None) or "0" * 32
    marked = False

    def relabel(span: dict[str, Any]) -> dict[str, Any]:
        nonlocal marked
        span = {key: value for key, value in span.items() if key != "trace_id"} | {"traceId": trace_id}
        if not marked:
            span["attributes"] = [
                *(span.get("attributes") or []),
                {"key": QUERY_ID, "value": {"stringValue": query_id}},
            ]
            marked = True
        return span

    return {
        "resourceSpans": [
            {
                "resource": resource.get("resource") or {},
                "scopeSpans": [{"spans": [relabel(span) for span in spans_of(resource)]}],
            }
            for resource in resource_spans
        ]
    }


def read(document: dict[str, Any], source: str) -> list[Trace]:
    """The traces of an OTLP/JSON document; TraceError (naming `source`) when AgentCI cannot read its spans."""
    try:
        return convert([Record(document, 1)], source)
    except TraceError as exc:
        if not any("unrecognised trace format" in problem.message for problem in exc.problems):
            raise
        raise TraceError(Problem(source, 0, unreadable(document))) from None


def unreadable(document: dict[str, Any]) -> str:
    """Why spans in no format AgentCI reads give no trace, and what to add."""
    names = sorted({str(s.get("name", "")) for r in document.get("resourceSpans", []) for s in spans_of(r)})
    shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    return (
        f"spans arrived ({shown}) but none carries gen_ai.* or OpenInference attributes: instrument the model "
        "client (opentelemetry-instrumentation-openai-v2, an OpenInference instrumentor, OpenLLMetry, …) on the "
        "tracer provider that exports"
    )


def run_trace(resource_spans: list[dict[str, Any]], query_id: str, run: int, source: str) -> Trace:
    """The canonical trace of one run's spans, with the run's query id and index."""
    traces = read(run_document(resource_spans, query_id), source)
    captured = traces[0].model_copy(update={"id": query_id, "run": run})
    captured._source = traces[0].source
    return captured

"""An OpenAI Agents SDK `RunResult` returned by a `python:` runner's function, read as the SDK's own trace of that run.

While AgentCI calls the function, a tracing processor of ours (`collect()`, registered once beside the SDK's own)
keeps the spans each trace ends with. A returned RunResult names its trace (`_trace_state.trace_id`; else the one
trace that ended during the call is taken), and `records_of_run` gives that trace as the SDK's export records
(`{"object": "trace"}` and `{"object": "trace.span"}`, what `Trace.export()` / `Span.export()` write, plus the
Response object of a Responses API call and the input items it sent), which the openai-agents trace adapter reads: tools with their arguments
and results, model calls with model and tokens, handoffs, guardrails, the final answer.

Needs the SDK's tracing on (it is by default): with OPENAI_AGENTS_DISABLE_TRACING or
`RunConfig(tracing_disabled=True)` the SDK records nothing to read. Stdlib only, so the worker process can load it
without the package.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

KEPT_TRACES = 256  # traces no returned RunResult claimed (the agent's own extra runs) are dropped beyond this


def _plain(value: Any) -> Any:
    """An SDK object among a call's input items as JSON (a pydantic model's dump), else its text."""
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else str(value)


class NoTrace(ValueError):
    """A RunResult whose run the SDK's tracing did not record."""


class SpanCollector:
    """A TracingProcessor keeping each trace's exported head and spans until a RunResult claims them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def _entry(self, trace_id: str) -> dict[str, Any]:
        entry = self._traces.setdefault(trace_id, {"head": None, "spans": []})
        while len(self._traces) > KEPT_TRACES:
            self._traces.popitem(last=False)
        return entry

    def on_trace_start(self, trace: Any) -> None:
        exported = trace.export()
        if exported:
            with self._lock:
                self._entry(trace.trace_id)["head"] = exported

    def on_trace_end(self, trace: Any) -> None:
        """Nothing to do: the spans are kept as each ends."""

    def on_span_start(self, span: Any) -> None:
        """Nothing to do: a span is exported when it ends."""

    def on_span_end(self, span: Any) -> None:
        exported = span.export()
        if not exported:
            return
        response = getattr(span.span_data, "response", None)
        if response is not None and hasattr(response, "model_dump"):  # model and output items of a Responses call
            exported["span_data"]["response"] = response.model_dump(mode="json")
            sent = getattr(span.span_data, "input", None)  # the input items the call sent: its input breakdown
            if sent is not None:
                exported["span_data"]["input"] = json.loads(json.dumps(sent, default=_plain))
        with self._lock:
            self._entry(span.trace_id)["spans"].append(exported)

    def shutdown(self) -> None:
        """Nothing to flush: records live in memory until claimed."""

    def force_flush(self) -> None:
        """Nothing to flush: records live in memory until claimed."""

    def mark(self) -> set[str]:
        with self._lock:
            return set(self._traces)

    def claim(self, trace_id: str | None, since: set[str]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """(head, spans) of `trace_id`, else of the one trace begun since `mark()` returned `since`; None when none."""
        with self._lock:
            if trace_id is None:
                new = [key for key in self._traces if key not in since]
                trace_id = new[0] if len(new) == 1 else None
            entry = self._traces.pop(trace_id, None) if trace_id else None
        if not entry or not entry["spans"]:
            return None
        return entry["head"] or {"object": "trace", "id": trace_id}, entry["spans"]


_COLLECTOR = SpanCollector()
_REGISTERED = threading.Lock()
_registered = False


def collect() -> set[str]:
    """Register the collector with the SDK's tracing (once per process); what `claim` needs to find a new trace."""
    global _registered
    with _REGISTERED:
        if not _registered:
            from agents import add_trace_processor

            add_trace_processor(_COLLECTOR)  # type: ignore[arg-type]  # duck-typed: the SDK is imported only here
            _registered = True
    return _COLLECTOR.mark()


def is_run_result(value: Any) -> bool:
    return type(value).__name__ in ("RunResult", "RunResultStreaming") and hasattr(value, "raw_responses")


def records_of_run(result: Any, query_id: str, since: set[str] | None = None) -> list[dict[str, Any]]:
    """The SDK's trace of the run that returned `result` for query `query_id`, as export records.

    Its head's metadata names the query: a Responses API run's spans carry no input to match it by. NoTrace when the SDK
    recorded none.
    """
    trace_id = getattr(getattr(result, "_trace_state", None), "trace_id", None)
    claimed = _COLLECTOR.claim(trace_id, since or set())
    if claimed:
        head, spans = claimed
        return [{**head, "metadata": {**(head.get("metadata") or {}), "agentci.query_id": query_id}}, *spans]
    raise NoTrace(
        "returned an Agents SDK RunResult, but the SDK recorded no trace of that run: turn its tracing on "
        "(unset OPENAI_AGENTS_DISABLE_TRACING, no RunConfig(tracing_disabled=True)), or return a trace"
    )

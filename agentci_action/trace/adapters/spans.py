"""Read OpenTelemetry spans into plain `Span`s, whatever JSON shape they were saved in (not an adapter itself).

Accepted shapes, one per record:
- OTLP/JSON: a `resourceSpans` document (the collector's file exporter writes one per line). Keys in
  lowerCamelCase or snake_case; ids in hex or base64; `kind` and `status.code` as numbers or names;
  attribute values as `{stringValue|intValue|doubleValue|boolValue|arrayValue|kvlistValue|bytesValue}`.
- One span as the OpenTelemetry Python SDK prints it (`span.to_json()`, the console exporter, Arize
  Phoenix exports): `context.trace_id` / `span_id`, `parent_id`, ISO times, flat or nested `attributes`.
- One span as the OpenTelemetry JavaScript SDK holds it (a ReadableSpan written as JSON, e.g. by the
  Vercel AI SDK's users): `spanContext.traceId` / `spanId`, `parentSpanId` or `parentSpanContext.spanId`,
  `startTime` / `endTime` as [seconds, nanoseconds].
Attribute values that are JSON strings stay strings here; the adapters parse the ones they read.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentci_action._util.errors import Problem, TraceError
from agentci_action.trace.adapters._conventions import SHAPE_ERRORS, duration_ms, parse_time, shape_problem

if TYPE_CHECKING:
    from agentci_action.trace.json_records import Record

ERROR_STATUSES = {2, "2", "STATUS_CODE_ERROR", "ERROR", "StatusCode.ERROR"}


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float | None  # seconds since the epoch
    end: float | None
    attributes: dict[str, Any]
    error: str | None  # status message / exception message when the span failed, else None
    line: int  # where its record starts in the file
    position: int  # order in the file, the last tie-breaker
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    event_times: dict[str, float] = field(default_factory=dict)  # event name → when it first occurred (seconds)

    def since_start_ms(self, event: str) -> float | None:
        """Milliseconds from the span's start to the first `event`; None when either time is unknown."""
        return duration_ms(self.start, self.event_times.get(event))


def _get(obj: dict[str, Any], camel: str, snake: str, default: Any = None) -> Any:
    return obj.get(camel, obj.get(snake, default))


def normalise_id(value: Any) -> str | None:
    """Lower-case hex of a trace or span id given in hex (optionally 0x-prefixed) or base64."""
    if value in (None, ""):
        return None
    text = str(value).lower().removeprefix("0x")
    if len(text) in (16, 32) and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        raw = base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return str(value)
    return raw.hex() if len(raw) in (8, 16) else str(value)


def any_value(value: Any) -> Any:
    """The Python value of an OTLP AnyValue."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            return int(value[key])
    for key in ("arrayValue", "array_value"):
        if key in value:
            return [any_value(v) for v in (value[key] or {}).get("values", [])]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            return key_values((value[key] or {}).get("values", []))
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    return None


def key_values(items: list[dict[str, Any]]) -> dict[str, Any]:
    """An OTLP attribute list [{key, value}] as a dict."""
    return {item["key"]: any_value(item.get("value")) for item in items or []}


def flatten(attributes: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attribute mappings ({"llm": {"model_name": …}}) as dotted keys ("llm.model_name")."""
    flat: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _nanos(value: Any) -> float | None:
    return int(value) / 1e9 if value not in (None, "", 0, "0") else None


def _first_times(events: list[tuple[str, Any]]) -> dict[str, float]:
    """{event name: earliest time} of (name, time) pairs whose time is known."""
    times: dict[str, float] = {}
    for name, moment in events:
        if moment is not None:
            times[name] = min(moment, times.get(name, moment))
    return times


def _error_of(
    status: dict[str, Any], events: list[tuple[str, dict[str, Any]]], attributes: dict[str, Any]
) -> str | None:
    code = _get(status, "code", "status_code")
    if code not in ERROR_STATUSES:
        return None
    for name, attrs in events:
        if name == "exception" and attrs.get("exception.message"):
            return str(attrs["exception.message"])
    return str(status.get("message") or status.get("description") or attributes.get("error.type") or "error")


def _otlp_walk(document: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(resource, raw span) for every span of an OTLP document, in file order.

    `scopeSpans`, or the older `instrumentationLibrarySpans` (OTLP before 0.15), in camelCase or snake_case. Reading and
    detection both walk with this, so a file detection accepts is a file the reader reads.
    """
    for resource_spans in _get(document, "resourceSpans", "resource_spans") or []:
        resource = resource_spans.get("resource") or {}
        scopes = (
            _get(resource_spans, "scopeSpans", "scope_spans")
            or _get(resource_spans, "instrumentationLibrarySpans", "instrumentation_library_spans")
            or []
        )
        for scope_spans in scopes:
            for raw in scope_spans.get("spans") or []:
                yield resource, raw


def _otlp_spans(document: dict[str, Any], line: int, start_position: int) -> list[Span]:
    spans: list[Span] = []
    for resource, raw in _otlp_walk(document):
        attributes = key_values(raw.get("attributes", []))
        raw_events = raw.get("events", [])
        events = [(e.get("name", ""), key_values(e.get("attributes", []))) for e in raw_events]
        times = _first_times(
            [(e.get("name", ""), _nanos(_get(e, "timeUnixNano", "time_unix_nano"))) for e in raw_events]
        )
        spans.append(
            Span(
                trace_id=normalise_id(_get(raw, "traceId", "trace_id")) or "",
                span_id=normalise_id(_get(raw, "spanId", "span_id")) or "",
                parent_id=normalise_id(_get(raw, "parentSpanId", "parent_span_id")),
                name=raw.get("name", ""),
                start=_nanos(_get(raw, "startTimeUnixNano", "start_time_unix_nano")),
                end=_nanos(_get(raw, "endTimeUnixNano", "end_time_unix_nano")),
                attributes=attributes,
                error=_error_of(raw.get("status") or {}, events, attributes),
                line=line,
                position=start_position + len(spans),
                events=events,
                resource=key_values(resource.get("attributes", [])),
                event_times=times,
            )
        )
    return spans


def _hrtime(value: Any) -> float | None:
    """Seconds since the epoch of a JavaScript SDK time: [seconds, nanoseconds] (HrTime) or milliseconds."""
    if isinstance(value, list) and len(value) == 2:
        return int(value[0]) + int(value[1]) / 1e9
    return float(value) / 1000 if isinstance(value, (int, float)) and value else None


@dataclass(frozen=True)
class _Layout:
    """Where one JSON layout of a single span keeps its ids and times, and how it writes a time."""

    ids: tuple[str, str, str]  # dotted paths of the trace id, the span id and the parent span id
    times: tuple[str, str, str]  # keys of the start, the end and an event's time
    to_seconds: Callable[[Any], float | None]  # a time as written → seconds since the epoch, or None


# The Python SDK's `span.to_json()`: `context.trace_id` / `span_id`, `parent_id`, ISO times.
PYTHON_SDK = _Layout(
    ("context.trace_id", "context.span_id", "parent_id"), ("start_time", "end_time", "timestamp"), parse_time
)
# The JavaScript SDK's ReadableSpan as JSON: `spanContext`, `parentSpanId` (or `parentSpanContext.spanId`), HrTime.
JS_SDK = _Layout(
    ("spanContext.traceId", "spanContext.spanId", "parentSpanId"), ("startTime", "endTime", "time"), _hrtime
)
# MLflow 3's trace data (`Trace.to_dict()["data"]["spans"]`): OTLP field names in snake_case, a flat attribute dict.
MLFLOW = _Layout(
    ("trace_id", "span_id", "parent_span_id"),
    ("start_time_unix_nano", "end_time_unix_nano", "time_unix_nano"),
    _nanos,
)


def _at(raw: dict[str, Any], path: str) -> Any:
    """The value at a dotted path ("context.span_id"), None where a step is missing."""
    head, _, rest = path.partition(".")
    value = raw.get(head)
    return (value.get(rest) if isinstance(value, dict) else None) if rest else value


def span_of(raw: dict[str, Any], layout: _Layout, line: int, position: int) -> Span:
    """One span saved as a JSON object (attributes a mapping, nested or flat), in the given layout."""
    trace_id, span_id, parent_id = (_at(raw, path) for path in layout.ids)
    if parent_id is None and layout is JS_SDK:
        parent_id = _at(raw, "parentSpanContext.spanId")
    start, end, event_time = layout.times
    attributes = flatten(raw.get("attributes") or {})
    raw_events = raw.get("events") or []
    events = [(e.get("name", ""), flatten(e.get("attributes") or {})) for e in raw_events]
    return Span(
        trace_id=normalise_id(trace_id) or "",
        span_id=normalise_id(span_id) or "",
        parent_id=normalise_id(parent_id),
        name=raw.get("name", ""),
        start=layout.to_seconds(raw.get(start)),
        end=layout.to_seconds(raw.get(end)),
        attributes=attributes,
        error=_error_of(raw.get("status") or {}, events, attributes),
        line=line,
        position=position,
        events=events,
        resource=flatten((raw.get("resource") or {}).get("attributes") or {}),
        event_times=_first_times([(e.get("name", ""), layout.to_seconds(e.get(event_time))) for e in raw_events]),
    )


def is_js_span(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("spanContext"), dict) and "name" in value


def is_otlp(value: Any) -> bool:
    return isinstance(value, dict) and ("resourceSpans" in value or "resource_spans" in value)


def is_sdk_span(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("context"), dict)
        and "span_id" in value["context"]
        and "name" in value
    )


def read_spans(records: list[Record], file: str) -> list[Span]:
    """Every span of a file's records. Raises TraceError naming the line of any record that is not spans."""
    spans: list[Span] = []
    problems: list[Problem] = []
    for record in records:
        try:
            if is_otlp(record.value):
                spans.extend(_otlp_spans(record.value, record.line, len(spans)))
            elif is_sdk_span(record.value):
                spans.append(span_of(record.value, PYTHON_SDK, record.line, len(spans)))
            elif is_js_span(record.value):
                spans.append(span_of(record.value, JS_SDK, record.line, len(spans)))
            else:
                problems.append(
                    Problem(
                        file,
                        record.line,
                        "expected an OTLP `resourceSpans` document or one span with `context.span_id` or `spanContext`",
                    )
                )
        except SHAPE_ERRORS as exc:
            problems.append(shape_problem(file, record.line, "OpenTelemetry span", exc))
    if problems:
        raise TraceError(problems)
    return spans


def spans_in(records: list[Record]) -> Iterator[dict[str, Any]]:
    """Attribute dicts of the spans in `records`, one at a time, for cheap format detection (no validation).

    A detector that finds its attribute early stops reading there.
    """
    for record in records:
        value = record.value
        if is_sdk_span(value) or is_js_span(value):
            yield flatten(value.get("attributes") or {})
        elif is_otlp(value):
            yield from ({a.get("key"): True for a in raw.get("attributes", [])} for _, raw in _otlp_walk(value))


def first_line(spans: list[Span]) -> int:
    """The line where a trace's first span record starts."""
    return min(span.line for span in spans)


def by_trace(spans: list[Span]) -> list[list[Span]]:
    """Spans grouped by trace id (traces in order of first appearance), each sorted by start time then file order."""
    groups: dict[str, list[Span]] = {}
    for span in spans:
        groups.setdefault(span.trace_id, []).append(span)
    return [
        sorted(group, key=lambda s: (s.start if s.start is not None else float("inf"), s.position))
        for group in groups.values()
    ]


class Tree:
    """Parent/child lookups inside one trace's spans."""

    def __init__(self, spans: list[Span]):
        self.spans = spans
        self.by_id = {span.span_id: span for span in spans}

    def parent(self, span: Span) -> Span | None:
        return self.by_id.get(span.parent_id) if span.parent_id else None

    def ancestors(self, span: Span) -> Iterator[Span]:
        seen = {span.span_id}
        current = self.parent(span)
        while current is not None and current.span_id not in seen:  # a cycle in a broken file ends the walk
            seen.add(current.span_id)
            yield current
            current = self.parent(current)

    def roots(self) -> list[Span]:
        return [span for span in self.spans if self.parent(span) is None]

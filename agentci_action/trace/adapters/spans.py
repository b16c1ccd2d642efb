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
from dataclasses import dataclass, field
from typing import Any

from ...errors import Problem, TraceError
from .common import SHAPE_ERRORS, duration_ms, parse_time, shape_problem

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


def _get(obj: dict, camel: str, snake: str, default: Any = None) -> Any:
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


def key_values(items: list[dict]) -> dict[str, Any]:
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


def _error_of(status: dict, events: list[tuple[str, dict]], attributes: dict) -> str | None:
    code = _get(status, "code", "status_code")
    if code not in ERROR_STATUSES:
        return None
    for name, attrs in events:
        if name == "exception" and attrs.get("exception.message"):
            return str(attrs["exception.message"])
    return str(status.get("message") or status.get("description") or attributes.get("error.type") or "error")


def _otlp_walk(document: dict):
    """(resource, raw span) for every span of an OTLP document, in file order: `scopeSpans`, or the older
    `instrumentationLibrarySpans` (OTLP before 0.15), in camelCase or snake_case. Reading and detection both
    walk with this, so a file detection accepts is a file the reader reads."""
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


def _otlp_spans(document: dict, line: int, start_position: int) -> list[Span]:
    spans = []
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


def _sdk_span(raw: dict, line: int, position: int) -> Span:
    context = raw.get("context") or {}
    attributes = flatten(raw.get("attributes") or {})
    events = [(e.get("name", ""), flatten(e.get("attributes") or {})) for e in raw.get("events") or []]
    return Span(
        trace_id=normalise_id(context.get("trace_id")) or "",
        span_id=normalise_id(context.get("span_id")) or "",
        parent_id=normalise_id(raw.get("parent_id")),
        name=raw.get("name", ""),
        start=parse_time(raw.get("start_time")),
        end=parse_time(raw.get("end_time")),
        attributes=attributes,
        error=_error_of(raw.get("status") or {}, events, attributes),
        line=line,
        position=position,
        events=events,
        resource=flatten((raw.get("resource") or {}).get("attributes") or {}),
        event_times=_first_times(
            [(e.get("name", ""), parse_time(e.get("timestamp"))) for e in raw.get("events") or []]
        ),
    )


def _hrtime(value: Any) -> float | None:
    """Seconds since the epoch of a JavaScript SDK time: [seconds, nanoseconds] (HrTime) or milliseconds."""
    if isinstance(value, list) and len(value) == 2:
        return int(value[0]) + int(value[1]) / 1e9
    return float(value) / 1000 if isinstance(value, (int, float)) and value else None


def _js_span(raw: dict, line: int, position: int) -> Span:
    """One span as the OpenTelemetry JavaScript SDK holds it (a ReadableSpan as JSON: `spanContext`,
    `parentSpanId` or `parentSpanContext`, HrTime `startTime` / `endTime`, flat `attributes`)."""
    context = raw["spanContext"]
    parent = raw.get("parentSpanId") or (raw.get("parentSpanContext") or {}).get("spanId")
    attributes = flatten(raw.get("attributes") or {})
    events = [(e.get("name", ""), flatten(e.get("attributes") or {})) for e in raw.get("events") or []]
    return Span(
        trace_id=normalise_id(context.get("traceId")) or "",
        span_id=normalise_id(context.get("spanId")) or "",
        parent_id=normalise_id(parent),
        name=raw.get("name", ""),
        start=_hrtime(raw.get("startTime")),
        end=_hrtime(raw.get("endTime")),
        attributes=attributes,
        error=_error_of(raw.get("status") or {}, events, attributes),
        line=line,
        position=position,
        events=events,
        resource=flatten((raw.get("resource") or {}).get("attributes") or {}),
        event_times=_first_times([(e.get("name", ""), _hrtime(e.get("time"))) for e in raw.get("events") or []]),
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


def read_spans(records, file: str) -> list[Span]:
    """Every span of a file's records. Raises TraceError naming the line of any record that is not spans."""
    spans: list[Span] = []
    problems = []
    for record in records:
        try:
            if is_otlp(record.value):
                spans.extend(_otlp_spans(record.value, record.line, len(spans)))
            elif is_sdk_span(record.value):
                spans.append(_sdk_span(record.value, record.line, len(spans)))
            elif is_js_span(record.value):
                spans.append(_js_span(record.value, record.line, len(spans)))
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


def spans_in(records) -> list[dict[str, Any]]:
    """Attribute dicts of the spans in `records`, for cheap format detection (no validation)."""
    found = []
    for record in records:
        value = record.value
        if is_sdk_span(value) or is_js_span(value):
            found.append(flatten(value.get("attributes") or {}))
        elif is_otlp(value):
            found.extend({a.get("key"): True for a in raw.get("attributes", [])} for _, raw in _otlp_walk(value))
    return found


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

    def ancestors(self, span: Span):
        seen = {span.span_id}
        current = self.parent(span)
        while current is not None and current.span_id not in seen:  # a cycle in a broken file ends the walk
            seen.add(current.span_id)
            yield current
            current = self.parent(current)

    def roots(self) -> list[Span]:
        return [span for span in self.spans if self.parent(span) is None]

"""OTLP/HTTP trace export requests and responses, as the OpenTelemetry Protocol specification defines them.

A request body is an `ExportTraceServiceRequest`, encoded as protobuf (`application/x-protobuf`) or as
OTLP/JSON (`application/json`: lowerCamelCase keys, hex trace and span ids, 64-bit integers as numbers or
strings), optionally gzip-compressed (`Content-Encoding: gzip`). Both decode to the same OTLP/JSON
`resourceSpans` dicts that `trace.adapters.spans` reads (protobuf only when a trace is assembled), so
captured spans take the path a saved file takes.

Answers: 200 with an `ExportTraceServiceResponse` (its `partial_success` counting the spans not kept, with
the reason); 400 for a body that does not decode, 413 for one over the size bound (compressed or not),
415 for another content type; every error body is a `google.rpc.Status` in the request's encoding (JSON
when the request's own encoding is unknown). None of these is retryable, so an exporter never resends them.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from agentci_action.trace.adapters.spans import key_values

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
MAX_BODY = 20 * 1024 * 1024  # the OpenTelemetry Collector's default max_request_body_size


class RequestError(Exception):
    """A request the receiver answers with an HTTP error `status` and a google.rpc.Status `message`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def media_type(content_type: str | None) -> str:
    """'application/json; charset=utf-8' → 'application/json'."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def decompress(body: bytes, encoding: str | None, limit: int = MAX_BODY) -> bytes:
    """The body without its Content-Encoding (identity or gzip), never more than `limit` bytes decompressed."""
    encoding = (encoding or "identity").strip().lower()
    if encoding == "identity":
        return body
    if encoding != "gzip":
        raise RequestError(415, f"unsupported Content-Encoding {encoding!r}: send gzip or none")
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise RequestError(400, f"the gzip body does not decompress: {exc}") from None
    if len(data) > limit:
        raise RequestError(413, f"the body decompresses to more than {limit} bytes")
    if not inflater.eof:
        raise RequestError(400, "the gzip body is truncated")
    return data


@dataclass(frozen=True)
class ResourceSpans:
    """One resource's spans from a request.

    The resource's attributes, the number of spans, and the spans as an OTLP/JSON `resourceSpans` dict on demand
    (protobuf is converted only when a trace is assembled, so receiving stays fast).
    """

    resource: dict[str, Any]
    count: int
    source: Any  # a protobuf ResourceSpans message, or the OTLP/JSON dict itself

    def json(self) -> dict[str, Any]:
        return self.source if isinstance(self.source, dict) else _resource_spans(self.source)


def decode(body: bytes, content_type: str | None) -> list[ResourceSpans]:
    """The request's resourceSpans. Raises RequestError (400, 415)."""
    kind = media_type(content_type)
    if kind == PROTOBUF:
        try:
            request = ExportTraceServiceRequest.FromString(body)
        except DecodeError as exc:
            raise RequestError(400, f"the body is not an ExportTraceServiceRequest in protobuf: {exc}") from None
        return [
            ResourceSpans(
                key_values(_attributes(found.resource.attributes)),
                sum(len(scope.spans) for scope in found.scope_spans),
                found,
            )
            for found in request.resource_spans
        ]
    if kind == JSON:
        try:
            document = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise RequestError(400, f"the body is not JSON: {exc}") from None
        return [
            ResourceSpans(
                key_values((found.get("resource") or {}).get("attributes") or []), len(spans_of(found)), found
            )
            for found in _checked_json(document)
        ]
    raise RequestError(415, f"unsupported Content-Type {content_type!r}: send {PROTOBUF} or {JSON}")


def _checked_json(document: Any) -> list[dict[str, Any]]:
    """The resourceSpans of an OTLP/JSON request, after checking the nesting the readers walk."""
    if not isinstance(document, dict):
        raise RequestError(400, "an OTLP/JSON body is an object with `resourceSpans`")
    found = document.get("resourceSpans", document.get("resource_spans", []))
    if not isinstance(found, list):
        raise RequestError(400, "`resourceSpans` must be a list")
    for index, resource_spans in enumerate(found):
        where = f"resourceSpans[{index}]"
        if not isinstance(resource_spans, dict):
            raise RequestError(400, f"{where} must be an object")
        resource = resource_spans.get("resource") or {}
        if not isinstance(resource, dict) or not _attribute_list(resource.get("attributes")):
            raise RequestError(400, f"{where}.resource.attributes must be a list of {{key, value}} objects")
        scopes = resource_spans.get("scopeSpans", resource_spans.get("scope_spans")) or []
        if not isinstance(scopes, list) or not all(
            isinstance(scope, dict)
            and isinstance(scope.get("spans") or [], list)
            and all(isinstance(span, dict) for span in scope.get("spans") or [])
            for scope in scopes
        ):
            raise RequestError(400, f"{where}.scopeSpans must be a list of objects whose `spans` are objects")
    return found


def spans_of(resource_spans: dict[str, Any]) -> list[dict[str, Any]]:
    """The span dicts of one resourceSpans dict (lowerCamelCase or, in JSON, the proto's snake_case names)."""
    scopes = resource_spans.get("scopeSpans", resource_spans.get("scope_spans")) or []
    return [span for scope in scopes for span in scope.get("spans") or []]


def _attribute_list(value: Any) -> bool:
    return value is None or (
        isinstance(value, list) and all(isinstance(item, dict) and isinstance(item.get("key"), str) for item in value)
    )


# -- protobuf → OTLP/JSON ---------------------------------------------------------------------------------------
# Hand-written rather than json_format.MessageToDict, which costs about 50 µs a span (a tenth of that here).


def _any_value(value: Any) -> dict[str, Any]:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return {"stringValue": value.string_value}
    if kind == "int_value":
        return {"intValue": value.int_value}
    if kind == "bool_value":
        return {"boolValue": value.bool_value}
    if kind == "double_value":
        return {"doubleValue": value.double_value}
    if kind == "array_value":
        return {"arrayValue": {"values": [_any_value(item) for item in value.array_value.values]}}
    if kind == "kvlist_value":
        return {"kvlistValue": {"values": _attributes(value.kvlist_value.values)}}
    if kind == "bytes_value":
        return {"bytesValue": value.bytes_value.hex()}
    return {}


def _attributes(items: Any) -> list[dict[str, Any]]:
    return [{"key": item.key, "value": _any_value(item.value)} for item in items]


def _span(span: Any) -> dict[str, Any]:
    return {
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
        "parentSpanId": span.parent_span_id.hex(),
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": span.start_time_unix_nano,
        "endTimeUnixNano": span.end_time_unix_nano,
        "attributes": _attributes(span.attributes),
        "events": [
            {"timeUnixNano": e.time_unix_nano, "name": e.name, "attributes": _attributes(e.attributes)}
            for e in span.events
        ],
        "status": {"code": span.status.code, "message": span.status.message},
    }


def _resource_spans(resource_spans: Any) -> dict[str, Any]:
    return {
        "resource": {"attributes": _attributes(resource_spans.resource.attributes)},
        "scopeSpans": [
            {
                "scope": {"name": scope.scope.name, "version": scope.scope.version},
                "spans": [_span(s) for s in scope.spans],
            }
            for scope in resource_spans.scope_spans
        ],
    }


# -- responses ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes


def success(content_type: str | None, rejected: int = 0, message: str = "") -> Answer:
    """200 with an ExportTraceServiceResponse; `partial_success` only when some spans were not kept."""
    kind = JSON if media_type(content_type) == JSON else PROTOBUF
    if kind == JSON:
        payload = {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}} if rejected else {}
        return Answer(200, JSON, json.dumps(payload).encode())
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return Answer(200, PROTOBUF, response.SerializeToString())


def failure(content_type: str | None, error: RequestError) -> Answer:
    """The HTTP error with a google.rpc.Status body in the request's encoding.

    Code 16 UNAUTHENTICATED for a 401, else 3 INVALID_ARGUMENT.
    """
    code = 16 if error.status == 401 else 3
    if media_type(content_type) == PROTOBUF:
        return Answer(error.status, PROTOBUF, _status_protobuf(code, error.message))
    return Answer(error.status, JSON, json.dumps({"code": code, "message": error.message}).encode())


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _status_protobuf(code: int, message: str) -> bytes:
    """google.rpc.Status {int32 code = 1; string message = 2} in protobuf wire format (fields 1 varint, 2 bytes)."""
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text

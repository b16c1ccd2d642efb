"""The OTLP/HTTP receiver.

What real exporters send is kept by run, what hostile clients send is answered as the OTLP specification says and never
disturbs the runs being captured.
"""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import socket
import struct

import pytest
from google.protobuf.json_format import MessageToDict
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentci_action.run.capture import otlp
from agentci_action.run.capture.environment import resource_attributes, run_environment, unusable_settings
from agentci_action.run.capture.receiver import Receiver
from agentci_action.run.capture.run_traces import run_trace

PROTOBUF = {"content-type": "application/x-protobuf"}


def agent_spans(provider: TracerProvider, answer: str = "Sunny, 21 C.") -> None:
    """An invoke_agent span around one chat call and one tool call, as the OTel GenAI conventions name them."""
    tracer = provider.get_tracer("test-agent")
    with tracer.start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 30,
                "gen_ai.usage.output_tokens": 7,
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Oslo?"}]}]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                ),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": '{"city": "Oslo"}',
            },
        ):
            pass


def export(receiver: Receiver, attributes: dict, compression: Compression = Compression.NoCompression) -> None:
    """Spans sent by the real OTLP/HTTP protobuf exporter, the resource carrying `attributes`."""
    provider = TracerProvider(resource=Resource.create(attributes))
    exporter = OTLPSpanExporter(
        endpoint=f"{receiver.endpoint}/v1/traces", compression=compression, headers=receiver.headers
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent_spans(provider)
    provider.shutdown()


def post(
    receiver: Receiver, body: bytes, headers: dict, path: str = "/v1/traces", method: str = "POST", token: bool = True
):
    """A request as an exporter AgentCI started sends it (its token header).

    Or, with `token=False`, as another local process would.
    """
    connection = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={**(receiver.headers if token else {}), **headers})
        response = connection.getresponse()
        return response.status, response.getheader("content-type"), response.read()
    finally:
        connection.close()


def sdk_request(attributes: dict) -> bytes:
    """An ExportTraceServiceRequest as the SDK's exporter encodes it."""
    provider = TracerProvider(resource=Resource.create(attributes))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent_spans(provider)
    return encode_spans(memory.get_finished_spans()).SerializeToString()


@pytest.fixture
def receiver():
    logged: list[str] = []
    with Receiver(log=logged.append) as running:
        running.logged = logged
        yield running


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_real_exporter_s_spans_are_kept_by_run_and_make_the_run_s_trace(receiver, compression):
    export(receiver, {"agentci.query_id": "oslo", "agentci.run": "1", "service.name": "agent"}, compression)
    assert receiver.settle(("oslo", 1, 0), 5)
    trace = run_trace(receiver.take(("oslo", 1, 0)), "oslo", 1, "otel:oslo")
    assert (trace.id, trace.run, trace.final_answer) == ("oslo", 1, "Sunny, 21 C.")
    assert [(c.name, c.arguments) for c in trace.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert [(c.model, c.input_tokens, c.output_tokens) for c in trace.llm_calls] == [("gpt-4o-mini", 30, 7)]
    assert receiver.take(("oslo", 1, 0)) == [] and receiver.problems == {}


def test_otlp_json_with_base64_or_hex_ids_gives_the_trace_protobuf_gives(receiver):
    request = sdk_request({"agentci.query_id": "q", "agentci.run": "0"})
    assert post(receiver, request, PROTOBUF)[0] == 200
    from_protobuf = run_trace(receiver.take(("q", 0, 0)), "q", 0, "p")
    # json_format writes bytes as base64 and int64 as strings; OTLP/JSON proper writes hex ids.
    as_json = MessageToDict(otlp.ExportTraceServiceRequest.FromString(request))
    hex_json = json.loads(json.dumps(as_json))
    for resource in hex_json["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    for body in (as_json, hex_json):
        status, content_type, payload = post(
            receiver, json.dumps(body).encode(), {"content-type": "application/json; charset=utf-8"}
        )
        assert (status, content_type, json.loads(payload)) == (200, "application/json", {})
        from_json = run_trace(receiver.take(("q", 0, 0)), "q", 0, "j")
        assert from_json.model_dump(exclude={"metadata"}) == from_protobuf.model_dump(exclude={"metadata"})


def test_spans_of_several_otel_traces_in_one_run_make_one_trace(receiver):
    provider = TracerProvider(resource=Resource.create({"agentci.query_id": "split", "agentci.run": "0"}))
    exporter = OTLPSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", headers=receiver.headers)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent_spans(provider, "first")
    agent_spans(provider, "second")  # a second root span: a second OpenTelemetry trace
    provider.shutdown()
    trace = run_trace(receiver.take(("split", 0, 0)), "split", 0, "s")
    assert (len(trace.llm_calls), len(trace.tool_calls), trace.final_answer) == (2, 2, "second")


def status_of(payload: bytes, content_type: str) -> Status:
    if content_type == "application/json":
        return Status(**json.loads(payload))
    return Status.FromString(payload)


@pytest.mark.parametrize(
    "body, headers, expected",
    [
        (b"\x0a\xff\xff\x01", PROTOBUF, 400),  # a length prefix running past the end: truncated protobuf
        (b"not json", {"content-type": "application/json"}, 400),
        (b"[1, 2]", {"content-type": "application/json"}, 400),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [1]}]}]}', {"content-type": "application/json"}, 400),
        (b"{}", {"content-type": "text/plain"}, 415),
        (b"", {}, 415),
        (b"{}", {"content-type": "application/json", "content-encoding": "br"}, 415),
        (b"\x1f\x8b\x08\x00garbage", {**PROTOBUF, "content-encoding": "gzip"}, 400),
        (gzip.compress(b"\x0a\x02\x0a\x00", mtime=0)[:-12], {**PROTOBUF, "content-encoding": "gzip"}, 400),  # cut short
    ],
)
def test_garbage_gets_a_4xx_with_a_status_in_the_request_s_encoding_and_is_logged(receiver, body, headers, expected):
    status, content_type, payload = post(receiver, body, headers)
    assert status == expected
    assert content_type == (
        "application/x-protobuf" if headers.get("content-type") == PROTOBUF["content-type"] else "application/json"
    )
    assert status_of(payload, content_type).code == 3 and status_of(payload, content_type).message
    assert len(receiver.logged) == 1 and str(expected) in receiver.logged[0]


def test_a_50_mb_body_is_refused_with_413_before_it_is_kept(receiver):
    status, _, payload = post(receiver, b"\x00" * (50 * 1024 * 1024), PROTOBUF)
    assert status == 413 and "exceeds" in Status.FromString(payload).message
    bomb = gzip.compress(b"\x00" * (otlp.MAX_BODY + 1))  # small on the wire, over the bound unpacked
    status, _, payload = post(receiver, bomb, {**PROTOBUF, "content-encoding": "gzip"})
    assert status == 413 and "decompresses" in Status.FromString(payload).message
    assert receiver.problems == {"413": 2}


def test_other_methods_paths_and_signals(receiver):
    assert post(receiver, b"", {}, method="GET")[0] == 405
    assert post(receiver, b"x", PROTOBUF, path="/v1/trace")[0] == 404
    for path in ("/v1/metrics", "/v1/logs"):  # OTEL_EXPORTER_OTLP_ENDPOINT sends every signal here: accepted, dropped
        assert post(receiver, b"", PROTOBUF, path=path)[:2] == (200, "application/x-protobuf")
    raw = socket.create_connection(("127.0.0.1", receiver.port))
    token = f"x-agentci-token: {receiver.token}\r\n".encode()
    raw.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n" + token + b"Content-Type: application/x-protobuf\r\n\r\n")
    assert raw.recv(100).startswith(b"HTTP/1.1 411")
    raw.close()


def test_a_flood_of_foreign_spans_is_answered_with_partial_success_and_leaves_runs_intact(receiver):
    foreign = sdk_request({"service.name": "some-other-service"})
    for _ in range(200):
        status, _, payload = post(receiver, foreign, PROTOBUF)
        answer = ExportTraceServiceResponse.FromString(payload)
        assert status == 200 and answer.partial_success.rejected_spans == 3
        assert "agentci.query_id" in answer.partial_success.error_message
    export(receiver, {"agentci.query_id": "mine", "agentci.run": "0"})
    assert receiver.runs() == [("mine", 0, 0)] and receiver.foreign_spans == 600
    assert run_trace(receiver.take(("mine", 0, 0)), "mine", 0, "m").final_answer == "Sunny, 21 C."
    assert len(receiver.logged) == 1 and "some-other-service" in receiver.logged[0]


def test_collect_keeps_foreign_spans():
    with Receiver(keep_foreign=True, log=lambda m: None) as receiver:
        status, _, payload = post(receiver, sdk_request({"service.name": "svc"}), PROTOBUF)
        assert status == 200 and payload == b"" and receiver.runs() == [None]


def test_the_receiver_listens_on_loopback_only_and_frees_its_port():
    receiver = Receiver(log=lambda m: None).start()
    host, port = receiver._http.server_address[:2]
    assert host == "127.0.0.1"
    receiver.stop()
    receiver.stop()
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))  # free again
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            Receiver(port=taken.getsockname()[1]).start()


def test_the_run_environment_points_at_the_receiver_and_extends_the_resource():
    inherited = {"OTEL_RESOURCE_ATTRIBUTES": "service.name=bot,agentci.query_id=stale,deployment.environment=ci"}
    env = run_environment("http://127.0.0.1:5", "t0k", "refund,eu=1", 2, inherited)
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:5"
    assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == "http://127.0.0.1:5/v1/traces"
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == (
        "service.name=bot,deployment.environment=ci,agentci.query_id=refund%2Ceu%3D1,agentci.run=2"
    )
    assert env["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/protobuf" and env["OTEL_BSP_SCHEDULE_DELAY"] == "100"
    chosen = run_environment(
        "e", "t", "q", 0, {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_BSP_SCHEDULE_DELAY": "9"}
    )
    assert "OTEL_EXPORTER_OTLP_PROTOCOL" not in chosen and "OTEL_BSP_SCHEDULE_DELAY" not in chosen
    assert resource_attributes(None, "q", 0) == "agentci.query_id=q,agentci.run=0"


def test_the_sdk_reads_the_percent_encoded_query_id_back(monkeypatch):
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", resource_attributes("a=b", "refund,eu=1 ü", 3))
    assert Resource.create().attributes["agentci.query_id"] == "refund,eu=1 ü"
    assert Resource.create().attributes["agentci.run"] == "3" and Resource.create().attributes["a"] == "b"


def test_settings_under_which_no_span_arrives_are_named():
    found = unusable_settings(
        {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}
    )
    assert [line.split("=")[0] for line in found] == [
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
    ]
    assert unusable_settings({"OTEL_TRACES_EXPORTER": "otlp,console"}) == []


# A per-capture secret: spans without it (another local process that found the port) are refused.


@pytest.mark.parametrize("token", [None, "forged", ""])
def test_spans_without_the_capture_token_are_refused_with_401_and_never_kept(receiver, token):
    forged = sdk_request({"agentci.query_id": "refund", "agentci.run": "0"})
    headers = {**PROTOBUF, **({"x-agentci-token": token} if token is not None else {})}
    status, content_type, payload = post(receiver, forged, headers, token=False)
    assert status == 401 and status_of(payload, content_type).code == 16  # UNAUTHENTICATED
    assert receiver.runs() == [] and receiver.spans_received == 0
    assert receiver.problems == {"401": 1} and "x-agentci-token" in receiver.logged[0]
    assert post(receiver, forged, PROTOBUF)[0] == 200 and receiver.runs() == [("refund", 0, 0)]  # with the token


def test_each_receiver_has_its_own_token():
    with Receiver(log=lambda m: None) as first, Receiver(log=lambda m: None) as second:
        assert first.token != second.token and len(first.token) >= 40
        assert (
            post(second, sdk_request({"agentci.query_id": "q"}), {**PROTOBUF, **first.headers}, token=False)[0] == 401
        )


@pytest.mark.parametrize(
    "inherited",
    [{}, {"OTEL_EXPORTER_OTLP_HEADERS": "api-key=vendor", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-agentci-token=old"}],
)
def test_the_sdk_s_exporter_sends_the_token_from_the_run_environment_alone(receiver, monkeypatch, inherited):
    """The exporter is configured by nothing but the variables AgentCI sets, extending what the agent inherited.

    The signal-specific one too, which the SDK reads instead of the general one when both are set.
    """
    env = run_environment(receiver.endpoint, receiver.token, "oslo", 0, inherited)
    assert env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] == f"x-agentci-token={receiver.token}"
    assert env["OTEL_EXPORTER_OTLP_HEADERS"].endswith(f"x-agentci-token={receiver.token}")
    assert ("api-key=vendor," in env["OTEL_EXPORTER_OTLP_HEADERS"]) == bool(inherited)
    for name, value in {**inherited, **env}.items():
        monkeypatch.setenv(name, value)
    provider = TracerProvider(resource=Resource.create())
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    agent_spans(provider)
    provider.shutdown()
    assert receiver.settle(("oslo", 0, 0), 5) and receiver.problems == {}


def test_collect_reads_a_run_s_turns_as_one_conversation(receiver):
    from agentci_action.run.capture.collect import traces_of

    for turn, answer in ((2, "Still sunny."), (1, "Sunny, 21 C.")):  # sent out of order
        provider = TracerProvider(resource=Resource.create({"agentci.query_id": "oslo", "agentci.turn": str(turn)}))
        exporter = OTLPSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", headers=receiver.headers)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        agent_spans(provider, answer)
        provider.shutdown()
    assert receiver.settle(("oslo", 0, 1), 5) and receiver.settle(("oslo", 0, 2), 5)
    (conversation,) = traces_of(receiver)
    assert conversation.id == "oslo" and conversation.run == 0
    assert [turn.final_answer for turn in conversation.turns] == ["Sunny, 21 C.", "Still sunny."]
    assert conversation.final_answer == "Still sunny." and conversation.tool_names == ["get_weather"] * 2
    assert conversation.total_tokens == 2 * 37


def test_a_client_resetting_its_connection_mid_request_is_no_error_on_standard_error(capfd):
    """An agent killed by its timeout (or any local process) can reset its connection: no traceback is printed."""
    with Receiver(log=lambda m: None) as receiver:
        raw = socket.create_connection(("127.0.0.1", receiver.port))
        raw.sendall(b"POST /v1/tra")  # the request line itself cut short
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset, not a FIN
        raw.close()
        with socket.create_connection(("127.0.0.1", receiver.port)) as after:  # still serving
            after.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert after.recv(64).startswith(b"HTTP/1.")
    assert "Exception occurred" not in capfd.readouterr().err

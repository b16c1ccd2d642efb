"""The OTLP receiver's throughput, and what capture adds to a run, measured side by side in one run.

    python benchmarks/bench_otel_receiver.py [--spans 100000] [--runs 40]

Throughput: batches of 512 spans (the SDK's BatchSpanProcessor batch), encoded by the real OTLP exporter's
encoder from real SDK spans with GenAI attributes (messages included), spread over 200 runs, POSTed by a
separate client process over two keep-alive connections, protobuf and gzip-compressed protobuf. Printed:
spans per second received (decoded and kept by run), and received then assembled into the runs' traces.

Per run: a small agent process (the OpenTelemetry SDK, 12 spans through a BatchSpanProcessor and the OTLP/HTTP
exporter) run `--runs` times exporting to a bare OTLP sink that only answers 200, and as many times under
capture (the receiver, the run's environment, waiting for its spans, assembling and writing its trace),
alternating. Printed: median wall time of each, their difference, and capture's own time after the agent
exits (median and 95th percentile).
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentci_action.run.capture.collect import write
from agentci_action.run.capture.environment import run_environment
from agentci_action.run.capture.receiver import Receiver
from agentci_action.run.capture.run_traces import run_trace

BATCH = 512
RUNS_IN_FLIGHT = 200
MESSAGES = '[{"role": "assistant", "parts": [{"type": "text", "content": "' + "x" * 300 + '"}]}]'

SENDER = textwrap.dedent(
    """
    import http.client, sys, threading, time
    port, token, encoding, files = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    bodies = [open(f, "rb").read() for f in files]
    headers = {"content-type": "application/x-protobuf", "x-agentci-token": token}
    if encoding == "gzip":
        headers["content-encoding"] = "gzip"
    def send(mine):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        for body in mine:
            connection.request("POST", "/v1/traces", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            assert response.status == 200, response.status
    threads = [threading.Thread(target=send, args=(bodies[i::2],)) for i in range(2)]
    start = time.perf_counter()
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(time.perf_counter() - start)
    """
)


def batches(total: int) -> list[bytes]:
    """ExportTraceServiceRequests of BATCH spans each.

    A chat span and a tool span per agent turn, one resource (run) per 100 spans.
    """
    bodies = []
    for first in range(0, total, BATCH):
        memory = InMemorySpanExporter()
        providers = {}
        for number in range(first, min(first + BATCH, total)):
            run = (number // 100) % RUNS_IN_FLIGHT
            if run not in providers:
                providers[run] = TracerProvider(
                    resource=Resource.create({"agentci.query_id": f"q{run}", "agentci.run": "0"})
                )
                providers[run].add_span_processor(SimpleSpanProcessor(memory))
            tracer = providers[run].get_tracer("bench")
            attributes = (
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": 100,
                    "gen_ai.usage.output_tokens": 20,
                    "gen_ai.output.messages": MESSAGES,
                }
                if number % 2 == 0
                else {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.arguments": '{"id": 1}',
                }
            )
            with tracer.start_as_current_span(
                "chat" if number % 2 == 0 else "execute_tool lookup", attributes=attributes
            ):
                pass
        bodies.append(encode_spans(memory.get_finished_spans()).SerializeToString())
    return bodies


def throughput(total: int, folder: Path) -> None:
    bodies = batches(total)
    for encoding in ("protobuf", "gzip"):
        files = []
        for index, body in enumerate(bodies):
            files.append(folder / f"{encoding}-{index}.bin")
            files[-1].write_bytes(gzip.compress(body) if encoding == "gzip" else body)
        with Receiver(log=lambda message: None) as receiver:
            began = time.perf_counter()
            sent = subprocess.run(
                [sys.executable, "-c", SENDER, str(receiver.port), receiver.token, encoding, *map(str, files)],
                capture_output=True,
                text=True,
                check=True,
            )
            received = time.perf_counter() - began - _startup()
            sending = float(sent.stdout)
            assembled_began = time.perf_counter()
            traces = [run_trace(receiver.take(key), key[0], key[1], "bench") for key in receiver.runs()]
            assembling = time.perf_counter() - assembled_began
        assert receiver.spans_received == total and len(traces) == min(RUNS_IN_FLIGHT, -(-total // 100))
        size = sum(f.stat().st_size for f in files) / len(files) / 1024
        print(
            f"  {encoding:9s} ({size:,.0f} KiB a batch): received {total / sending:>9,.0f} spans/s · "
            f"received and assembled into traces {total / (sending + assembling):>9,.0f} spans/s "
            f"(wall incl. client start {total / max(received, 1e-9):,.0f} spans/s)"
        )


_STARTUP: list[float] = []


def _startup() -> float:
    """Seconds a bare `python -c pass` takes here, subtracted from the wall time around the client."""
    if not _STARTUP:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        _STARTUP.append(time.perf_counter() - began)
    return _STARTUP[0]


AGENT = textwrap.dedent(
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}):
        for turn in range(6):
            with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5,
                    "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]'}):
                pass
            if turn < 5:
                with tracer.start_as_current_span("execute_tool t", attributes={"gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "t"}):
                    pass
    """
)


class Sink(BaseHTTPRequestHandler):
    """A bare OTLP endpoint: reads the body, answers 200 with an empty response."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def per_run(runs: int, folder: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    Thread(target=sink.serve_forever, daemon=True).start()
    bare, captured, after_exit = [], [], []
    with Receiver(log=lambda message: None) as receiver:
        for run in range(runs):
            env = {**base, "OTEL_BSP_SCHEDULE_DELAY": "100"}
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{sink.server_address[1]}"
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", AGENT], env=env, check=True)
            bare.append(time.perf_counter() - began)

            began = time.perf_counter()
            env = {**base, **run_environment(receiver.endpoint, receiver.token, f"q{run}", 0, base)}
            subprocess.run([sys.executable, "-c", AGENT], env=env, check=True)
            exited = time.perf_counter()
            assert receiver.settle((f"q{run}", 0), 5)
            trace = run_trace(receiver.take((f"q{run}", 0)), f"q{run}", 0, "bench")
            write(folder, [trace], print)
            done = time.perf_counter()
            assert len(trace.llm_calls) == 6 and len(trace.tool_calls) == 5
            captured.append(done - began)
            after_exit.append(done - exited)
    sink.shutdown()
    bare_ms, captured_ms = statistics.median(bare) * 1000, statistics.median(captured) * 1000
    after = sorted(after_exit)
    print(f"  agent exporting to a bare sink: median {bare_ms:7.1f} ms a run")
    print(f"  agent under capture:            median {captured_ms:7.1f} ms a run ({captured_ms - bare_ms:+.1f} ms)")
    print(
        f"  capture's own work after exit (wait for spans, assemble, write): median "
        f"{statistics.median(after) * 1000:.2f} ms, p95 {after[int(0.95 * (len(after) - 1))] * 1000:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"Receiver throughput, {args.spans:,} spans in batches of {BATCH} (target ≥ 20,000 spans/s):")
        throughput(args.spans, Path(tmp))
        print(f"Per run, {args.runs} runs each, alternating (target: capture adds ≤ 50 ms):")
        per_run(args.runs, Path(tmp) / "traces")


if __name__ == "__main__":
    main()

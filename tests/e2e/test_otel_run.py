"""`agentci run` with `capture: otel`.

Each run's trace from the spans its process exported, attributed to the right query and run however many run at once,
evaluated like any recorded trace; a run that sent no spans is an error naming the causes; hostile clients do not
disturb the runs; the receiver stops on every way out.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

from agentci_action.run import RunOptions, RunSetup, run_agent
from agentci_action.spec.loader import load_spec
from agentci_action.trace.load import load_traces
from e2e.test_otel_capture import AGENT, CITIES, INSTRUMENTATIONS, SCRIPT, assert_facts, question
from tests.fakes.scripted_openai import ScriptedOpenAIServer

ORDER_AGENT = ROOT / "examples" / "otel-capture" / "agent.py"


def clean_environment(**extra: str) -> dict[str, str]:
    """The test process's environment without OTEL_* / AGENTCI_* leftovers, the repository importable."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCI_"))}
    return {**kept, "PYTHONPATH": str(ROOT), **extra}


def write_spec(folder: Path, runner: dict, queries: list[dict]) -> Path:
    path = folder / "agentci_spec.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "agent": "otel-test", "runner": runner, "queries": queries}))
    return path


def agentci(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentci_action", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def model():
    with ScriptedOpenAIServer(SCRIPT) as server:
        yield server


WEATHER_QUERIES = [
    {
        "id": key,
        "query": question(city),
        "correctness": {"expected_in_answer": [city]},
        "cost": {"max_llm_calls": 3},
    }
    for key, city in CITIES.items()
]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_agentci_run_capture_otel_records_what_the_script_made_and_test_evaluates_it(model, tmp_path, instrumentation):
    runner = {"command": [sys.executable, str(AGENT), instrumentation], "workers": 2, "retries": 0}
    runner["env"] = {"OPENAI_BASE_URL": model.openai_url, "OPENAI_API_KEY": "sk-test"}
    spec = write_spec(tmp_path, runner, WEATHER_QUERIES)
    env = clean_environment()
    done = agentci("run", "--spec", str(spec), "--output", str(tmp_path / "traces"), "--capture", "otel", env=env)
    assert done.returncode == 0, done.stderr
    assert "receiving the agent's OpenTelemetry spans on http://127.0.0.1:" in done.stderr
    traces = {t.id: t for t in load_traces([str(tmp_path / "traces")])}
    assert sorted(traces) == sorted(CITIES)
    for key, city in CITIES.items():
        assert (traces[key].run, traces[key].query) == (0, question(city))
        # openai-v2 and OpenInference's OpenAI instrumentor record tool calls only inside the messages (read from there)
        assert_facts(traces[key], city)
    tested = agentci("test", "--spec", str(spec), "--traces", str(tmp_path / "traces"), "--format", "json", env=env)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert {r["id"]: r["correctness"]["status"] for r in json.loads(tested.stdout)["results"]} == {
        "oslo": "pass",
        "lima": "pass",
    }


def test_eight_workers_fifty_queries_two_runs_every_span_attributed_to_its_own_run(tmp_path):
    queries = [{"id": f"order-{n}", "query": f"Where is my order {1000 + n}?", "runs": 2} for n in range(50)]
    runner = {"command": [sys.executable, str(ORDER_AGENT)], "capture": "otel", "workers": 8, "retries": 0}
    spec = load_spec(write_spec(tmp_path, runner, queries))
    outcome = run_agent(spec, RunOptions(tmp_path / "traces"), RunSetup(environ=clean_environment()))
    assert (outcome.ran, outcome.failed, outcome.infra) == (100, 0, 0), outcome.errors[:3]
    traces = load_traces([str(tmp_path / "traces")])
    assert len(traces) == 100
    for trace in traces:
        order = str(1000 + int(trace.id.removeprefix("order-")))
        assert [(c.name, c.arguments) for c in trace.tool_calls] == [("lookup_order", {"order_id": order})]
        assert trace.final_answer == f"Order {order} is not found." and len(trace.llm_calls) == 2
    assert sorted((t.id, t.run) for t in traces) == sorted((q["id"], r) for q in queries for r in (0, 1))


def test_a_run_that_sends_no_spans_is_an_error_naming_the_causes(tmp_path):
    runner = {"command": [sys.executable, "-c", "print('done')"], "capture": "otel", "retries": 0}
    spec = write_spec(tmp_path, runner, [{"id": "silent", "query": "anything"}])
    env = clean_environment(OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    began = time.monotonic()
    done = agentci("test", "--spec", str(spec), "--format", "json", env=env)
    assert done.returncode == 2 and time.monotonic() - began < 60
    [result] = json.loads(done.stdout)["results"]
    message = json.dumps(result)
    for cause in ("sent no spans", "no OTLP exporter", "not flushed on exit", "content capture", "grpc"):
        assert cause in message, cause
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=grpc" in done.stderr  # warned before the first run


def test_capture_otel_with_a_python_runner_is_a_spec_error_at_its_line(tmp_path):
    spec = write_spec(tmp_path, {"python": "agent:run", "capture": "otel"}, [{"id": "q", "query": "q"}])
    done = agentci("validate", str(spec), env=clean_environment())
    assert done.returncode == 1 and "capture: otel needs `command:`" in done.stderr
    assert re.search(r"agentci_spec\.yaml:\d+", done.stderr)


def flood(port: int, token: str, stop: threading.Event, answers: list[int], forged: bytes = b"") -> None:
    """Garbage, wrong types, an oversized body and foreign spans, with and without the capture's token.

    With the token as the agent's own process could send them and without it as any other local process, and `forged`
    spans without it, sent until `stop`.
    """
    from unit.run.capture.test_receiver import sdk_request

    foreign = sdk_request({"service.name": "noisy-neighbour"})
    protobuf = {"content-type": "application/x-protobuf"}
    bodies = [
        (b"\x0a\xff\xff", protobuf),
        (b"<html>", {"content-type": "text/html"}),
        (b"\x00" * (21 * 1024 * 1024), protobuf),
        (foreign, protobuf),
    ]
    with_token = [(body, {**headers, "x-agentci-token": token}) for body, headers in bodies]
    while not stop.is_set():
        for body, headers in [*with_token, *bodies, *([(forged, protobuf)] if forged else [])]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                connection.request("POST", "/v1/traces", body=body, headers=headers)
                answers.append(connection.getresponse().status)
            except OSError:
                answers.append(0)
            finally:
                connection.close()


def test_hostile_clients_are_answered_and_the_runs_are_unaffected(tmp_path, capfd):
    queries = [{"id": f"order-{n}", "query": f"Where is my order {1000 + n}?"} for n in range(6)]
    runner = {"command": [sys.executable, str(ORDER_AGENT)], "capture": "otel", "workers": 3, "retries": 0}
    spec = load_spec(write_spec(tmp_path, runner, queries))
    from agentci_action.run.capture.otel import OtelCapture

    capture = OtelCapture(clean_environment())
    stop, answers = threading.Event(), []
    original = capture.start

    def start_then_flood() -> None:
        original()
        receiver = capture.receiver
        threading.Thread(target=flood, args=(receiver.port, receiver.token, stop, answers), daemon=True).start()

    capture.start = start_then_flood
    try:
        outcome = run_agent(
            spec, RunOptions(tmp_path / "traces"), RunSetup(capture=capture, environ=clean_environment())
        )
    finally:
        stop.set()
    assert (outcome.ran, outcome.failed) == (6, 0), outcome.errors
    assert {400, 401, 413, 415, 200} <= set(answers)
    assert capture.receiver.foreign_spans > 0 and capture.receiver.problems["foreign"] > 0
    for trace in load_traces([str(tmp_path / "traces")]):
        assert trace.final_answer == f"Order {1000 + int(trace.id.removeprefix('order-'))} is not found."
    logged = capfd.readouterr().err
    assert "refused a request" in logged and "noisy-neighbour" in logged


def forged_spans(query_id: str, answer: str) -> bytes:
    """An agent's spans for `query_id`'s run 0 whose answer is `answer`, as the SDK's exporter encodes them."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from unit.run.capture.test_receiver import agent_spans

    provider = TracerProvider(resource=Resource.create({"agentci.query_id": query_id, "agentci.run": "0"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent_spans(provider, answer)
    return encode_spans(memory.get_finished_spans()).SerializeToString()


def test_a_local_process_forging_spans_for_a_query_cannot_make_it_pass(tmp_path):
    """The audit's attack.

    Another process finds the receiver's port and posts spans for a failing query with the answer the check wants.
    Without the capture's token they are refused; the run's trace is the agent's own.
    """
    queries = [
        {"id": "order-1", "query": "Where is my order 1000?", "correctness": {"expected_in_answer": ["shipped"]}}
    ]
    runner = {"command": [sys.executable, str(ORDER_AGENT)], "capture": "otel", "retries": 0}
    spec = load_spec(write_spec(tmp_path, runner, queries))
    from agentci_action.run.capture.otel import OtelCapture

    capture = OtelCapture(clean_environment())
    stop, answers, original = threading.Event(), [], capture.start
    forged = forged_spans("order-1", "FORGED: your order has shipped.")

    def start_then_forge() -> None:
        original()
        receiver = capture.receiver
        threading.Thread(target=flood, args=(receiver.port, "", stop, answers, forged), daemon=True).start()
        time.sleep(0.5)  # the forger is posting before the agent starts

    capture.start = start_then_forge
    try:
        outcome = run_agent(
            spec, RunOptions(tmp_path / "traces"), RunSetup(capture=capture, environ=clean_environment())
        )
    finally:
        stop.set()
    [trace] = load_traces([str(tmp_path / "traces")])
    assert trace.final_answer == "Order 1000 is not found." and "FORGED" not in trace.model_dump_json()
    assert [c.name for c in trace.tool_calls] == ["lookup_order"]
    assert (outcome.ran, outcome.failed) == (1, 0) and 401 in answers
    done = agentci(
        "test",
        "--spec",
        str(tmp_path / "agentci_spec.yaml"),
        "--traces",
        str(tmp_path / "traces"),
        env=clean_environment(),
    )
    assert done.returncode == 1, done.stdout  # the agent's own answer fails the check


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_receiver_is_stopped_and_its_port_freed_when_the_run_is_interrupted(tmp_path, stop):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\n")
    runner = {"command": [sys.executable, str(slow)], "capture": "otel", "workers": 2}
    spec = write_spec(tmp_path, runner, [{"id": f"q{n}", "query": f"q{n}"} for n in range(4)])
    process = subprocess.Popen(
        [sys.executable, "-m", "agentci_action", "run", "--spec", str(spec), "--output", str(tmp_path / "out")],
        env=clean_environment(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stderr.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        assert not port_is_free(port)
        time.sleep(1.0)  # the agents are running
        process.send_signal(stop)
        assert process.wait(60) != 0
    finally:
        process.kill()
        process.wait()
    assert port_is_free(port)


def test_the_example_s_recorded_traces_are_what_agentci_run_captures(tmp_path):
    example = tmp_path / "otel-capture"
    shutil.copytree(ROOT / "examples" / "otel-capture", example, ignore=shutil.ignore_patterns("traces"))
    done = agentci(
        "run",
        "--spec",
        str(example / "agentci_spec.yaml"),
        "--output",
        str(example / "traces"),
        env=clean_environment(),
    )
    assert done.returncode == 0, done.stderr
    volatile = {"total_duration_ms", "metadata"}

    def facts(folder: Path) -> dict:
        return {
            t.id: t.model_dump(exclude=volatile | {"tool_calls", "llm_calls"})
            | {
                "tools": [c.model_dump(exclude={"duration_ms"}) for c in t.tool_calls],
                "llm": [c.model_dump(exclude={"duration_ms", "timestamp"}) for c in t.llm_calls],
            }
            for t in load_traces([str(folder)])
        }

    assert facts(example / "traces") == facts(ROOT / "examples" / "otel-capture" / "traces")

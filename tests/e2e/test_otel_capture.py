"""Zero-code capture end to end.

Real agents, instrumented as their owners would (openai-v2, OpenInference, the OpenAI Agents SDK through OpenInference's
processor), talking to a scripted local model, exporting with the real OTLP exporter to AgentCI's receiver; the traces
AgentCI writes are compared with the script's facts.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from helpers import ROOT

from agentci_action.run.capture.collect import collect
from agentci_action.trace.load import load_traces
from tests.fakes.scripted_openai import ScriptedOpenAIServer, scripted_turns

AGENT = ROOT / "tests" / "agents" / "otel_weather_agent.py"
INSTRUMENTATIONS = ["openai-v2", "openinference", "agents-sdk"]
CITIES = {"oslo": "Oslo", "lima": "Lima"}


def question(city: str) -> str:
    return f"What is the weather in {city}?"


def answer(city: str) -> str:
    return f"It is 21 C (69.8 F) in {city}."


SCRIPT = {question(city): scripted_turns(question(city), city, answer(city)) for city in CITIES.values()}


@pytest.fixture(scope="module")
def model():
    with ScriptedOpenAIServer(SCRIPT) as server:
        yield server


def agent_environment(model: ScriptedOpenAIServer) -> dict[str, str]:
    """What the agent needs for its model; nothing about OpenTelemetry, AgentCI sets that."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCI_"))}
    return {**keep, "OPENAI_BASE_URL": model.openai_url, "OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(ROOT)}


def assert_facts(trace, city: str, tools: bool = True) -> None:
    """The facts the model's script makes: the answer, each model call's tokens in order, the tools and arguments."""
    turns = SCRIPT[question(city)]
    assert trace.final_answer == answer(city)
    assert [(c.input_tokens, c.output_tokens) for c in trace.llm_calls] == [
        (t.prompt_tokens, t.completion_tokens) for t in turns
    ]
    assert all(c.model and c.model.startswith("gpt-4o-mini") for c in trace.llm_calls)
    if tools:
        assert [(c.name, c.arguments) for c in trace.tool_calls] == [
            ("get_weather", {"city": city}),
            ("to_fahrenheit", {"celsius": 21}),
        ]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_collect_captures_each_instrumentation_s_run_as_the_script_made_it(model, tmp_path, instrumentation):
    env = {
        **agent_environment(model),
        "AGENTCI_QUERY": question("Oslo"),
        "OTEL_RESOURCE_ATTRIBUTES": "agentci.query_id=oslo,agentci.run=0",
    }
    code = collect(tmp_path, port=0, command=[sys.executable, str(AGENT), instrumentation], environ=env, quiet_s=0.2)
    assert code == 0 and [p.name for p in tmp_path.iterdir()] == ["oslo.jsonl"]
    [trace] = load_traces([str(tmp_path)])
    assert (trace.id, trace.run, trace.query) == ("oslo", 0, question("Oslo"))
    # openai-v2 and OpenInference's OpenAI instrumentor record tool calls only inside the messages (read from
    # there); the Agents SDK records tool spans.
    assert_facts(trace, "Oslo")


SERVICE = """
import sys
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("suite")
for query_id in sys.argv[2:] or ("alpha", "beta", "gamma"):  # one process, many queries: the id rides on a span attribute
    with tracer.start_as_current_span("invoke_agent bot", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot", "agentci.query_id": query_id}):
        with tracer.start_as_current_span("chat m", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": len(query_id),
            "gen_ai.usage.output_tokens": 1,
            "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "%s"}]}]' % query_id}):
            pass
provider.shutdown()
sys.exit(int(sys.argv[1]))
"""


def test_collect_cli_writes_one_file_per_query_of_a_process_running_many_and_returns_its_exit_code(tmp_path):
    script = tmp_path / "suite.py"
    script.write_text(SERVICE)
    out = tmp_path / "traces"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentci_action",
            "collect",
            "--output",
            str(out),
            "--port",
            "0",
            "--",
            sys.executable,
            str(script),
            "3",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["alpha.jsonl", "beta.jsonl", "gamma.jsonl"]
    traces = {t.id: t for t in load_traces([str(out)])}
    assert {i: (t.final_answer, t.llm_calls[0].input_tokens) for i, t in traces.items()} == {
        "alpha": ("alpha", 5),
        "beta": ("beta", 4),
        "gamma": ("gamma", 5),
    }
    assert "6 spans received, 3 trace files" in done.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_collect_in_the_foreground_writes_what_arrived_and_frees_its_port_when_stopped(tmp_path, stop):
    port = free_port()
    out = tmp_path / "traces"
    collector = subprocess.Popen(
        [sys.executable, "-m", "agentci_action", "collect", "--output", str(out), "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "receiving OTLP/HTTP on" in collector.stderr.readline()
        printed = collector.stderr.readline()  # the header its exporters must send: it prints its own token
        assert "spans are taken only with this collector's token: set OTEL_EXPORTER_OTLP_HEADERS=" in printed
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
        script = tmp_path / "suite.py"
        script.write_text(SERVICE)
        subprocess.run([sys.executable, str(script), "0", "stranger"], env=env, check=True, timeout=120)
        env["OTEL_EXPORTER_OTLP_HEADERS"] = printed.strip().split("OTEL_EXPORTER_OTLP_HEADERS=", 1)[1]
        subprocess.run([sys.executable, str(script), "0"], env=env, check=True, timeout=120)
        collector.send_signal(stop)
        assert collector.wait(30) == 0
    finally:
        collector.kill()
    assert sorted(p.name for p in out.iterdir()) == ["alpha.jsonl", "beta.jsonl", "gamma.jsonl"]
    deadline = time.monotonic() + 5
    with socket.socket() as again:
        while True:
            try:
                again.bind(("127.0.0.1", port))
                break
            except OSError:
                assert time.monotonic() < deadline, "the port stayed taken"
                time.sleep(0.1)


def test_collect_never_writes_outside_its_directory_whatever_query_id_a_span_names(tmp_path):
    """The audit's traversal.

    Span attributes naming `../../x` or an absolute path as the query id wrote files and made directories outside
    --output. Such a trace is refused (logged); the others are written.
    """
    script = tmp_path / "suite.py"
    script.write_text(SERVICE)
    out = tmp_path / "work" / "traces"
    ids = ["../../escaped", str(tmp_path / "absolute" / "x"), "..", "a/b", "ok"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    collect_command = [sys.executable, "-m", "agentci_action", "collect", "--output", str(out), "--port", "0"]
    done = subprocess.run(
        [*collect_command, "--", sys.executable, str(script), "0", *ids],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "suite.py",
        "work/traces/ok.jsonl",
    ]
    assert (
        "dropped a trace whose spans name a query id that is not one: '../../escaped' is not a query id" in done.stderr
    )

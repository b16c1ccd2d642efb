"""`runner.replay` end to end through the CLI.

Real agents on the real SDKs (command and python runners, the Agents SDK, pydantic-ai, an OpenTelemetry-instrumented
agent under `capture: otel`) and a JavaScript agent on Node's own fetch (when Node is installed) record their model
calls against a local provider, the provider goes away, and `agentci run`/`test` replay them with no key: the same
traces, the figures in the results, a changed agent's miss explained with its diff, one live call in the mixed mode,
eight workers without cross-talk, and a broken recording refused at its file and line before any run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.scripted_openai import ScriptedOpenAIServer, Turn
from fakes.scripted_providers import ScriptedProviders
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action import load_spec, run_spec
from agentci_action.trace.canonical import REPLAY_KEY, Trace
from agentci_action.trace.load import load_traces
from e2e.test_agents_sdk_run_result import QUESTION as SDK_QUESTION
from e2e.test_agents_sdk_run_result import SCRIPT as SDK_SCRIPT
from e2e.test_agents_sdk_run_result import check_agents_sdk_trace
from e2e.test_otel_capture import AGENT as OTEL_AGENT
from e2e.test_otel_capture import CITIES, assert_facts, question
from e2e.test_otel_capture import SCRIPT as OTEL_SCRIPT

AGENTS = ROOT / "tests" / "agents"
WEATHER_AGENT = AGENTS / "sdk_weather_agents.py"
KEY = "sk-proj-replay-run-test-key-0123456789"
ANTHROPIC_KEY = "sk-ant-replay-run-test-key-0123456789"
QUESTION = "What's the weather and the time in Paris?"
ANSWER = "It is 21°C in Paris.\nThe time there is 14:00."
SCRIPT = {
    QUESTION: [
        Turn(
            tool_calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
            prompt_tokens=120,
            completion_tokens=30,
        ),
        Turn(content=ANSWER, prompt_tokens=180, completion_tokens=14),
    ]
}


def write_spec(folder: Path, runner: dict[str, Any], queries: list[dict[str, Any]]) -> Path:
    path = folder / "agentci_spec.yaml"
    document = {"version": 1, "agent": "replayed", "runner": {"retries": 0, **runner}, "queries": queries}
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return path


def with_provider(server: Any, **extra: str) -> dict[str, str]:
    """An environment whose SDKs reach `server` with keys (recording)."""
    urls = {"OPENAI_BASE_URL": server.openai_url, "ANTHROPIC_BASE_URL": getattr(server, "anthropic_url", "")}
    return hermetic_environment(**urls, OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=ANTHROPIC_KEY, **extra)


def agentci_run(spec: Path, output: Path, env: dict[str, str], *options: str) -> subprocess.CompletedProcess[str]:
    """`agentci run` of `spec` into `output`, which must succeed."""
    done = run_cli("run", "--spec", spec, "--output", output, *options, env=env)
    assert done.returncode == 0, done.stderr
    return done


def facts(directory: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    """Per (query, run): the answer, the tool calls with their arguments, each model call's model and tokens."""
    return {
        (t.id, t.run): (
            t.final_answer,
            [(c.name, c.arguments) for c in t.tool_calls],
            [(c.model, c.input_tokens, c.output_tokens) for c in t.llm_calls],
        )
        for t in load_traces([str(directory)])
    }


def recordings_text(spec: Path) -> str:
    return "".join(p.read_text() for p in sorted((spec.parent / "recordings").rglob("*.json")))


PROGRAMS = {
    **{
        "-".join(api): [sys.executable, str(WEATHER_AGENT), *api]
        for api in (["chat", "stream"], ["responses", "stream"], ["anthropic", "stream"], ["anthropic"])
    },
    "node-fetch-stream": ["node", str(AGENTS / "node_weather_agent.mjs")],  # JavaScript, no SDK, gzip answers
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.skipif(shutil.which(argv[0]) is None, reason=f"{argv[0]} not installed"))
        for name, argv in PROGRAMS.items()
    ],
)
def test_a_command_agent_records_then_replays_with_no_key_and_no_provider(tmp_path, name):
    spec = write_spec(
        tmp_path,
        {"command": PROGRAMS[name], "replay": {}},
        [{"id": "paris", "query": QUESTION, "correctness": {"expected_in_answer": ["21°C"]}}],
    )
    with ScriptedProviders(SCRIPT, gzip=name.startswith("node")) as provider:
        recorded = agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
        assert provider.count == 2
    assert "model calls 0 replayed, 2 live" in recorded.stderr
    replayed = agentci_run(spec, tmp_path / "replayed", hermetic_environment())
    assert "model calls 2 replayed, 0 live, nothing paid" in replayed.stderr
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")
    answer, tools, calls = facts(tmp_path / "replayed")[("paris", 0)]
    assert answer == ANSWER and tools == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert [tokens for _, *tokens in calls] == [[120, 30], [180, 14]]
    text = recordings_text(spec)
    assert KEY not in text and ANTHROPIC_KEY not in text and "Bearer" not in text and "x-api-key" not in text


def test_an_agent_that_inherits_only_an_allow_list_still_gets_its_route_and_a_placeholder_key(tmp_path):
    """runner.inherit_env leaves out the key and the base URL the job has.

    The replay route's variables are added on top, as the OTLP capture's are, and the key's placeholder is set since the
    agent would start with none.
    """
    runner = {"command": [sys.executable, str(WEATHER_AGENT), "chat"], "replay": {}}
    spec = write_spec(tmp_path, runner, [{"id": "paris", "query": QUESTION}])
    with ScriptedProviders(SCRIPT) as provider:
        agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
    spec = write_spec(
        tmp_path, {**runner, "inherit_env": ["PATH", "HOME", "SYSTEMROOT"]}, [{"id": "paris", "query": QUESTION}]
    )
    job = hermetic_environment(OPENAI_API_KEY=KEY, OPENAI_BASE_URL="http://127.0.0.1:9/v1")  # neither inherited
    replayed = agentci_run(spec, tmp_path / "replayed", job)
    assert "model calls 2 replayed, 0 live, nothing paid" in replayed.stderr
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")


def test_test_replays_by_default_and_reports_the_figures_in_every_format(tmp_path):
    spec = write_spec(
        tmp_path,
        {"command": [sys.executable, str(WEATHER_AGENT), "chat"], "workers": 2, "replay": {}},
        [{"id": "paris", "query": QUESTION, "runs": 2, "correctness": {"expected_in_answer": ["21°C"]}}],
    )
    with ScriptedProviders(SCRIPT) as provider:
        recorded = run_cli(
            "test", "--spec", spec, "--replay", "record", "--format", "json", env=with_provider(provider)
        )
    assert recorded.returncode == 0, recorded.stderr
    live = json.loads(recorded.stdout)
    assert live["summary"]["model_calls"]["live"] == 4 and live["summary"]["model_calls"]["replayed"] == 0
    assert live["summary"]["model_calls"]["paid_usd"] > 0  # gpt-4o-mini's tokens, priced from the price table
    assert sorted(p.name for p in (tmp_path / "recordings" / "paris").iterdir()) == ["run-0.json", "run-1.json"]
    replayed = run_cli("test", "--spec", spec, "--format", "json", env=hermetic_environment())
    assert replayed.returncode == 0, replayed.stderr
    results = json.loads(replayed.stdout)
    assert results["summary"]["model_calls"] == {
        "replayed": 4,
        "live": 0,
        "paid_usd": 0.0,
        "missed": 0,
        "went_live": [],
    }
    assert results["results"][0]["model_calls"]["replayed"] == 4
    assert results["summary"]["cost_usd"] == live["summary"]["cost_usd"] > 0  # the cost layer keeps recorded tokens
    console = run_cli("test", "--spec", spec, env=hermetic_environment())
    assert "    model calls: 4 replayed · 0 live · nothing paid" in console.stdout
    assert (
        "model calls (replay): 4 replayed · 0 live · nothing paid (the cost figures price replayed calls too"
        in console.stdout
    )
    markdown = run_cli("test", "--spec", spec, "--format", "markdown", env=hermetic_environment())
    assert "Model calls (replay): 4 replayed · 0 live · nothing paid" in markdown.stdout


def test_a_changed_agent_misses_with_its_diff_under_replay_and_makes_one_live_call_in_the_mixed_mode(tmp_path):
    spec = write_spec(
        tmp_path,
        {"command": [sys.executable, str(WEATHER_AGENT), "chat"], "replay": {}},
        [{"id": "paris", "query": QUESTION, "correctness": {"expected_in_answer": ["21°C"]}}],
    )
    with ScriptedProviders(SCRIPT) as provider:
        agentci_run(spec, tmp_path / "a", with_provider(provider), "--replay", "record")
        changed = {"AGENT_WEATHER": "19°C, rain"}  # the second request carries the tool's result
        missed = run_cli("test", "--spec", spec, "--format", "json", env=hermetic_environment(**changed))
        assert missed.returncode == 2, missed.stderr
        assert provider.count == 2  # the miss did not go live
        [result] = json.loads(missed.stdout)["results"]
        message = result["correctness"]["messages"][0]
        assert "a model call has no recorded answer (runner.replay mode replay" in message
        assert (
            "call 2 (POST openai /chat/completions): no recorded request matches; the nearest (call 2 at "
            f"{spec.parent / 'recordings' / 'paris' / 'run-0.json'}:" in message
        )
        assert "messages[3].content (a tool result) changed: recorded '21°C, clear', now '19°C, rain'" in message
        console = run_cli("test", "--spec", spec, env=hermetic_environment(**changed))
        assert "messages[3].content (a tool result) changed" in console.stdout
        prompt = {"AGENT_SYSTEM": "You are a weather agent.\nUse the tools, then answer in one line."}
        reprompted = run_cli("test", "--spec", spec, env=hermetic_environment(**prompt))
        assert reprompted.returncode == 2 and provider.count == 2
        flat = " ".join(reprompted.stdout.split())  # the console wraps long messages
        assert "call 1 (POST openai /chat/completions): no recorded request matches; the nearest (call 1 at " in flat
        assert (
            "messages[0].content (the system prompt) changed at line 2: recorded 'Use the tools, then answer in two "
            "lines.', now 'Use the tools, then answer in one line.'" in flat
        )
        markdown = run_cli("test", "--spec", spec, "--format", "markdown", env=hermetic_environment(**changed))
        assert "messages\\[3\\].content \\(a tool result\\) changed" in markdown.stdout
        mixed = run_cli(
            "test",
            "--spec",
            spec,
            "--replay",
            "record-missing",
            "--format",
            "json",
            env=with_provider(provider, **changed),
        )
        assert mixed.returncode == 0, mixed.stderr
        assert provider.count == 3
        calls = json.loads(mixed.stdout)["results"][0]["model_calls"]
        assert (calls["replayed"], calls["live"], calls["missed"]) == (1, 1, 0)
        assert "messages[3].content (a tool result) changed" in calls["went_live"][0]
    again = run_cli("test", "--spec", spec, "--format", "json", env=hermetic_environment(**changed))
    assert again.returncode == 0, again.stderr  # the rewritten recording replays the changed agent


@pytest.mark.parametrize("function", ["answer", "answer_with_module_client"])
def test_a_python_runner_replays_each_run_through_its_worker_s_route(tmp_path, function):
    queries = [{"id": "paris", "query": QUESTION, "runs": 3}]
    spec = write_spec(
        tmp_path,
        {"python": f"sdk_weather_agents:{function}", "cwd": str(AGENTS), "workers": 2, "replay": {}},
        queries,
    )
    with ScriptedProviders(SCRIPT) as provider:
        agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
        assert provider.count == 6
    agentci_run(spec, tmp_path / "replayed", hermetic_environment())
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")
    assert len(facts(tmp_path / "replayed")) == 3


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
def test_an_agents_sdk_agent_replays_the_same_run_result(tmp_path, api):
    runner = {"python": "agents_sdk_agent:answer", "cwd": str(AGENTS), "env": {"AGENT_OPENAI_API": api}, "replay": {}}
    spec = write_spec(tmp_path, runner, [{"id": "paris", "query": SDK_QUESTION}])
    with ScriptedOpenAIServer(SDK_SCRIPT) as provider:
        agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
        model = "gpt-4o-mini" if api == "chat_completions" else provider.model
    agentci_run(spec, tmp_path / "replayed", hermetic_environment())
    [trace] = [json.loads(line) for line in (tmp_path / "replayed" / "paris.jsonl").read_text().splitlines()]
    check_agents_sdk_trace(trace, model)
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")


PYDANTIC_AI_AGENT = """
import json, sys
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel

agent = Agent(OpenAIChatModel("gpt-4o-mini"), system_prompt="You are a weather agent.")

@agent.tool_plain
def get_weather(city: str) -> str:
    return "21°C, clear"

@agent.tool_plain
def get_time(tz: str) -> str:
    return "14:00"

job = json.load(sys.stdin)
result = agent.run_sync(job["query"])
usage = result.usage()
calls = [c for m in result.all_messages() for c in getattr(m, "parts", []) if type(c).__name__ == "ToolCallPart"]
print(json.dumps({
    "final_answer": result.output,
    "tool_calls": [{"name": c.tool_name, "arguments": c.args_as_dict()} for c in calls],
    "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}],
}))
"""


def test_a_pydantic_ai_agent_replays(tmp_path):
    (tmp_path / "agent.py").write_text(PYDANTIC_AI_AGENT)
    spec = write_spec(
        tmp_path, {"command": [sys.executable, "agent.py"], "replay": {}}, [{"id": "paris", "query": QUESTION}]
    )
    with ScriptedProviders(SCRIPT) as provider:
        agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
        assert provider.count == 2
    agentci_run(spec, tmp_path / "replayed", hermetic_environment())
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")
    answer, tools, _ = facts(tmp_path / "replayed")[("paris", 0)]
    assert answer == ANSWER and tools == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]


def test_capture_otel_and_replay_together_give_the_spans_the_live_run_gave(tmp_path):
    runner = {"command": [sys.executable, str(OTEL_AGENT), "openai-v2"], "capture": "otel", "workers": 2, "replay": {}}
    queries = [{"id": key, "query": question(city)} for key, city in CITIES.items()]
    spec = write_spec(tmp_path, runner, queries)
    env = {k: v for k, v in hermetic_environment().items() if not k.startswith(("OTEL_", "AGENTCI_"))}
    with ScriptedOpenAIServer(OTEL_SCRIPT) as provider:
        agentci_run(
            spec,
            tmp_path / "live",
            {**env, "OPENAI_BASE_URL": provider.openai_url, "OPENAI_API_KEY": KEY},
            "--replay",
            "record",
        )
    agentci_run(spec, tmp_path / "replayed", env)
    traces = {t.id: t for t in load_traces([str(tmp_path / "replayed")])}
    for key, city in CITIES.items():
        assert_facts(traces[key], city)
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")


def test_eight_workers_replay_each_run_s_own_calls(tmp_path):
    cities = ["Paris", "Oslo", "Lima", "Quito", "Hanoi", "Accra", "Perth", "Cusco"]
    script = {
        f"What's the weather in {city}?": [
            Turn(tool_calls=[("get_weather", {"city": city}), ("get_time", {"tz": city[:3]})]),
            Turn(content=f"It is sunny in {city}."),
        ]
        for city in cities
    }
    queries = [{"id": city.lower(), "query": f"What's the weather in {city}?", "runs": 2} for city in cities]
    spec = write_spec(
        tmp_path, {"command": [sys.executable, str(WEATHER_AGENT), "chat"], "workers": 8, "replay": {}}, queries
    )
    with ScriptedProviders(script, delay=0.05) as provider:
        agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
    replayed = run_cli(
        "test", "--spec", spec, "--record", tmp_path / "replayed", "--format", "json", env=hermetic_environment()
    )
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["summary"]["model_calls"]["replayed"] == 32
    found = facts(tmp_path / "replayed")
    assert found == facts(tmp_path / "live") and len(found) == 16
    for city in cities:
        for run in (0, 1):
            assert found[(city.lower(), run)][0] == f"It is sunny in {city}."
            text = (tmp_path / "recordings" / city.lower() / f"run-{run}.json").read_text()
            assert all(f"in {other}?" not in text for other in cities if other != city)


def test_a_broken_recording_is_an_error_at_its_file_and_line_before_any_run(tmp_path):
    spec = write_spec(
        tmp_path,
        {"command": [sys.executable, str(WEATHER_AGENT), "chat"], "replay": {"recordings": "recorded"}},
        [{"id": "paris", "query": QUESTION, "runs": 2}],
    )
    with ScriptedProviders(SCRIPT) as provider:
        agentci_run(spec, tmp_path / "a", with_provider(provider), "--replay", "record")
    broken = tmp_path / "recorded" / "paris" / "run-1.json"
    text = broken.read_text()
    broken.write_text(text[: len(text) // 2])
    result = run_cli("run", "--spec", spec, "--output", tmp_path / "b", env=hermetic_environment())
    assert result.returncode == 2
    lines = text[: len(text) // 2].count("\n") + 1
    assert (
        f"{broken}:" in result.stderr and "is not valid JSON" in result.stderr and "it was cut short" in result.stderr
    )
    assert any(f"{broken}:{line}:" in result.stderr for line in range(lines - 3, lines + 1))
    assert not (tmp_path / "b" / "paris.jsonl").exists()  # nothing ran


def test_replay_off_leaves_the_agent_s_provider_alone_and_the_flag_enables_replay_without_a_block(tmp_path):
    spec = write_spec(
        tmp_path, {"command": [sys.executable, str(WEATHER_AGENT), "chat"]}, [{"id": "paris", "query": QUESTION}]
    )
    with ScriptedProviders(SCRIPT) as provider:
        plain = run_cli("run", "--spec", spec, "--output", tmp_path / "a", env=with_provider(provider))
        assert plain.returncode == 0 and "model calls" not in plain.stderr
        recorded = run_cli(
            "run", "--spec", spec, "--output", tmp_path / "b", "--replay", "record", env=with_provider(provider)
        )
        assert recorded.returncode == 0 and (tmp_path / "recordings" / "paris" / "run-0.json").is_file()
        off = run_cli("run", "--spec", spec, "--output", tmp_path / "c", "--replay", "off", env=with_provider(provider))
        assert off.returncode == 0 and "model calls" not in off.stderr
        assert provider.count == 6


@pytest.mark.parametrize(
    ("replay", "line", "message"),
    [
        ("    volatile_paths: [messages..content]\n", 7, "volatile path 'messages..content'"),
        ("    volatile_patterns: ['(unclosed']\n", 7, "volatile pattern '(unclosed' does not compile"),
        ("    upstreams: {openai: 'localhost:8000'}\n", 7, "upstreams.openai: 'localhost:8000' is not an http"),
        ("    mode: replay-all\n", 7, "mode"),
    ],
)
def test_a_bad_replay_block_is_a_spec_error_at_its_line(tmp_path, replay, line, message):
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text(
        "version: 1\nagent: a\nrunner:\n  command: python agent.py\n  replay:\n    recordings: rec\n"
        + replay
        + "queries:\n  - id: q\n    query: hi\n"
    )
    result = run_cli("validate", spec)
    assert result.returncode == 1  # validate: 1 lists every problem
    assert f"{spec}:{line}:" in result.stderr + result.stdout and message in result.stderr + result.stdout


def test_a_callable_given_to_the_python_api_is_replayed_one_run_at_a_time(tmp_path, monkeypatch):
    import importlib.util
    import io

    from agentci_action._util.progress import Progress, ProgressOutput
    from agentci_action.run import RunOptions, RunSetup, run_agent
    from agentci_action.spec.loader import load_spec

    loaded = importlib.util.spec_from_file_location("weather_agents_in_process", WEATHER_AGENT)
    assert loaded and loaded.loader
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    spec = write_spec(
        tmp_path, {"python": "given:agent", "workers": 4, "replay": {}}, [{"id": "paris", "query": QUESTION, "runs": 2}]
    )
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    def run(mode: str, environ: dict[str, str], output: str):
        progress = Progress("agentci run", 2, "run", output=ProgressOutput(stream=io.StringIO()))
        options = RunOptions(tmp_path / output, replay=mode)
        return run_agent(load_spec(spec), options, RunSetup(agent=module.answer, environ=environ, progress=progress))

    with ScriptedProviders(SCRIPT) as provider:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the callable runs in this process, with its environment
        live = run("record", {"OPENAI_BASE_URL": provider.openai_url, "OPENAI_API_KEY": KEY}, "live")
        assert live.ok, live.errors
        assert (live.replay.live, provider.count) == (4, 4)
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run("replay", {}, "replayed")
    assert replayed.ok, replayed.errors
    assert (replayed.replay.replayed, replayed.replay.live) == (4, 0)
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")
    assert "OPENAI_BASE_URL" not in __import__("os").environ  # the route was this process's only during the run
    import agentci_action

    public = agentci_action.run_agent(load_spec(spec), module.answer, replay="replay", output=tmp_path / "public")
    assert [t.model_calls["replayed"] for t in public] == [2, 2]
    assert facts(tmp_path / "public") == facts(tmp_path / "live")


def test_a_secret_the_agent_puts_in_a_prompt_is_neither_recorded_nor_matched_on(tmp_path):
    token = "tok-prompt-secret-0123456789"
    runner = {
        "command": [sys.executable, str(WEATHER_AGENT), "chat"],
        "env": {"SUPPORT_TOKEN": token, "AGENT_SYSTEM": f"You are a weather agent. Support token: {token}."},
        "replay": {},
    }
    spec = write_spec(tmp_path, runner, [{"id": "paris", "query": QUESTION}])
    with ScriptedProviders(SCRIPT) as provider:
        agentci_run(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
    text = recordings_text(spec)
    assert token not in text and "Support token: <volatile>." in text
    agentci_run(spec, tmp_path / "replayed", hermetic_environment())
    assert facts(tmp_path / "replayed") == facts(tmp_path / "live")


def test_live_calls_go_to_the_declared_upstream_else_the_inherited_base_url_else_the_provider():
    from agentci_action.run.replay.replay_run import upstreams
    from agentci_action.spec.runner_config import ReplaySpec

    public = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
    assert upstreams(ReplaySpec(), {}) == public
    assert upstreams(ReplaySpec(), {"OPENAI_API_BASE": "http://litellm:4000"})["openai"] == "http://litellm:4000"
    inherited = {
        "OPENAI_BASE_URL": "http://ollama:11434/v1",
        "OPENAI_API_BASE": "http://other",
        "ANTHROPIC_BASE_URL": "",
    }
    assert upstreams(ReplaySpec(), inherited) == {**public, "openai": "http://ollama:11434/v1"}
    declared = ReplaySpec(upstreams={"openai": "http://vllm:8000/v1"})
    assert upstreams(declared, inherited)["openai"] == "http://vllm:8000/v1"


def test_what_a_live_call_cost_is_priced_from_the_usage_its_answer_reported():
    from agentci_action.run.replay.replay_run import _price
    from agentci_action.run.replay.wire_usage import WireUsage
    from agentci_action.spec.models import ModelPrice

    prices = {"my-model": ModelPrice(input=1.0, output=2.0)}  # USD per million tokens
    assert _price(WireUsage("my-model", 1_000_000, 500_000), prices) == 2.0
    assert _price(WireUsage("gpt-4o-mini-2024-07-18", 1_000_000, 0), {}) == pytest.approx(0.15)  # the price table
    assert _price(WireUsage("my-model"), prices) is None  # a model, but no usage reported (a stream without it)
    assert _price(WireUsage("no-such-model", 10, 10), {}) is None
    assert _price(WireUsage(None), {}) == 0.0  # no model named: a model list, not billed by the token


def test_a_query_s_and_the_suite_s_live_spend_are_summed_without_float_noise(tmp_path):
    spec = load_spec(write_spec(tmp_path, {"command": ["true"]}, [{"id": "paris", "query": QUESTION, "runs": 2}]))
    figures = [{"replayed": 1, "live": 1, "paid_usd": paid, "missed": 0} for paid in (0.0021, 0.0014)]
    assert 0.0021 + 0.0014 != 0.0035  # the noise a plain sum would show
    traces = [Trace(id="paris", run=i, final_answer="21°C", metadata={REPLAY_KEY: f}) for i, f in enumerate(figures)]
    run = run_spec(spec, traces)
    [calls] = [result.model_calls for result in run.results]
    assert calls is not None and run.summary.model_calls is not None
    assert (calls.replayed, calls.live, calls.paid_usd) == (2, 2, 0.0035)
    assert run.summary.model_calls.paid_usd == 0.0035

"""Record and replay through the real SDKs.

An agent on each API records its calls against a local provider, the provider goes away, and the replayed run gets the
same answer, tool calls, arguments, models and tokens.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from fakes.scripted_openai import Turn
from fakes.scripted_providers import ScriptedProviders
from helpers import ROOT

from agentci_action.engine.token_attribution import query_tokens
from agentci_action.run.replay.model_proxy import ReplayProxy
from agentci_action.run.replay.recorded_requests import with_recorded_requests
from agentci_action.run.replay.replay_session import Figures, ReplaySession
from agentci_action.run.replay.request_keys import Volatility
from agentci_action.trace.canonical import Trace
from agentci_action.trace.tokenizer import tokenizer_for

AGENT_FILE = ROOT / "tests" / "agents" / "sdk_weather_agents.py"
_spec = importlib.util.spec_from_file_location("sdk_weather_agents", AGENT_FILE)
assert _spec and _spec.loader
agents = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agents)

KEY = "sk-proj-replay-test-key-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-replay-test-key-0123456789abcdef"
ORGANIZATION = "org-replaytestorganisation"
ANSWER = "It is 21°C in Paris.\nThe time there is 14:00."
SCRIPT = {
    agents.QUESTION: [
        Turn(
            tool_calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
            prompt_tokens=120,
            completion_tokens=30,
            cached_tokens=64,
        ),
        Turn(content=ANSWER, prompt_tokens=180, completion_tokens=14),
    ]
}
PARALLEL_CALLS = [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]

Agent = Callable[[ReplayProxy, str], dict[str, Any]]


def openai_client(proxy: ReplayProxy, token: str, asynchronous: bool = False) -> Any:
    kind = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return kind(api_key=KEY, organization=ORGANIZATION, base_url=proxy.base_url(token, "openai"), max_retries=0)


def anthropic_client(proxy: ReplayProxy, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=ANTHROPIC_KEY, base_url=proxy.base_url(token, "anthropic"), max_retries=0)


AGENTS: dict[str, Agent] = {
    "chat": lambda p, t: agents.chat_agent(openai_client(p, t)),
    "chat-stream": lambda p, t: agents.chat_agent(openai_client(p, t), stream=True),
    "async-chat": lambda p, t: asyncio.run(agents.async_chat_agent(openai_client(p, t, True))),
    "async-chat-stream": lambda p, t: asyncio.run(agents.async_chat_agent(openai_client(p, t, True), stream=True)),
    "responses": lambda p, t: agents.responses_agent(openai_client(p, t)),
    "responses-stream": lambda p, t: agents.responses_agent(openai_client(p, t), stream=True),
    "async-responses": lambda p, t: asyncio.run(agents.async_responses_agent(openai_client(p, t, True))),
    "async-responses-stream": lambda p, t: asyncio.run(
        agents.async_responses_agent(openai_client(p, t, True), stream=True)
    ),
    "anthropic": lambda p, t: agents.anthropic_agent(anthropic_client(p, t)),
    "anthropic-stream": lambda p, t: agents.anthropic_agent(anthropic_client(p, t), stream=True),
}


def through_proxy(
    upstream: ScriptedProviders, recording: Path, mode: str, agent: Agent, volatility: Volatility | None = None
) -> tuple[dict[str, Any], Figures]:
    """Run `agent` once through a proxy in `mode` whose run records to / replays from `recording`."""
    session = ReplaySession(
        query="weather", run=0, path=recording, mode=mode, volatility=volatility or Volatility.declared()
    )
    with ReplayProxy({"openai": upstream.openai_url, "anthropic": upstream.anthropic_url}) as proxy:
        facts = agent(proxy, proxy.route(session))
    return facts, session.finish()


def expected_models(name: str) -> str:
    return "claude-haiku-4-5-20251001" if name.startswith("anthropic") else "gpt-4o-mini-2024-07-18"


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_recorded_run_replays_with_no_provider(tmp_path, name):
    recording = tmp_path / "weather" / "run-0.json"
    with ScriptedProviders(SCRIPT, gzip=name.endswith("stream")) as upstream:
        live, recorded = through_proxy(upstream, recording, "record", AGENTS[name])
        assert upstream.count == 2
    assert live["answer"] == ANSWER
    assert live["tools"] == PARALLEL_CALLS
    model = expected_models(name)
    assert [call[0] for call in live["calls"]] == [model, model]
    assert recorded.live == 2 and recorded.replayed == 0 and recorded.wrote == recording

    replayed, figures = through_proxy(upstream, recording, "replay", AGENTS[name])  # the provider is gone
    assert replayed == live
    assert (figures.replayed, figures.live, figures.misses, figures.wrote) == (2, 0, [], None)
    text = recording.read_text(encoding="utf-8")
    for secret in (KEY, ANTHROPIC_KEY, ORGANIZATION, "secret-cookie", "Bearer"):
        assert secret not in text


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_trace_without_requests_is_split_from_the_requests_the_proxy_saw(tmp_path, name):
    """The agent's trace lists its calls' usage alone.

    The proxy's recorded requests (each SDK's own body) give each call its split, counted as the model's tokenizer
    counts the texts, adding up to the reported tokens.
    """
    with ScriptedProviders(SCRIPT, gzip=name.endswith("stream")) as upstream:
        live, figures = through_proxy(upstream, tmp_path / "run-0.json", "record", AGENTS[name])
    bare = Trace.model_validate({"id": "weather", **agents.trace_of(live)})
    assert all(call.input_breakdown is None for call in bare.llm_calls)
    trace = with_recorded_requests(bare, figures.calls)
    first, second = (call.input_breakdown for call in trace.llm_calls)
    count = tokenizer_for(expected_models(name)).count
    assert first.exact == (not name.startswith("anthropic"))  # Claude's tokens are estimated, and said to be
    parts = {(p["component"], p.get("name")): p["tokens"] for p in first.parts}
    assert parts == {
        **{("tool_schemas", tool): parts[("tool_schemas", tool)] for tool in agents.PARAMETERS},
        ("system_prompt", None): count(agents.SYSTEM),
        ("query", None): count(agents.QUESTION),
    }
    results = {(p["component"], p.get("name")): p["tokens"] for p in second.parts if p["component"] == "tool_results"}
    assert results == {("tool_results", tool): count(text) for tool, text in agents.RESULTS.items()}
    assert {p["component"] for p in second.parts} >= {"history", "query", "system_prompt", "tool_schemas"}
    found = query_tokens([trace])
    assert found.calls == 2 and sum(found.components.values()) == sum(c.input_tokens for c in bare.llm_calls)

    fewer = bare.model_copy(update={"llm_calls": bare.llm_calls[:1]})  # calls the proxy saw that the trace leaves out
    assert with_recorded_requests(fewer, figures.calls) is fewer


@pytest.mark.parametrize("name", ["chat-stream", "responses-stream", "anthropic-stream", "anthropic"])
def test_recording_the_same_behaviour_again_writes_the_same_bytes(tmp_path, name):
    recording = tmp_path / "run-0.json"
    with ScriptedProviders(SCRIPT) as upstream:
        through_proxy(upstream, recording, "record", AGENTS[name])
        first = recording.read_bytes()
        through_proxy(upstream, recording, "record", AGENTS[name])
    assert recording.read_bytes() == first
    if name.endswith("stream"):  # a stream is kept as its frames
        assert b'\n        "stream": [\n          {\n            "' in first


def test_streamed_frames_are_replayed_with_their_framing_and_done(tmp_path):
    """The raw bytes a streaming client reads under replay are the provider's frames, [DONE] included."""
    recording = tmp_path / "run-0.json"
    with ScriptedProviders(SCRIPT) as upstream:
        through_proxy(upstream, recording, "record", AGENTS["chat-stream"])
        direct = openai.OpenAI(api_key=KEY, base_url=upstream.openai_url)
        ask = {
            "model": "gpt-4o-mini",
            "messages": [{"role": "system", "content": agents.SYSTEM}, {"role": "user", "content": agents.QUESTION}],
            "tools": agents.CHAT_TOOLS,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with direct.chat.completions.with_streaming_response.create(**ask) as raw:
            provider_bytes = raw.http_response.read()
    session = ReplaySession(query="weather", run=0, path=recording, mode="replay", volatility=Volatility.declared())
    with ReplayProxy({"openai": upstream.openai_url}) as proxy:
        client = openai.OpenAI(api_key=KEY, base_url=proxy.base_url(proxy.route(session), "openai"))
        with client.chat.completions.with_streaming_response.create(**ask) as raw:
            replayed_bytes = raw.http_response.read()
            assert raw.http_response.headers["x-agentci-replay"] == "replayed"
    assert frames(replayed_bytes) == frames(provider_bytes)
    assert replayed_bytes.endswith(b"}\n\ndata: [DONE]\n\n")
    assert replayed_bytes.count(b"\n\n") == provider_bytes.count(b"\n\n") == len(frames(provider_bytes))


def frames(stream: bytes) -> list[tuple[str | None, Any]]:
    """(event, parsed data) of each frame of an SSE byte stream."""
    found = []
    for block in stream.decode().split("\n\n")[:-1]:
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        data = fields["data"]
        found.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return found


def test_embeddings_are_recorded_and_replayed(tmp_path):
    recording = tmp_path / "run-0.json"

    def embed(proxy: ReplayProxy, token: str) -> dict[str, Any]:
        response = openai_client(proxy, token).embeddings.create(model="text-embedding-3-small", input=["a", "b"])
        return {"vectors": [d.embedding for d in response.data], "tokens": response.usage.prompt_tokens}

    with ScriptedProviders(SCRIPT) as upstream:
        live, _ = through_proxy(upstream, recording, "record", embed)
    replayed, figures = through_proxy(upstream, recording, "replay", embed)
    assert replayed == live and len(live["vectors"]) == 2 and figures.replayed == 1

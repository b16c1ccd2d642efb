"""No key in a recorded answer.

A model that repeats the key an agent sent ("You said: ... my key is sk-proj-...") leaves the placeholder in the
recording, in a JSON body and in every frame of a stream (a key cut between two frames included), and the recording
still replays the same answer shape to the agent, the key masked. Every secret in play (the agent's secret-named
variables, the keys its requests carry, the placeholder key) is looked for in every recording, request and answer, with
the real SDKs against the local fake provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.scripted_openai import Turn
from fakes.scripted_providers import ScriptedProviders

from agentci_action.run.replay.answer_secrets import masked_answer
from agentci_action.run.replay.replay_run import PLACEHOLDER_KEY, ReplayRun
from agentci_action.run.replay.request_keys import PLACEHOLDER, Volatility
from agentci_action.spec.runner_config import ReplaySpec
from e2e.test_replay_sdks import AGENTS, ANTHROPIC_KEY, KEY, PARALLEL_CALLS, agents, openai_client, through_proxy

SERVICE_TOKEN = "tok-service-0123456789abcdef"  # an inherited variable whose name says it is secret
IN_PLAY = (KEY, ANTHROPIC_KEY, SERVICE_TOKEN, PLACEHOLDER_KEY)
ECHO_QUESTION = f"hello (my key is {KEY})"


def volatility(tmp_path: Path) -> Volatility:
    """What `agentci run` masks for an agent that inherits SERVICE_TOKEN (and the placeholder key)."""
    return ReplayRun(ReplaySpec(), "record", tmp_path, {"MY_SERVICE_TOKEN": SERVICE_TOKEN, "PATH": "/bin"}).volatility


def echo_script(question: str, key: str) -> dict[str, list[Turn]]:
    answer = f"You said: {question} (my key is {key}; the service's is {SERVICE_TOKEN}; {PLACEHOLDER_KEY})"
    return {
        question: [
            Turn(tool_calls=PARALLEL_CALLS, prompt_tokens=120, completion_tokens=30),
            Turn(content=answer, prompt_tokens=180, completion_tokens=14),
        ]
    }


def assert_no_secret(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for secret in IN_PLAY:
        for form in (secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=True)[1:-1]):
            assert form not in text, f"{secret!r} is in {path}"


AGENTS_AND_QUESTIONS: dict[str, tuple[Any, str]] = {
    **{name: (agent, agents.QUESTION) for name, agent in AGENTS.items()},
    "chat-echo": (lambda p, t: agents.chat_agent(openai_client(p, t), question=ECHO_QUESTION), ECHO_QUESTION),
    "chat-echo-stream": (
        lambda p, t: agents.chat_agent(openai_client(p, t), stream=True, question=ECHO_QUESTION),
        ECHO_QUESTION,
    ),
}


@pytest.mark.parametrize("name", list(AGENTS_AND_QUESTIONS))
def test_a_key_the_model_repeats_is_masked_in_the_recording_and_replayed_masked(tmp_path, name):
    agent, question = AGENTS_AND_QUESTIONS[name]
    key = ANTHROPIC_KEY if name.startswith("anthropic") else KEY
    recording = tmp_path / "weather" / "run-0.json"
    masking = volatility(tmp_path)
    with ScriptedProviders(echo_script(question, key), gzip=name.endswith("stream")) as upstream:
        live, _ = through_proxy(upstream, recording, "record", agent, masking)
    assert key in live["answer"] and SERVICE_TOKEN in live["answer"]  # the agent itself got the answer as sent
    assert_no_secret(recording)

    replayed, figures = through_proxy(upstream, recording, "replay", agent, masking)  # the provider is gone
    assert (figures.replayed, figures.misses) == (2, [])
    expected = live["answer"]
    for secret in (key, SERVICE_TOKEN, PLACEHOLDER_KEY):
        expected = expected.replace(secret, PLACEHOLDER)
    assert replayed["answer"] == expected
    assert replayed["tools"] == live["tools"] and replayed["calls"] == live["calls"]


def test_a_secret_cut_between_frames_is_masked_and_every_frame_stays_json():
    secret = "sk-proj-0123456789abcdef"
    frames = [
        {"event": "delta", "data": {"choices": [{"delta": {"content": "my key is sk-pr"}}]}},
        {"event": "ping", "data": {"note": "unrelated"}},
        {"event": "delta", "data": {"choices": [{"delta": {"content": "oj-0123456789"}}]}},
        {"event": "delta", "data": {"choices": [{"delta": {"content": "abcdef, and again " + secret}}]}},
        {"text": f"plain {secret}"},
    ]
    masked = masked_answer({"stream": frames}, Volatility.declared(secrets=[secret]))["stream"]
    contents = [f["data"]["choices"][0]["delta"]["content"] for f in masked if f.get("event") == "delta"]
    assert contents == ["my key is " + PLACEHOLDER, "", ", and again " + PLACEHOLDER]
    assert masked[1] == frames[1] and masked[4] == {"text": f"plain {PLACEHOLDER}"}
    assert secret not in json.dumps(masked)
    assert masked_answer({"stream": frames}, Volatility.declared())["stream"] is frames  # no secret: unchanged

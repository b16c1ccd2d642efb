"""The replay proxy's behaviour with the real openai SDK.

Modes, misses and their explanations, identical requests answered in order, volatile parts, what is never recorded, who
may connect, provider failures, runs in parallel.
"""

from __future__ import annotations

import gzip
import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
from fakes.llm_server import FakeLLMServer
from fakes.scripted_openai import Turn
from fakes.scripted_providers import ScriptedProviders

from agentci_action.run.replay.model_proxy import ReplayProxy
from agentci_action.run.replay.recordings import RecordingError
from agentci_action.run.replay.replay_session import ReplaySession
from agentci_action.run.replay.request_keys import Volatility

KEY = "sk-proxy-test-key-0123456789abcdef"


class Counting(FakeLLMServer):
    """A provider whose n-th agent turn answers 'answer n', whatever it is asked."""

    def __init__(self) -> None:
        self.turns = 0
        self.turn_lock = threading.Lock()
        super().__init__(agent_model=self._next)

    def _next(self, messages: list[dict], tools: list[dict]) -> dict:
        with self.turn_lock:
            self.turns += 1
            return {"content": f"answer {self.turns}"}


def session(path: Path, mode: str, **volatile: Any) -> ReplaySession:
    return ReplaySession(query="q", run=0, path=path, mode=mode, volatility=Volatility.declared(**volatile))


def client(proxy: ReplayProxy, token: str, **options: Any) -> openai.OpenAI:
    options.setdefault("max_retries", 0)
    return openai.OpenAI(api_key=KEY, base_url=proxy.base_url(token, "openai"), **options)


def ask(c: openai.OpenAI, content: str, **extra: Any) -> str:
    reply = c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": content}], **extra)
    return reply.choices[0].message.content or ""


def test_identical_requests_get_the_recorded_answers_in_order(tmp_path):
    path = tmp_path / "run-0.json"
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        recording = session(path, "record")
        c = client(proxy, proxy.route(recording))
        assert [ask(c, "same"), ask(c, "other"), ask(c, "same"), ask(c, "same")] == [
            f"answer {n}" for n in (1, 2, 3, 4)
        ]
        recording.finish()
        replaying = session(path, "replay")
        c = client(proxy, proxy.route(replaying))
        assert [ask(c, "same"), ask(c, "same"), ask(c, "other"), ask(c, "same")] == [
            "answer 1",
            "answer 3",
            "answer 2",
            "answer 4",
        ]
        with pytest.raises(openai.BadRequestError, match="asks it more often than the recorded run did"):
            ask(c, "same")
        assert provider.count == 4  # nothing went live while replaying
    figures = replaying.finish()
    assert (figures.replayed, figures.live, [m.number for m in figures.misses], figures.failed) == (4, 0, [5], True)


def test_under_replay_a_changed_prompt_is_a_miss_with_its_diff_and_no_live_call(tmp_path):
    path = tmp_path / "run-0.json"
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        recording = session(path, "record")
        ask(client(proxy, proxy.route(recording)), "Line one.\nBe brief.")
        recording.finish()
        replaying = session(path, "replay")
        c = client(proxy, proxy.route(replaying), max_retries=2)
        with pytest.raises(openai.BadRequestError) as caught:
            ask(c, "Line one.\nBe thorough.")
        assert provider.count == 1  # the SDK did not retry the miss, and the proxy did not go live
    expected = (
        "call 1 (POST openai /chat/completions): no recorded request matches; the nearest (call 1 at "
        f"{path}:6) differs: messages[0].content (a user message) changed at line 2: recorded 'Be brief.', "
        "now 'Be thorough.'"
    )
    assert caught.value.body["message"] == f"AgentCI replay: {expected}"
    assert caught.value.body["code"] == "replay_miss"
    figures = replaying.finish()
    assert [m.explanation for m in figures.misses] == [expected]
    assert figures.wrote is None and figures.failed


def test_record_missing_replays_what_matches_and_records_one_live_call(tmp_path):
    path = tmp_path / "run-0.json"
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        first = session(path, "record")
        c = client(proxy, proxy.route(first))
        assert [ask(c, "kept"), ask(c, "Be brief.")] == ["answer 1", "answer 2"]
        first.finish()
        before = path.read_text()
        mixed = session(path, "record-missing")
        c = client(proxy, proxy.route(mixed))
        assert [ask(c, "kept"), ask(c, "Be thorough.")] == ["answer 1", "answer 3"]
        assert provider.count == 3
        figures = mixed.finish()
        assert (figures.replayed, figures.live, figures.wrote, figures.failed) == (1, 1, path, False)
        assert "Be brief." in figures.misses[0].explanation and figures.misses[0].went_live
        assert path.read_text() != before and "Be thorough." in path.read_text() and "Be brief." not in path.read_text()
        again = session(path, "record-missing")
        c = client(proxy, proxy.route(again))
        assert [ask(c, "kept"), ask(c, "Be thorough.")] == ["answer 1", "answer 3"]
        assert again.finish().wrote is None  # nothing changed: the file is left as it is
        assert provider.count == 3


def test_a_run_with_no_recording_misses_and_record_mode_never_reads(tmp_path):
    path = tmp_path / "absent" / "run-4.json"
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        replaying = session(path, "replay")
        with pytest.raises(openai.BadRequestError, match=r"not recorded yet \(.*run-4.json does not exist\)"):
            ask(client(proxy, proxy.route(replaying)), "hi")
        path.parent.mkdir()
        path.write_text("not: [a recording")
        with pytest.raises(RecordingError):
            session(path, "replay")
        recording = session(path, "record")  # a broken file is simply rewritten
        ask(client(proxy, proxy.route(recording)), "hi")
        assert recording.finish().wrote == path
        assert session(path, "replay").recording is not None


def test_volatile_parts_do_not_break_the_match_and_are_not_recorded(tmp_path):
    path = tmp_path / "run-0.json"
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        recording = session(path, "record", paths=["messages.*.name"], patterns=[stamp])
        c = client(proxy, proxy.route(recording))
        extra = {"user": "user-1", "metadata": {"session": "s-1"}, "store": False}
        reply = c.chat.completions.create(
            model="m", messages=[{"role": "user", "name": "n-1", "content": "at 2026-11-20T10:00:00Z: ok"}], **extra
        )
        assert reply.choices[0].message.content == "answer 1"
        recording.finish()
        text = path.read_text()
        assert "user-1" not in text and "s-1" not in text and "n-1" not in text and "2026-11-20T10" not in text
        assert "at <volatile>: ok" in text
        replaying = session(path, "replay", paths=["messages.*.name"], patterns=[stamp])
        c = client(proxy, proxy.route(replaying))
        reply = c.chat.completions.create(
            model="m",
            messages=[{"role": "user", "name": "n-2", "content": "at 2027-01-01T00:00:00Z: ok"}],
            user="user-2",
            metadata={"session": "s-2"},
            store=False,
        )
        assert reply.choices[0].message.content == "answer 1"
        strict = session(path, "replay")  # without the declarations, the name and the time are part of the key
        with pytest.raises(openai.BadRequestError, match=r"messages\[0\]\.content \(a user message\) changed"):
            client(proxy, proxy.route(strict)).chat.completions.create(
                model="m", messages=[{"role": "user", "name": "n-2", "content": "at 2027-01-01T00:00:00Z: ok"}]
            )


def test_keys_cookies_and_organisation_ids_never_reach_a_recording(tmp_path):
    path = tmp_path / "run-0.json"
    with ScriptedProviders({"hi": [Turn(content="hello")]}) as provider:
        with ReplayProxy(
            {"openai": provider.openai_url}, record_headers=["x-team", "Authorization", "OpenAI-Organization"]
        ) as proxy:
            recording = session(path, "record")
            c = openai.OpenAI(
                api_key=KEY,
                organization="org-secretorganisation",
                project="proj_secretproject",
                base_url=proxy.base_url(proxy.route(recording), "openai"),
                default_query={"api-version": "2025-01-01", "api_key": KEY},
                default_headers={"x-team": "search", "cookie": "session=secret-cookie", "x-api-key": KEY},
            )
            assert ask(c, "hi") == "hello"
            recording.finish()
        forwarded = provider.received[0].headers
    assert (
        forwarded["authorization"] == f"Bearer {KEY}" and forwarded["openai-organization"] == "org-secretorganisation"
    )
    assert "api_key=" + KEY in provider.received[0].path  # the provider still gets what the agent sent
    text = path.read_text()
    for secret in (KEY, "org-secretorganisation", "proj_secretproject", "secret-cookie", "Bearer"):
        assert secret not in text
    assert '"x-team": "search"' in text and '"api-version": "2025-01-01"' in text  # allow-listed ones are kept
    assert "request-id" not in text  # an answer's headers beyond its content type are not kept


def raw_request(port: int, path: str, headers: dict[str, str] | None = None, body: bytes = b"{}") -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("POST", path, body=body, headers={"content-type": "application/json", **(headers or {})})
    response = connection.getresponse()
    answer = json.loads(response.read())
    connection.close()
    return response.status, answer


def test_only_loopback_hosts_and_known_routes_are_served(tmp_path):
    with ReplayProxy({"openai": "http://127.0.0.1:9/v1"}) as proxy:
        token = proxy.route(session(tmp_path / "r.json", "replay"))
        status, answer = raw_request(
            proxy.port, f"/agentci/{token}/openai/chat/completions", {"host": "attacker.example"}
        )
        assert status == 403 and "attacker.example" in answer["error"]["message"]
        status, answer = raw_request(proxy.port, "/agentci/nosuchtoken/openai/chat/completions")
        assert status == 404 and "no run is bound" in answer["error"]["message"]
        status, answer = raw_request(proxy.port, f"/agentci/{token}/gemini/x")
        assert status == 404 and "no upstream for provider 'gemini' (configured: openai)" in answer["error"]["message"]
        status, answer = raw_request(proxy.port, "/v1/chat/completions")
        assert status == 404 and "use the base URL AgentCI gives the agent" in answer["error"]["message"]
        waiting = proxy.route()
        status, answer = raw_request(proxy.port, f"/agentci/{waiting}/openai/chat/completions")
        assert status == 503
        proxy.close(token)
        status, _ = raw_request(proxy.port, f"/agentci/{token}/openai/chat/completions")
        assert status == 404
    assert proxy._http.server_address[0] == "127.0.0.1"


def test_gzip_and_chunked_request_bodies_are_keyed_as_plain_ones(tmp_path):
    path = tmp_path / "run-0.json"
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "zip"}]}
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        recording = session(path, "record")
        assert ask(client(proxy, proxy.route(recording)), "zip") == "answer 1"
        recording.finish()
        token = proxy.route(session(path, "replay"))
        headers = {"authorization": f"Bearer {KEY}", "content-encoding": "gzip"}
        status, answer = raw_request(
            proxy.port, f"/agentci/{token}/openai/chat/completions", headers, gzip.compress(json.dumps(body).encode())
        )
        assert (status, answer["choices"][0]["message"]["content"]) == (200, "answer 1")
        token = proxy.route(session(path, "replay"))
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        chunks = iter([json.dumps(body)[:10].encode(), json.dumps(body)[10:].encode()])
        connection.request("POST", f"/agentci/{token}/openai/chat/completions", body=chunks, encode_chunked=True)
        answer = json.loads(connection.getresponse().read())
        assert answer["choices"][0]["message"]["content"] == "answer 1", answer


def test_answers_the_sdk_retries_are_passed_on_but_not_recorded(tmp_path):
    path = tmp_path / "run-0.json"
    with Counting() as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        provider.fail_next("429", retry_after=0)
        provider.fail_next("500")
        recording = session(path, "record")
        assert ask(client(proxy, proxy.route(recording), max_retries=2), "hi") == "answer 1"
        assert provider.count == 3
        figures = recording.finish()
    assert (
        figures.live == 1 and len(json.loads(path.read_text())["calls"]) == 1 and "rate limited" not in path.read_text()
    )


def test_a_provider_that_cannot_be_reached_is_a_bad_gateway_and_nothing_is_recorded(tmp_path):
    path = tmp_path / "run-0.json"
    with FakeLLMServer() as gone:
        url = gone.openai_url
    logged: list[str] = []
    with ReplayProxy({"openai": url}, log=logged.append) as proxy:
        recording = session(path, "record")
        with pytest.raises(openai.InternalServerError, match="could not be reached"):
            ask(client(proxy, proxy.route(recording)), "hi")
    assert recording.finish().live == 0 and json.loads(path.read_text())["calls"] == []
    assert logged and "could not be reached" in logged[0]


SCRIPTS = {f"question {n}": [Turn(tool_calls=[("lookup", {"n": n})]), Turn(content=f"answer to {n}")] for n in range(8)}


def run_of(proxy: ReplayProxy, n: int, replaying: ReplaySession) -> tuple[str, str]:
    c = client(proxy, proxy.route(replaying))
    messages: list[dict] = [{"role": "user", "content": f"question {n}"}]
    first = c.chat.completions.create(model="m", messages=messages).choices[0].message
    messages += [
        first.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "ok"},
    ]
    second = c.chat.completions.create(model="m", messages=messages).choices[0].message
    return first.tool_calls[0].function.arguments, second.content or ""


def test_eight_runs_at_once_each_record_and_replay_their_own_calls(tmp_path):
    paths = [tmp_path / f"q{n}" / "run-0.json" for n in range(8)]
    expected = [(json.dumps({"n": n}), f"answer to {n}") for n in range(8)]
    with ScriptedProviders(SCRIPTS, delay=0.05) as provider, ReplayProxy({"openai": provider.openai_url}) as proxy:
        for mode in ("record", "replay"):
            runs = [session(path, mode) for path in paths]
            with ThreadPoolExecutor(8) as pool:
                found = list(pool.map(run_of, [proxy] * 8, range(8), runs))
            assert found == expected
            assert all((r.finish().replayed, r.figures.live) == ((2, 0) if mode == "replay" else (0, 2)) for r in runs)
        assert provider.count == 16
    for n, path in enumerate(paths):
        text = path.read_text()
        assert f"question {n}" in text and not any(f"question {m}\n" in text for m in range(8) if m != n)


def test_live_calls_to_an_https_provider_tunnel_through_https_proxy_unless_exempt():
    from agentci_action.run.replay.upstream import Upstream

    proxied = {"HTTPS_PROXY": "http://proxy.internal:3128", "NO_PROXY": "internal.example,.corp"}
    assert Upstream("https://api.openai.com/v1", environ=proxied).tunnel == ("proxy.internal", 3128)
    assert Upstream("https://llm.internal.example/v1", environ=proxied).tunnel is None
    assert Upstream("https://127.0.0.1:8443/v1", environ=proxied).tunnel is None  # loopback never is
    assert Upstream("http://vllm.lan:8000/v1", environ=proxied).tunnel is None  # plain HTTP goes direct
    assert Upstream("https://api.anthropic.com", environ={}).tunnel is None
    with pytest.raises(ValueError, match="give an http:// or https:// URL"):
        Upstream("localhost:8000")

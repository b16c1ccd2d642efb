"""Record and replay of model calls: what the proxy adds to a live call, and how fast it replays, side by side.

    python benchmarks/bench_replay.py [--calls 400] [--replays 8000] [--delay 1.0] [--rounds 3]

Overhead per call: the real openai SDK in its own process (as an agent is) calls a local provider (its own
process, tests/fakes/scripted_providers.py) directly and through the proxy recording every call (this process,
as under `agentci run`), alternating call by call, plain and streamed (a two-tool-call turn of the scripted model).
Printed: p50 and p95 of each and the p50 difference (target ≤ 2 ms).

Replay throughput: a recording of `--replays` calls (a 1.6 KB Chat Completions request, system prompt and two
tools; half answered plainly, half as 20-frame streams), loaded, then replayed to four keep-alive connections of
a client process posting those requests as fast as it can. Printed: calls per second (target ≥ 2,000), calls per
CPU second the proxy used (steady where the wall clock of a shared machine is not), and how fast the recording loads.

The example suite end to end: `agentci test` of examples/openai-agent (the real openai SDK agent on 4 workers, 4
queries, 7 model calls) against a slow fake provider (`--delay` seconds per call, a hosted model's latency) with
`--replay off`, and replayed from its recordings with no provider, alternating `--rounds` times. Printed: the
median wall time of each and their ratio (both include starting Python and importing the openai SDK).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from agentci_action.run.replay import recordings  # noqa: E402
from agentci_action.run.replay.model_proxy import ReplayProxy  # noqa: E402
from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest, RecordedResponse  # noqa: E402
from agentci_action.run.replay.replay_session import ReplaySession  # noqa: E402
from agentci_action.run.replay.request_keys import Volatility  # noqa: E402

UPSTREAM = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from fakes.scripted_providers import ScriptedProviders
    from fakes.scripted_openai import Turn
    script = {"Weather in Paris?": [Turn(tool_calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})])]}
    with ScriptedProviders(script) as server:
        print(server.openai_url, flush=True)
        sys.stdin.read()
    """
)

AGENT = textwrap.dedent(
    """
    import json, sys, time
    import openai
    direct, proxied, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    clients = {name: openai.OpenAI(api_key="sk-bench", base_url=url, max_retries=0) for name, url in (("direct", direct), ("proxy", proxied))}
    ask = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    times = {f"{name} {kind}": [] for name in clients for kind in ("plain", "stream")}
    for i in range(calls + 20):
        for name, client in (clients.items() if i % 2 else reversed(clients.items())):
            started = time.perf_counter()
            client.chat.completions.create(**ask)
            plain = time.perf_counter() - started
            started = time.perf_counter()
            for _ in client.chat.completions.create(**ask, stream=True):
                pass
            stream = time.perf_counter() - started
            if i >= 20:  # warm-up: connections, imports, first-call paths
                times[f"{name} plain"].append(plain)
                times[f"{name} stream"].append(stream)
    print(json.dumps(times))
    """
)

POSTER = textwrap.dedent(
    """
    import http.client, json, sys, threading, time
    port, path, bodies = int(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3]))
    def post(mine):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        for body in mine:
            connection.request("POST", path, body=body, headers={"content-type": "application/json"})
            response = connection.getresponse()
            response.read()
            assert response.status == 200, response.status
    threads = [threading.Thread(target=post, args=(bodies[i::4],)) for i in range(4)]
    started = time.perf_counter()
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(time.perf_counter() - started)
    """
)

SYSTEM = "You are a weather agent.\n" + "Answer briefly and use the tools when a city is named.\n" * 12
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name[4:]} in a place.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
    for name in ("get_weather", "get_time")
]


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q * 100) - 1] if len(values) > 1 else values[0]


def overhead(calls: int) -> None:
    upstream = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM, str(ROOT / "tests")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # clients that close a stream with its last bytes unread: logged resets
        text=True,
    )
    try:
        assert upstream.stdout is not None
        url = upstream.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as scratch, ReplayProxy({"openai": url}) as proxy:
            session = ReplaySession(
                query="bench", run=0, path=Path(scratch) / "run.json", mode="record", volatility=Volatility.declared()
            )
            base = proxy.base_url(proxy.route(session), "openai")
            out = subprocess.run(
                [sys.executable, "-c", AGENT, url, base, str(calls)], capture_output=True, text=True, check=True
            )
            times = json.loads(out.stdout)
            figures = session.finish()
    finally:
        upstream.communicate("")
    print(f"overhead per call, the openai SDK in its own process, {calls} calls each, alternating:")
    for kind in ("plain", "stream"):
        direct, proxied = times[f"direct {kind}"], times[f"proxy {kind}"]
        p50d, p50p = statistics.median(direct), statistics.median(proxied)
        print(
            f"  {kind:6}: direct p50 {p50d * 1000:.2f} ms p95 {quantile(direct, 0.95) * 1000:.2f} ms · "
            f"through the proxy p50 {p50p * 1000:.2f} ms p95 {quantile(proxied, 0.95) * 1000:.2f} ms · "
            f"overhead p50 {(p50p - p50d) * 1000:.2f} ms (target ≤ 2 ms)"
        )
    print(f"  ({figures.live} calls recorded)")


def recorded_calls(count: int) -> tuple[list[RecordedCall], list[str]]:
    """`count` calls, each a distinct request (its question numbered), half answered plainly, half streamed."""
    calls, bodies = [], []
    for number in range(count):
        body = {
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Weather in city {number}?"},
            ],
            "tools": TOOLS,
            "stream": number % 2 == 1,
        }
        message = {"role": "assistant", "content": f"It is 21°C in city {number}.", "refusal": None}
        head = {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini"}
        if number % 2:
            frames = [{"data": {**head, "choices": [{"index": 0, "delta": {"content": f"w{i} "}}]}} for i in range(19)]
            content = {"stream": [*frames, {"text": "[DONE]"}]}
            kind = "text/event-stream"
        else:
            usage = {"prompt_tokens": 380, "completion_tokens": 9, "total_tokens": 389}
            content = {
                "body": {**head, "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}
            }
            kind = "application/json"
        request = RecordedRequest(provider="openai", method="POST", path="/chat/completions", content={"body": body})
        response = RecordedResponse(status=200, headers={"content-type": kind}, content=content)
        calls.append(RecordedCall(request=request, response=response))
        bodies.append(json.dumps(body))
    return calls, bodies


def throughput(count: int) -> None:
    calls, bodies = recorded_calls(count)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "run-0.json"
        recordings.write(path, recordings.render("bench", 0, calls))
        started = time.perf_counter()
        session = ReplaySession(query="bench", run=0, path=path, mode="replay", volatility=Volatility.declared())
        loaded = time.perf_counter() - started
        (Path(scratch) / "bodies.json").write_text(json.dumps(bodies))
        with ReplayProxy({"openai": "http://127.0.0.1:9/v1"}) as proxy:
            route = proxy.base_url(proxy.route(session), "openai").split(str(proxy.port), 1)[1]
            cpu = time.process_time()  # this process only serves while the client posts
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    POSTER,
                    str(proxy.port),
                    f"{route}/chat/completions",
                    str(Path(scratch) / "bodies.json"),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            cpu = time.process_time() - cpu
        figures = session.finish()
        size = path.stat().st_size
    assert figures.replayed == count and not figures.misses, figures
    elapsed = float(out.stdout)
    print(f"replay throughput, {count} calls (half streamed), 4 connections from a client process:")
    print(f"  {count / elapsed:,.0f} calls/s (target ≥ 2,000)")
    print(f"  {count / cpu:,.0f} calls per CPU second of the proxy (what a core of its own would serve)")
    print(f"  recording of {size / 1e6:.1f} MB loaded in {loaded:.2f} s ({count / loaded:,.0f} calls/s)")


def example_suite(delay: float, rounds: int) -> None:
    from e2e.test_example_openai_agent import KEY, order_model
    from fakes.llm_server import FakeLLMServer
    from helpers import hermetic_environment

    spec = ROOT / "examples" / "openai-agent" / "agentci_spec.yaml"
    command = [sys.executable, "-m", "agentci_action", "test", "--spec", str(spec), "--judge-mode", "off"]
    times: dict[str, list[float]] = {"live": [], "replayed": []}
    with FakeLLMServer(agent_model=order_model, delay=delay) as server:
        live_env = hermetic_environment(OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY=KEY)
        for _ in range(rounds):
            for kind, extra, env in (("live", ["--replay", "off"], live_env), ("replayed", [], hermetic_environment())):
                started = time.perf_counter()
                subprocess.run([*command, *extra], env=env, cwd=ROOT, capture_output=True, check=True)
                times[kind].append(time.perf_counter() - started)
    live, replayed = statistics.median(times["live"]), statistics.median(times["replayed"])
    print(
        f"examples/openai-agent, `agentci test` end to end, {rounds} rounds alternating, provider {delay:g} s per call:"
    )
    print(f"  live {live:.2f} s · replayed {replayed:.2f} s (no provider, no key) · {live / replayed:.1f}× faster")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--replays", type=int, default=8000)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    overhead(args.calls)
    throughput(args.replays)
    example_suite(args.delay, args.rounds)


if __name__ == "__main__":
    main()

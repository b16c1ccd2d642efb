"""The openai-agent example.

A real `openai` SDK tool-calling agent, run by the python runner against a local fake OpenAI server
(tests/fakes/llm_server.py with an agent model), so the whole path runs without a key; and replayed from its committed
recordings (made against that server by the test below that re-records them) with no server at all.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from fakes.llm_server import FakeLLMServer
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action.engine.token_attribution import query_tokens
from agentci_action.trace.load import load_traces
from agentci_action.trace.tokenizer import encoding

EXAMPLE = ROOT / "examples" / "openai-agent"
KEY = "sk-test-openai-agent-0123456789"


def order_model(messages: list[dict], tools: list[dict]) -> dict:
    """The model the example's agent talks to.

    One tool call for an order or a request for a human, then an answer built from the tool's result; anything else is
    declined without tools.
    """
    last = messages[-1]
    if last["role"] == "tool":
        asked = next(m for m in reversed(messages) if m["role"] == "assistant")["tool_calls"][0]["function"]
        if asked["name"] == "get_order_status":
            order = json.loads(asked["arguments"])["order_id"]
            return {"content": f"Order {order} is {last['content']}."}
        return {"content": f"I've asked a human agent to take over: {last['content']}."}
    assert {t["function"]["name"] for t in tools} == {"get_order_status", "escalate_to_human"}
    order = re.search(r"\bA-\d+\b", last["content"])
    if order:
        call = ("get_order_status", {"order_id": order.group()})
    elif "human" in last["content"].lower():
        call = ("escalate_to_human", {"reason": "the customer asked for a human"})
    else:
        return {"content": "I can only help with questions about your orders."}
    return {
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": call[0], "arguments": json.dumps(call[1])}}
        ]
    }


def environment(server: FakeLLMServer, **extra: str) -> dict[str, str]:
    return hermetic_environment(OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY=KEY, **extra)


def run_example(spec: Path, output: Path, replay: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`agentci run` of the example's spec (or a copy) with `--replay replay`."""
    return run_cli("run", "--spec", spec, "--output", output, "--replay", replay, env=env)


def facts(directory: Path) -> list[tuple[str, str, str, int]]:
    """Each trace in a directory's files: its query, answer, tool calls and number of model calls."""
    traces = [json.loads(line) for p in sorted(directory.glob("*.jsonl")) for line in p.read_text().splitlines()]
    return sorted(
        (t["id"], t["final_answer"], json.dumps(t.get("tool_calls", [])), len(t["llm_calls"])) for t in traces
    )


def test_agentci_test_runs_the_real_sdk_agent_and_evaluates_it(tmp_path):
    with FakeLLMServer(agent_model=order_model) as server:
        result = run_cli(
            "test",
            "--spec",
            EXAMPLE / "agentci_spec.yaml",
            "--record",
            tmp_path / "traces",
            "--format",
            "json",
            "--judge-mode",
            "off",
            "--replay",
            "off",
            env=environment(server),
        )
        requests = server.count
    assert result.returncode == 0, result.stderr
    statuses = {r["id"]: r["status"] for r in json.loads(result.stdout)["results"]}
    assert statuses == {"order-status": "pass", "unpaid-order": "pass", "angry-customer": "pass", "off-topic": "pass"}
    assert requests == 7  # two model calls for each of the three tool-using queries, one for off-topic
    (trace,) = [json.loads(line) for line in (tmp_path / "traces" / "order-status.jsonl").read_text().splitlines()]
    assert trace["tool_calls"] == [
        {
            "name": "get_order_status",
            "arguments": {"order_id": "A-1001"},
            "result": "shipped on 2026-11-20, arriving 2026-11-24",
        }
    ]
    assert [c["model"] for c in trace["llm_calls"]] == ["gpt-4o-mini", "gpt-4o-mini"]
    assert trace["total_tokens"] > 0 and trace["total_cost_usd"] > 0
    assert KEY not in result.stdout + result.stderr


def test_recorded_traces_are_what_the_agent_produces(tmp_path):
    with FakeLLMServer(agent_model=order_model) as server:
        result = run_example(EXAMPLE / "agentci_spec.yaml", tmp_path, "off", environment(server))
    assert result.returncode == 0, result.stderr
    assert facts(tmp_path) == facts(EXAMPLE / "traces")


def test_a_rate_limited_provider_is_retried_by_the_sdk_and_a_dead_one_is_an_infra_error(tmp_path):
    with FakeLLMServer(agent_model=order_model) as server:
        server.fail_next("429", retry_after=0)
        result = run_example(EXAMPLE / "agentci_spec.yaml", tmp_path / "a", "off", environment(server))
        assert result.returncode == 0, result.stderr
    dead = environment(server)  # the server is gone: every call fails to connect
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        (EXAMPLE / "agentci_spec.yaml")
        .read_text()
        .replace("timeout_s: 60", "timeout_s: 60\n  retries: 1\n  backoff_s: 0")
    )
    (tmp_path / "agent.py").write_text((EXAMPLE / "agent.py").read_text())
    result = run_example(spec, tmp_path / "b", "off", dead)
    assert result.returncode == 2
    assert "error: [INFRA] query 'order-status' run 0: raised APIConnectionError: Connection error." in result.stderr
    assert "(2 attempts)" in result.stderr


def test_the_example_runs_replayed_from_its_recordings_with_no_key_and_no_server(tmp_path):
    result = run_cli(
        "test",
        "--spec",
        EXAMPLE / "agentci_spec.yaml",
        "--record",
        tmp_path,
        "--format",
        "json",
        "--judge-mode",
        "off",
        env=hermetic_environment(),
    )
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    assert {r["id"]: r["status"] for r in results["results"]} == dict.fromkeys(
        ["order-status", "unpaid-order", "angry-customer", "off-topic"], "pass"
    )
    assert results["summary"]["model_calls"] == {
        "replayed": 7,
        "live": 0,
        "paid_usd": 0.0,
        "missed": 0,
        "went_live": [],
    }
    replayed = [json.loads(line) for p in sorted(tmp_path.glob("*.jsonl")) for line in p.read_text().splitlines()]
    recorded = [json.loads(line) for line in (EXAMPLE / "traces" / "current.jsonl").read_text().splitlines()]

    def facts(traces):
        return sorted((t["id"], t["final_answer"], json.dumps(t.get("tool_calls", []))) for t in traces)

    assert facts(replayed) == facts(recorded)
    assert_attributed_from_recordings(tmp_path)
    assert results["summary"]["tokens"]["calls"] == 7  # every replayed call split from its recorded request


def assert_attributed_from_recordings(directory: Path) -> None:
    """The agent's trace shows no request.

    Each of its model calls was split from the request the proxy recorded (the i-th recorded call for the i-th model
    call), counted by tiktoken, and adds up to its reported tokens.
    """
    o200k = encoding("o200k_base")
    for trace in load_traces([directory]):
        recorded = json.loads((EXAMPLE / "recordings" / trace.id / "run-0.json").read_text())["calls"]
        assert len(trace.llm_calls) == len(recorded), trace.id
        for call, made in zip(trace.llm_calls, recorded):
            body = made["request"]["body"]
            parts = {(p["component"], p.get("name")): p["tokens"] for p in call.input_breakdown.parts}
            assert parts[("system_prompt", None)] == len(o200k.encode_ordinary(body["messages"][0]["content"]))
            schema = json.dumps(body["tools"][0], ensure_ascii=False, separators=(",", ":"))
            assert parts[("tool_schemas", "get_order_status")] == len(o200k.encode_ordinary(schema))
            results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
            assert sum(v for (c, _), v in parts.items() if c == "tool_results") == sum(
                len(o200k.encode_ordinary(r)) for r in results
            )
        found = query_tokens([trace])
        assert sum(found.components.values()) == sum(c.input_tokens for c in trace.llm_calls) > 0
        # OpenAI renders tool definitions in a syntax of its own, so a request with tools is an estimate, never exact
        assert not found.exact and "unattributed" not in found.components


def test_recording_the_example_again_against_the_scripted_server_writes_its_recordings_byte_for_byte(tmp_path):
    copy = tmp_path / "openai-agent"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("recordings", "__pycache__"))
    with FakeLLMServer(agent_model=order_model) as server:
        result = run_example(copy / "agentci_spec.yaml", tmp_path / "traces", "record", environment(server))
    assert result.returncode == 0, result.stderr
    committed = sorted(p.relative_to(EXAMPLE) for p in (EXAMPLE / "recordings").rglob("*.json"))
    assert sorted(p.relative_to(copy) for p in (copy / "recordings").rglob("*.json")) == committed
    for path in committed:
        assert (copy / path).read_bytes() == (EXAMPLE / path).read_bytes(), path
        assert KEY not in (copy / path).read_text()
    assert_attributed_from_recordings(tmp_path / "traces")  # the live calls, as the proxy recorded them

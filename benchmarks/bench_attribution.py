"""What the token attribution adds to evaluation, side by side in one run.

    python benchmarks/bench_attribution.py [--queries 1000] [--repeats 3]

Three suites of `--queries` queries, each timed with the attribution and with it left out (CPU time, best of
`--repeats` interleaved rounds):
- bench_engine's (canonical traces, 20 tool calls, no request to split): evaluate_spec, the attribution left out by
  replacing query_tokens with a function returning None; what looking for requests costs;
- the product's own flow: a Chat Completions suite (below) as `agentci run` stores its runs (trace_store's canonical
  JSON Lines, each model call with the input breakdown counted while the agent ran), against the same runs stored
  without their breakdowns: load_traces + evaluate_spec in this process, and `agentci test --format json --output`
  as a whole process (start, loading, evaluation, the results file with every query's attribution);
- the same Chat Completions runs read in the recipe's own format, every request split and counted on loading: each
  query a system prompt, three tool definitions, the question, two tool calls each returning a 2-4 KB JSON document,
  the answer; three model calls. Timed from the files to the results (load_traces: parse, split each request, count,
  price; then evaluate_spec), against the adapters' `breakdown` and query_tokens replaced by functions returning None.
  Each round with the attribution starts with no text counted, as a fresh process does (the counts a process keeps,
  trace/tokenizer.py, would otherwise serve every round after the first): the share is split into tiktoken encoding
  the suite's distinct texts once (timed alone, in the same rounds) and the rest, the attribution's own Python
  (splitting requests, validating the parts, scaling, summing); the same suite with every text already counted
  shows the latter alone. The tokenizer's files are loaded once per process (tiktoken building o200k_base): timed
  apart, before.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import yaml
from bench_cli import process
from bench_engine import make_query, make_trace, timed

from agentci_action.engine import evaluate_spec as evaluate_module
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.run.trace_store import line
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace import tokenizer
from agentci_action.trace.adapters import openai_chat
from agentci_action.trace.canonical import Trace
from agentci_action.trace.load import load_traces
from agentci_action.trace.tokenizer import encoding

SYSTEM = "You are the support agent of an airline. Look the reservation up, check the flight, then answer briefly."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ').capitalize()} for the customer.",
            "parameters": {
                "type": "object",
                "properties": {f"field_{k}": {"type": "string", "description": f"Field {k}"} for k in range(width)},
            },
        },
    }
    for name, width in (("get_reservation_details", 3), ("get_flight_status", 2), ("update_reservation", 6))
]


def chat_record(rng: random.Random, query_id: str) -> dict:
    """One run as the Chat Completions recipe writes it: messages, completions with usage, tools."""
    question = f"What is on my reservation {query_id.upper()}, and is my flight on time?"
    messages: list[dict] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    completions = []
    for step, tool in enumerate(("get_reservation_details", "get_flight_status")):
        flights = [  # each result a text of its own: nothing counted once serves another
            {
                "flight": f"HAT{rng.randrange(1000):03d}",
                "date": f"2024-05-{rng.randrange(1, 29):02d}",
                "status": "on time",
            }
            for _ in range(rng.randrange(20, 40))
        ]
        call = {"id": f"call_{step}", "type": "function", "function": {"name": tool, "arguments": '{"field_0": "x"}'}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{step}", "content": json.dumps({"flights": flights})})
    messages.append({"role": "assistant", "content": f"Your reservation {query_id} is confirmed and on time."})
    for step in range(3):
        completions.append(
            {
                "model": "gpt-4o-mini-2024-07-18",
                "created": 1767225600,
                "usage": {"prompt_tokens": 400 + 900 * step, "completion_tokens": 30},
            }
        )
    return {"id": query_id, "messages": messages, "completions": completions, "tools": TOOLS}


def counted_texts(chat: Path) -> list[str]:
    """The distinct texts the attribution counts on the suite, as the tokenizer is asked for them."""
    seen: dict[str, None] = {}
    count = tokenizer._count

    def recorded(name: str, text: str) -> int:
        seen[text] = None
        return count(name, text)

    with mock.patch.object(tokenizer, "_count", recorded):
        load_traces([str(chat)])
    return list(seen)


def stored(traces: list[Trace], path: Path, breakdowns: bool) -> Path:
    """`traces` written as `agentci run` stores runs, each model call with its input breakdown or without it."""

    def kept(trace: Trace) -> Trace:
        calls = [call.model_copy(update={"input_breakdown": None}) for call in trace.llm_calls]
        return trace if breakdowns else trace.model_copy(update={"llm_calls": calls})

    path.write_text("".join(line(kept(trace)) + "\n" for trace in traces), encoding="utf-8")
    return path


@contextmanager
def without_attribution(adapters: bool):
    """The attribution left out: no breakdown read from a request (with `adapters`), no query attribution."""
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(evaluate_module, "query_tokens", lambda traces: None))
        if adapters:
            stack.enter_context(mock.patch.object(openai_chat, "breakdown", lambda *args: None))
        yield


def share(best: dict[str, float], with_it: str, without: str) -> str:
    """ "W s with the attribution, O s without: +x % of the time" for two entries of `best`."""
    added = best[with_it] - best[without]
    return f"{best[with_it]:.3f} s with the attribution, {best[without]:.3f} s without: {added / best[with_it]:+.1%}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(args.queries)]
    spec = AgentCISpec(agent="bench", queries=[make_query(i) for i in ids])
    start = time.process_time()
    encoding("o200k_base")
    load_once = time.process_time() - start
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        canonical, chat, spec_path = folder / "canonical.jsonl", folder / "chat.jsonl", folder / "agentci_spec.yaml"
        canonical.write_text("".join(json.dumps(make_trace(rng, i, 20)) + "\n" for i in ids))
        chat.write_text("".join(json.dumps(chat_record(rng, i)) + "\n" for i in ids))
        queries = [query.model_dump(mode="json", exclude_defaults=True) for query in spec.queries]
        spec_path.write_text(yaml.safe_dump({"agent": "bench", "queries": queries}, sort_keys=False))
        plain = load_traces([str(canonical)])
        runs = load_traces([str(chat)])
        with_parts = stored(runs, folder / "stored.jsonl", breakdowns=True)
        without_parts = stored(runs, folder / "stored-without.jsonl", breakdowns=False)
        texts, o200k = counted_texts(chat), encoding("o200k_base")
        names = ("canonical", "canonical_without", "stored", "stored_without", "process", "process_without")
        best = dict.fromkeys((*names, "chat", "chat_counted", "chat_without", "encoding"), float("inf"))

        def keep(name: str, seconds: float) -> None:
            best[name] = min(best[name], seconds)

        def test(traces: Path) -> float:
            output = folder / "results.json"
            return process("test", "--spec", str(spec_path), "--traces", str(traces), "--baseline", "none",
                           "--format", "json", "--output", str(output))[1]  # fmt: skip

        for _ in range(args.repeats):  # interleaved: the machine's other work falls on either side alike
            keep("canonical", timed(lambda: evaluate_spec(spec, plain))[1])
            with without_attribution(adapters=False):
                keep("canonical_without", timed(lambda: evaluate_spec(spec, plain))[1])
            stored_run, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(with_parts)])))
            keep("stored", seconds)
            keep("stored_without", timed(lambda: evaluate_spec(spec, load_traces([str(without_parts)])))[1])
            keep("process", test(with_parts))
            keep("process_without", test(without_parts))
            tokenizer._count.cache_clear()  # no text counted yet, as in a fresh process
            run, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(chat)])))
            keep("chat", seconds)
            counted, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(chat)])))
            keep("chat_counted", seconds)
            with without_attribution(adapters=True):
                bare, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(chat)])))
            keep("chat_without", seconds)
            keep("encoding", timed(lambda: [o200k.encode_ordinary(text) for text in texts])[1])
        assert run.summary.tokens is not None and bare.summary.tokens is None
        assert counted.summary.tokens == run.summary.tokens == stored_run.summary.tokens
        sizes = [path.stat().st_size / 1e6 for path in (chat, with_parts, without_parts)]
    print(f"tokenizer files loaded once per process (o200k_base): {load_once:.2f} s")
    print(f"canonical suite, {args.queries} queries x 20 calls (evaluate_spec): {share(best, *names[:2])}")
    print(
        f"the Chat suite as `agentci run` stores it ({sizes[1]:.1f} MB with the breakdowns, {sizes[2]:.1f} MB "
        f"without): load_traces + evaluate_spec {share(best, *names[2:4])}; `agentci test`, whole process "
        f"{share(best, *names[4:6])}"
    )
    added, without = best["chat"] - best["chat_without"], best["chat_without"]
    print(
        f"the Chat suite read as recorded, {args.queries} queries, 3 calls each, {sizes[0]:.1f} MB, every request "
        f"counted on loading (load_traces + evaluate_spec): {share(best, 'chat', 'chat_without')}; of which tiktoken "
        f"encoding the {len(texts):,} distinct texts ({sum(map(len, texts)) / 1e6:.2f} MB) once: "
        f"{best['encoding']:.3f} s ({best['encoding'] / best['chat']:.1%}), the rest "
        f"{(added - best['encoding']) / best['chat']:.1%}"
    )
    print(
        f"the same with every text already counted: {best['chat_counted']:.3f} s, "
        f"{(best['chat_counted'] - without) / best['chat_counted']:+.1%} of the time"
    )
    components = run.summary.tokens.components
    print("input tokens by component over the suite: " + ", ".join(f"{k} {v:,}" for k, v in components.items()))


if __name__ == "__main__":
    main()

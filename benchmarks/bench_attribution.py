"""What the token attribution adds to evaluation, side by side in one run.

    python benchmarks/bench_attribution.py [--queries 1000] [--repeats 3]

Two suites of `--queries` queries:
- bench_engine's (canonical traces, 20 tool calls, no request to split): evaluate_spec with the attribution and with
  it left out (query_tokens replaced by a function returning None), the cost of looking for requests;
- a Chat Completions suite whose every query is a run as the README's recipe records it: a system prompt, three tool
  definitions, the question, two tool calls each returning a 2-4 KB JSON document, the answer; three model calls.
  Timed from the files to the results (load_traces: parse, split each request, count, price; then evaluate_spec),
  with the attribution and with it left out (the adapters' `breakdown` and query_tokens replaced by functions
  returning None).
Prints the time of each (CPU time, best of `--repeats` interleaved rounds) and the attribution's share of the time
with it. Each round with the attribution starts with no text counted, as a fresh process does (the counts a process
keeps, trace/tokenizer.py, would otherwise serve every round after the first): the share is split into tiktoken
encoding the suite's distinct texts once (timed alone, in the same rounds) and the rest, the attribution's own Python
(splitting requests, validating the parts, scaling, summing); the same suite with every text already counted shows
the latter alone. The tokenizer's files are loaded once per process (tiktoken building o200k_base): timed apart,
before.
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

from bench_engine import make_query, make_trace, timed

from agentci_action.engine import evaluate_spec as evaluate_module
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace import tokenizer
from agentci_action.trace.adapters import openai_chat
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


@contextmanager
def without_attribution(adapters: bool):
    """The attribution left out: no breakdown read from a request (with `adapters`), no query attribution."""
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(evaluate_module, "query_tokens", lambda traces: None))
        if adapters:
            stack.enter_context(mock.patch.object(openai_chat, "breakdown", lambda *args: None))
        yield


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
        canonical, chat = Path(tmp, "canonical.jsonl"), Path(tmp, "chat.jsonl")
        canonical.write_text("".join(json.dumps(make_trace(rng, i, 20)) + "\n" for i in ids))
        chat.write_text("".join(json.dumps(chat_record(rng, i)) + "\n" for i in ids))
        plain = load_traces([str(canonical)])
        texts, o200k = counted_texts(chat), encoding("o200k_base")
        names = ("canonical", "canonical_without", "chat", "chat_counted", "chat_without", "encoding")
        best = dict.fromkeys(names, float("inf"))
        for _ in range(args.repeats):  # interleaved: the machine's other work falls on either side alike
            best["canonical"] = min(best["canonical"], timed(lambda: evaluate_spec(spec, plain))[1])
            with without_attribution(adapters=False):
                best["canonical_without"] = min(best["canonical_without"], timed(lambda: evaluate_spec(spec, plain))[1])
            tokenizer._count.cache_clear()  # no text counted yet, as in a fresh process
            run, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(chat)])))
            best["chat"] = min(best["chat"], seconds)
            counted, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(chat)])))
            best["chat_counted"] = min(best["chat_counted"], seconds)
            with without_attribution(adapters=True):
                bare, seconds = timed(lambda: evaluate_spec(spec, load_traces([str(chat)])))
            best["chat_without"] = min(best["chat_without"], seconds)
            best["encoding"] = min(best["encoding"], timed(lambda: [o200k.encode_ordinary(text) for text in texts])[1])
        assert run.summary.tokens is not None and bare.summary.tokens is None
        assert counted.summary.tokens == run.summary.tokens
        size_mb = chat.stat().st_size / 1e6
    print(f"tokenizer files loaded once per process (o200k_base): {load_once:.2f} s")
    print(
        f"canonical suite, {args.queries} queries x 20 calls (evaluate_spec): {best['canonical']:.3f} s with the "
        f"attribution, {best['canonical_without']:.3f} s without: "
        f"{(best['canonical'] - best['canonical_without']) / best['canonical']:+.1%} of the time"
    )
    added, without = best["chat"] - best["chat_without"], best["chat_without"]
    print(
        f"Chat Completions suite, {args.queries} queries, 3 calls each, {size_mb:.1f} MB (load_traces + evaluate_spec): "
        f"{best['chat']:.3f} s with the attribution, {without:.3f} s without: {added / best['chat']:.1%} of the time; "
        f"of which tiktoken encoding the {len(texts):,} distinct texts ({sum(map(len, texts)) / 1e6:.2f} MB) once: "
        f"{best['encoding']:.3f} s ({best['encoding'] / best['chat']:.1%}), the rest "
        f"{(added - best['encoding']) / best['chat']:.1%}"
    )
    print(
        f"the same suite with every text already counted: {best['chat_counted']:.3f} s, "
        f"{(best['chat_counted'] - without) / best['chat_counted']:.1%} of the time"
    )
    components = run.summary.tokens.components
    print("input tokens by component over the suite: " + ", ".join(f"{k} {v:,}" for k, v in components.items()))


if __name__ == "__main__":
    main()

"""`agentci goldens` on 10,000 traces, beside reading the same traces: one run, side by side.

    python benchmarks/bench_goldens.py [--traces 10000] [--seed 2026]

Writes a spec of one query and a JSON Lines file of canonical traces to a temporary directory: support-desk requests
built from templates and values (a third of them asked again in other words, a tenth repeated runs of one query id),
each with 1-4 tool calls whose arguments hold volatile values (a UUID, a timestamp), an answer, and priced model calls.
Then times, in one process:
- **read**: `load_traces` of the file (parsing, adapters, pricing), as `agentci test --traces` reads it;
- **promote**: `pipeline.goldens.promote`, everything `agentci goldens` does before writing: reading the traces again,
  proposals, masking, grouping runs, dedupe against the spec and among the candidates, the new spec's text validated
  by the loader, and every golden evaluated on its source traces by the engine;
- **dedupe**: the dedupe step alone (the index over the goldens' word sets).
Prints each in seconds and promote ÷ read.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentci_action.pipeline import goldens
from agentci_action.pipeline.golden_dedupe import NearDuplicates, words
from agentci_action.trace.load import load_traces

ASKS = [
    "Can you {verb} my {thing} {ref} for {when}?",
    "I need to {verb} the {thing} with reference {ref}, ideally {when}.",
    "Please {verb} {thing} {ref} {when}, thanks",
    "Is it possible to {verb} my {thing} ({ref}) {when}?",
]
VERBS = ["cancel", "change", "upgrade", "refund", "rebook", "check", "extend", "transfer"]
THINGS = ["booking", "flight", "hotel room", "subscription", "order", "ticket", "rental car", "seat"]
WHENS = ["today", "tomorrow", "next Monday", "before Friday", "this weekend", "in May", "after the holidays"]
TOOLS = ["lookup_booking", "check_policy", "update_booking", "issue_refund", "notify_customer"]


def trace(n: int, rng: random.Random, asked: dict[str, str]) -> dict:
    """One run: a request (sometimes one asked before, in other words, or a repeated run), its calls and answer."""
    if asked and rng.random() < 0.1:  # a repeated run of a query id seen before
        key = rng.choice(list(asked))
        query = asked[key]
    else:
        ref = f"R{rng.randrange(10**6):06d}"
        query = rng.choice(ASKS).format(
            verb=rng.choice(VERBS), thing=rng.choice(THINGS), ref=ref, when=rng.choice(WHENS)
        )
        key = f"q{n}"
        asked[key] = query
    calls = [
        {
            "name": rng.choice(TOOLS),
            "arguments": {
                "ref": query.split()[-2],
                "request_id": str(uuid.UUID(int=rng.getrandbits(128))),
                "at": f"2026-05-{rng.randrange(1, 29):02d}T10:00:00Z",
            },
            "result": {"ok": True},
            "duration_ms": rng.randrange(5, 200),
        }
        for _ in range(rng.randrange(1, 5))
    ]
    llm = [
        {"model": "gpt-4o-mini", "input_tokens": rng.randrange(200, 2000), "output_tokens": rng.randrange(20, 300)}
        for _ in range(len(calls) + 1)
    ]
    answer = f"Done: your request about {query.split()[-2]} is handled ({rng.choice(VERBS)}d)."
    return {
        "id": key,
        "query": query,
        "final_answer": answer,
        "tool_calls": calls,
        "llm_calls": llm,
        "metadata": {"status": "completed"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        spec, traces = Path(folder) / "agentci_spec.yaml", Path(folder) / "traces.jsonl"
        spec.write_text("version: 1\nagent: desk\nqueries:\n  - id: smoke\n    query: hello\n")
        asked: dict[str, str] = {}
        traces.write_text("".join(json.dumps(trace(n, rng, asked)) + "\n" for n in range(args.traces)))

        started = time.process_time()
        loaded = load_traces([str(traces)])
        read = time.process_time() - started

        started = time.process_time()
        promotion = goldens.promote(goldens.PromotionRequest(spec=str(spec), traces=[str(traces)]))
        promote = time.process_time() - started

        texts = [words(golden.text) for golden in promotion.kept]
        started = time.process_time()
        index = NearDuplicates(goldens.DEFAULT_SIMILARITY, texts)
        for n, found in enumerate(texts):
            index.find(found)
            index.add(str(n), found)
        dedupe = time.process_time() - started
    dropped = len(promotion.dropped)
    print(
        f"{len(loaded):,} traces: {len(promotion.kept):,} goldens, {dropped:,} dropped, {len(promotion.flagged)} flagged"
    )
    print(f"read     {read:6.2f} s")
    print(f"promote  {promote:6.2f} s  ({promote / read:.1f}× read; reading, dedupe, validation, evaluation included)")
    print(f"dedupe   {dedupe:6.2f} s  (the index alone, over the {len(texts):,} goldens kept)")


if __name__ == "__main__":
    main()

"""A conversation's evaluation against the same turns evaluated as single queries, side by side in one run.

    python benchmarks/bench_conversation.py [--conversations 1000] [--turns 5] [--tools 10] [--repeats 5]

Generates C conversations of N turns (each turn with correctness, path and cost checks, the conversation with its
own: the final answer, a forbidden tool over every turn, the totals and the turn budget) and the same C·N turns as
single queries with the same checks and traces. Times evaluate_spec (no judge) on each, CPU time, best of
`repeats` interleaved rounds. A conversation is its N turns plus one evaluation of the whole, so its cost should
be at most (N + 1) / N of the single queries' (1.2 for 5 turns): the per-turn evaluation adds no more than a single
query's evaluation per turn. Prints both, per turn, and the ratio beside that bound.
"""

from __future__ import annotations

import argparse
import random
import time

from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.canonical import Trace

TOOLS = ["search", "lookup_order", "issue_refund", "summarize", "calculator"]
TURN_CHECKS = {
    "correctness": {"expected_in_answer": ["order"], "not_in_answer": ["sorry"], "regex_match": r"\bA-\d+\b"},
    "path": {"expected_tools": ["search"], "forbidden_tools": ["shell"], "max_tool_calls": 40, "max_loops": 10},
    "cost": {"max_total_tokens": 10000, "max_llm_calls": 8, "max_latency_ms": 10000},
}
WHOLE_CHECKS = {
    "correctness": {"expected_in_answer": ["order"]},
    "path": {"forbidden_tools": ["delete_account"]},
    "cost": {"max_total_tokens": 100000, "max_turns": 50},
}


def make_turn(rng: random.Random, message: str, tools: int) -> dict:
    return {
        "query": message,
        "final_answer": f"Your order A-{rng.randint(1000, 9999)} is on its way. " * 2,
        "tool_calls": [
            {"name": rng.choice(TOOLS), "arguments": {"q": f"step {i}"}, "result": "ok", "duration_ms": 10.0}
            for i in range(tools)
        ],
        "llm_calls": [
            {"model": "gpt-4o-mini", "input_tokens": 600, "output_tokens": 80, "cost_usd": 0.0001, "duration_ms": 500}
            for _ in range(3)
        ],
    }


def suites(conversations: int, turns: int, tools: int) -> tuple[AgentCISpec, list[Trace], AgentCISpec, list[Trace]]:
    """(conversation spec, its traces, single-query spec, its traces): the same turns, checks and traces."""
    rng = random.Random(1)
    chats, chat_traces, singles, single_traces = [], [], [], []
    for c in range(conversations):
        messages = [f"Conversation {c}, message {t}: where is my order?" for t in range(turns)]
        replies = [make_turn(rng, message, tools) for message in messages]
        chats.append({"id": f"c{c}", "turns": [{"user": m, **TURN_CHECKS} for m in messages], **WHOLE_CHECKS})
        chat_traces.append(Trace.model_validate({"id": f"c{c}", "turns": replies}).with_derived_totals())
        for t, reply in enumerate(replies):
            singles.append({"id": f"c{c}-t{t}", "query": messages[t], **TURN_CHECKS})
            single_traces.append(Trace.model_validate({**reply, "id": f"c{c}-t{t}"}).with_derived_totals())
    chat_spec = AgentCISpec.model_validate({"agent": "bench", "queries": chats})
    single_spec = AgentCISpec.model_validate({"agent": "bench", "queries": singles})
    return chat_spec, chat_traces, single_spec, single_traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--tools", type=int, default=10, help="tool calls per turn")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    chat_spec, chat_traces, single_spec, single_traces = suites(args.conversations, args.turns, args.tools)
    best = {"conversations": float("inf"), "single queries": float("inf")}
    for _ in range(args.repeats):  # interleaved: the machine's other work adds time to whichever step it overlaps
        for name, spec, traces in (
            ("conversations", chat_spec, chat_traces),
            ("single queries", single_spec, single_traces),
        ):
            began = time.process_time()
            run = evaluate_spec(spec, traces)
            best[name] = min(best[name], time.process_time() - began)
            assert run.summary.total == len(spec.queries)
    turns = args.conversations * args.turns
    print(f"{args.conversations} conversations × {args.turns} turns ({args.tools} tool calls a turn) = {turns} turns")
    for name, seconds in best.items():
        print(f"  {name:<15} {seconds:7.3f} s   {seconds / turns * 1e6:7.1f} µs per turn")
    ratio = best["conversations"] / best["single queries"]
    bound = (args.turns + 1) / args.turns
    print(f"  conversations / single queries = {ratio:.2f} (bound: (N + 1) / N = {bound:.2f})")


if __name__ == "__main__":
    main()

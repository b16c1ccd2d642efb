"""A support chat agent that refunds orders, a scripted policy (no model, no key) driven turn by turn by AgentCI.

    python agent.py < turn.json                           # current, and the release in baselines/v1: asks for
                                                          # the order number first
    AGENT_VERSION=v2-broken python agent.py < turn.json   # a broken change: refunds the latest order at once

Each turn arrives as AgentCI's JSON on stdin: the user's `query`, and the conversation so far in `history` (the
agent keeps no state of its own). The policy reads the order number (A-1234) from the conversation; it looks the
order up and refunds it only once it has one, and otherwise asks for it. The broken version "helpfully" refunds
the latest order on the first request, the bug the spec's first turn catches. Token counts and latencies are
modelled (../scripted_model.py).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripted_model import Episode, tool

MODEL = "gpt-4o-mini"
SYSTEM = "You are a support agent. Refund an order only once the customer has given its order number."
ORDERS = {"A-1234": {"item": "wireless headphones", "paid": 59.0}, "A-0999": {"item": "phone case", "paid": 12.0}}
LATEST = "A-0999"
ORDER_NUMBER = re.compile(r"\bA-\d{4}\b")


@tool(latency_ms=40)
def lookup_order(order_id: str) -> dict:
    return {"order_id": order_id, **ORDERS.get(order_id, {"error": "no such order"})}


@tool(latency_ms=120)
def issue_refund(order_id: str) -> dict:
    return {"order_id": order_id, "refunded": ORDERS.get(order_id, {}).get("paid", 0.0)}


def reply(query: str, history: list[dict], asks_first: bool) -> dict:
    """The trace of one turn: the conversation so far and the new message in, the answer out."""
    episode = Episode(MODEL, SYSTEM, query)
    episode.conversation[1:1] = [message["content"] for message in history]
    said = " ".join([*(m["content"] for m in history if m["role"] == "user"), query])
    found = ORDER_NUMBER.findall(said)
    if not found and asks_first:
        return episode.answer("I can help with a refund. What is your order number? It looks like A-1234.")
    order_id = found[-1] if found else LATEST
    refunded = any("refunded" in m["content"] for m in history if m["role"] == "assistant")
    if refunded:
        return episode.answer(f"Order {order_id} is already refunded; the money reaches you in 3-5 days.")
    order = episode.call(lookup_order, order_id=order_id)
    done = episode.call(issue_refund, order_id=order_id)
    return episode.answer(f"Order {order_id} ({order['item']}) is refunded: ${done['refunded']:.2f}, in 3-5 days.")


def main() -> None:
    job = json.load(sys.stdin)
    asks_first = os.environ.get("AGENT_VERSION") != "v2-broken"
    print(json.dumps(reply(job["query"], job.get("history", []), asks_first), ensure_ascii=False))


if __name__ == "__main__":
    main()

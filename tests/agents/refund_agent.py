"""A support agent as a newcomer writes one.

The real `openai` SDK, two tools (`lookup_order`, `refund`), its system prompt in prompt.txt beside it, and
OpenTelemetry's openai-v2 instrumentation exporting over OTLP/HTTP, configured only by the standard OTEL_* variables
(AgentCI's `capture: otel` sets them). It knows nothing of AgentCI.

    python refund_agent.py < {"query": "Order 1042 arrived broken. Please refund it."}

The question is the `query` of the JSON object on stdin (what `agentci run` gives); the answer is printed as text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

ORDERS = {"1042": {"item": "desk lamp", "paid": 35.0, "status": "delivered"}}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    }
    for name, description in (
        ("lookup_order", "The order: its item, what was paid, its status."),
        ("refund", "Refund an order in full."),
    )
]


def lookup_order(order_id: str) -> dict:
    return ORDERS.get(order_id, {"error": "no such order"})


def refund(order_id: str) -> dict:
    return {"refunded": ORDERS.get(order_id, {}).get("paid", 0.0), "order_id": order_id}


def answer(question: str) -> str:
    client = OpenAI(max_retries=0)
    prompt = (Path(__file__).parent / "prompt.txt").read_text(encoding="utf-8").strip()
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": question}]
    for _ in range(6):
        message = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS).choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = {"lookup_order": lookup_order, "refund": refund}[call.function.name](
                **json.loads(call.function.arguments)
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    return "Sorry, I could not finish that."


def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "refund-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    OpenAIInstrumentor().instrument()
    print(answer(json.loads(sys.stdin.read())["query"]))
    provider.shutdown()


if __name__ == "__main__":
    main()

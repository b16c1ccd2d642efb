"""An order-status agent that knows nothing of AgentCI.

It exports OpenTelemetry GenAI spans over OTLP/HTTP, configured only by the standard OTEL_* variables (AgentCI's capture
sets them).

    python agent.py "Where is my order 1234?"

The question is the first argument, else the `query` of the JSON object on stdin (what `agentci run` gives).
Offline and deterministic: a scripted policy stands in for the model, and the spans are those an instrumented
model client and tool layer write (`invoke_agent`, `chat`, `execute_tool`, with usage and messages). Needs
`opentelemetry-sdk` and `opentelemetry-exporter-otlp-proto-http`.
"""

from __future__ import annotations

import json
import re
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

ORDERS = {"1234": "shipped on Monday, arriving Thursday", "5678": "being packed"}


def messages(text: str = "", calls: list[dict] | None = None) -> str:
    parts = [{"type": "text", "content": text}] if text else []
    parts += [{"type": "tool_call", **call} for call in calls or []]
    return json.dumps([{"role": "assistant", "parts": parts}])


def main() -> None:
    question = sys.argv[1] if len(sys.argv) > 1 else json.loads(sys.stdin.read())["query"]
    provider = TracerProvider(resource=Resource.create({"service.name": "order-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("order-agent")
    order = next(iter(re.findall(r"\d{4}", question)), None)
    with tracer.start_as_current_span(
        "invoke_agent orders", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "orders"}
    ):
        calls = [{"id": "call_1", "name": "lookup_order", "arguments": {"order_id": order}}] if order else []
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": 120,
                    "gen_ai.usage.output_tokens": 18,
                    "gen_ai.input.messages": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": question}]}]
                    ),
                    "gen_ai.output.messages": messages(calls=calls) if order else messages("Which order number?"),
                }
            )
        if order:
            status = ORDERS.get(order, "not found")
            with tracer.start_as_current_span(
                "execute_tool lookup_order",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup_order",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.arguments": json.dumps({"order_id": order}),
                    "gen_ai.tool.call.result": json.dumps({"status": status}),
                },
            ):
                pass
            answer = f"Order {order} is {status}."
            with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
                chat.set_attributes(
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-4o-mini",
                        "gen_ai.usage.input_tokens": 160,
                        "gen_ai.usage.output_tokens": 14,
                        "gen_ai.output.messages": messages(answer),
                    }
                )
    provider.shutdown()  # flush: the spans leave before the process does
    print(answer if order else "Which order number?")


if __name__ == "__main__":
    main()

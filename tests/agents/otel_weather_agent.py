"""A real tool-calling agent, instrumented with OpenTelemetry as its owners would, and nothing else for AgentCI.

    python otel_weather_agent.py openai-v2|openinference|agents-sdk

The question is $AGENTCI_QUERY, else the `query` of the JSON object on stdin (what `agentci run` gives).

It talks to the model at $OPENAI_BASE_URL with the `openai` SDK (or the OpenAI Agents SDK) and exports its
spans with the OTLP/HTTP protobuf exporter configured only by the standard OTEL_* variables. It prints the
answer as plain text, not a trace: with `capture: otel` AgentCI reads the trace from the spans alone.
"""

from __future__ import annotations

import json
import os
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from tool_loop import tool_loop


def get_weather(city: str) -> dict:
    return {"city": city, "celsius": 21}


def to_fahrenheit(celsius: float) -> float:
    return round(celsius * 9 / 5 + 32, 1)


TOOLS = {"get_weather": get_weather, "to_fahrenheit": to_fahrenheit}
SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "to_fahrenheit",
            "description": "Convert Celsius to Fahrenheit",
            "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
        },
    },
]


def tracer_provider() -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def chat_loop(question: str) -> str:
    """The plain `openai` SDK tool loop: call the model, run the tools it asks for, until it answers."""
    from openai import OpenAI

    client = OpenAI()
    messages = [{"role": "system", "content": "You answer weather questions."}, {"role": "user", "content": question}]
    return tool_loop(
        lambda history: client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=SCHEMAS),
        messages,
        TOOLS,
    )


def agents_sdk(question: str) -> str:
    """The OpenAI Agents SDK over Chat Completions, traced by OpenInference's Agents SDK processor."""
    from agents import Agent, Runner, function_tool, set_default_openai_api
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument()
    set_default_openai_api("chat_completions")
    agent = Agent(
        name="weather",
        instructions="You answer weather questions.",
        model="gpt-4o-mini",
        tools=[function_tool(get_weather), function_tool(to_fahrenheit)],
    )
    return Runner.run_sync(agent, question).final_output


def main() -> None:
    instrumentation = sys.argv[1]
    question = os.environ.get("AGENTCI_QUERY") or json.loads(sys.stdin.read())["query"]
    tracer_provider()
    if instrumentation == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument()
        print(chat_loop(question))
    elif instrumentation == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument()
        print(chat_loop(question))
    else:
        print(agents_sdk(question))


if __name__ == "__main__":
    main()

"""A real tool-calling agent traced with Langfuse as its owners would.

`langfuse.openai` for the model calls, `@observe(as_type="agent" | "tool")` for the agent and its tools,
`propagate_attributes(metadata=…)` for the query id.

    python langfuse_weather_agent.py OUT.jsonl QUERY_ID=QUESTION ...

Talks to the model at $OPENAI_BASE_URL. The Langfuse client's span exporter is the OpenTelemetry SDK's
ConsoleSpanExporter writing one span a line (`span.to_json()`) to OUT.jsonl, as docs/traces.md shows: the spans
exactly as the SDK would send them to a Langfuse server.
"""

from __future__ import annotations

import sys

from langfuse import Langfuse, observe, propagate_attributes
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from tool_loop import FAILING_SCHEMAS, FAILING_TOOLS, tool_loop

get_weather = observe(as_type="tool")(FAILING_TOOLS["get_weather"])
get_forecast = observe(as_type="tool")(FAILING_TOOLS["get_forecast"])


def main() -> None:
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        run(out)


def run(out) -> None:
    exporter = ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    # No Langfuse server here: a closed local port, so nothing the client might send leaves the machine.
    langfuse = Langfuse(
        public_key="pk-lf-local", secret_key="sk-lf-local", base_url="http://127.0.0.1:9", span_exporter=exporter
    )
    from langfuse.openai import OpenAI  # the drop-in client that records each call as a generation

    client = OpenAI()
    tools = {"get_weather": get_weather, "get_forecast": get_forecast}

    @observe(as_type="agent")
    def weather_agent(question: str) -> str:
        return tool_loop(
            lambda history: client.chat.completions.create(
                model="gpt-4o-mini", messages=history, tools=FAILING_SCHEMAS
            ),
            [{"role": "user", "content": question}],
            tools,
        )

    for query_id, question in (arg.split("=", 1) for arg in sys.argv[2:]):
        with propagate_attributes(metadata={"agentci.query_id": query_id}):
            weather_agent(question)
    langfuse.flush()


if __name__ == "__main__":
    main()

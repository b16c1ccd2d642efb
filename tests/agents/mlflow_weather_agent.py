"""A real tool-calling agent traced with MLflow as its owners would.

`mlflow.openai.autolog()` for the model calls, `@mlflow.trace` for the agent, its retriever and (with `--traced-tools`)
its tools.

    python mlflow_weather_agent.py OUT.jsonl [--traced-tools] QUERY_ID=QUESTION ...

Talks to the model at $OPENAI_BASE_URL and logs to the tracking server at $MLFLOW_TRACKING_URI. Each run's
trace, read back with `mlflow.get_trace(trace_id)`, is written to OUT.jsonl as `Trace.to_json()` gives it, one
line each: the file a user hands to AgentCI.
"""

from __future__ import annotations

import json
import sys

import mlflow
import openai
from mlflow.entities import Document, SpanType
from tool_loop import FAILING_SCHEMAS, FAILING_TOOLS, tool_loop


def main() -> None:
    out, traced = sys.argv[1], "--traced-tools" in sys.argv
    runs = [arg.split("=", 1) for arg in sys.argv[2:] if "=" in arg]
    mlflow.set_experiment(experiment_id="0")
    mlflow.openai.autolog()
    tools = {name: mlflow.trace(f, span_type=SpanType.TOOL) if traced else f for name, f in FAILING_TOOLS.items()}
    client = openai.OpenAI()

    @mlflow.trace(span_type=SpanType.RETRIEVER)
    def search_notes(question: str) -> list[Document]:
        return [Document(page_content="Paris is mild in spring.", metadata={"doc_uri": "notes/paris.md"})]

    @mlflow.trace(span_type=SpanType.AGENT)
    def weather_agent(question: str, query_id: str) -> str:
        mlflow.update_current_trace(metadata={"agentci.query_id": query_id})
        search_notes(question)
        return tool_loop(
            lambda history: client.chat.completions.create(
                model="gpt-4o-mini", messages=history, tools=FAILING_SCHEMAS
            ),
            [{"role": "user", "content": question}],
            tools,
        )

    trace_ids = []
    for query_id, question in runs:
        weather_agent(question, query_id)
        trace_ids.append(mlflow.get_last_active_trace_id())
    mlflow.flush_trace_async_logging()
    with open(out, "w", encoding="utf-8") as file:
        for trace_id in trace_ids:
            file.write(json.dumps(json.loads(mlflow.get_trace(trace_id).to_json())) + "\n")


if __name__ == "__main__":
    main()

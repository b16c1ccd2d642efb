"""A real OpenAI Agents SDK conversation kept in the SDK's own session, traced as its owners would trace it.

    python agents_sdk_session.py agents-sdk|openinference OUT SESSION_ID QUESTION [QUESTION ...]

Each question is one `Runner.run` of agents_sdk_agent.py's triage agent on one `SQLiteSession` (the session keeps
the conversation, so each run is sent the turns before it), with the session id as the run's `group_id`, the
SDK's grouping of the traces of one conversation; $AGENT_QUERY_IDS (comma-separated, one per question) gives each
run an `agentci.query_id` in its trace metadata. `agents-sdk` writes the SDK's own trace export (docs/traces.md's
JsonLinesExporter) to OUT; `openinference` writes the spans of openinference-instrumentation-openai-agents, each
turn inside `using_session(SESSION_ID)`, as the OpenTelemetry SDK's `span.to_json()`, one a line. The model is the
one at $OPENAI_BASE_URL (a local scripted server in the tests).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from agents import RunConfig, Runner, SQLiteSession, add_trace_processor
from agents.tracing import TracingProcessor
from agents_sdk_agent import TRIAGE


class JsonLinesExporter(TracingProcessor):
    """docs/traces.md's exporter: each trace and span as the SDK exports it, one a line."""

    def __init__(self, path: str) -> None:
        self.out = open(path, "w")  # noqa: SIM115 (closed by shutdown, as the SDK calls it)

    def on_trace_start(self, t: Any) -> None:
        pass

    def on_span_start(self, s: Any) -> None:
        pass

    def on_trace_end(self, t: Any) -> None:
        self.write(t.export())

    def on_span_end(self, s: Any) -> None:
        record = s.export()
        if record and getattr(s.span_data, "response", None) is not None:
            record["span_data"]["response"] = s.span_data.response.model_dump(
                mode="json", include={"model", "created_at", "output", "usage", "instructions", "tools"}
            )
            record["span_data"]["input"] = s.span_data.input  # the input items the call sent
        self.write(record)

    def write(self, record: dict[str, Any] | None) -> None:
        if record:
            self.out.write(json.dumps(record, default=str) + "\n")
            self.out.flush()

    def shutdown(self) -> None:
        self.out.close()

    def force_flush(self) -> None:
        self.out.flush()


def main() -> None:
    tracing, out, session_id, *questions = sys.argv[1:]
    provider = None
    if tracing == "agents-sdk":
        add_trace_processor(JsonLinesExporter(out))
    else:
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    with tempfile.TemporaryDirectory() as folder:
        session = SQLiteSession(session_id, str(Path(folder) / "conversation.db"))
        query_ids = os.environ.get("AGENT_QUERY_IDS", "").split(",")  # each run's agentci.query_id, when given
        for question, query_id in zip(questions, query_ids + [""] * len(questions)):
            config = RunConfig(group_id=session_id, trace_metadata={"agentci.query_id": query_id} if query_id else None)
            with using_session(session_id) if provider else nullcontext():
                result = Runner.run_sync(TRIAGE, question, session=session, run_config=config)
            print(result.final_output)
    if provider is not None:
        provider.shutdown()
        Path(out).write_text("".join(json.dumps(json.loads(s.to_json())) + "\n" for s in exporter.get_finished_spans()))


if __name__ == "__main__":
    main()

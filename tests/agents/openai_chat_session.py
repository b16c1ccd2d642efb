"""A chat agent on the plain `openai` SDK that keeps its conversation in memory, one turn per question.

Instrumented by OpenInference's OpenAIInstrumentor alone (each model call a trace of its own), each turn inside
`using_session(SESSION_ID)` as OpenInference's docs show for a chatbot's session.

    python openai_chat_session.py OUT SESSION_ID QUESTION [QUESTION ...]

Writes the spans as the OpenTelemetry SDK's `span.to_json()`, one a line, to OUT. The model is the one at
$OPENAI_BASE_URL (a local scripted server in the tests); the tools are otel_weather_agent.py's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from openai import OpenAI
from openinference.instrumentation import using_session
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otel_weather_agent import SCHEMAS, TOOLS
from tool_loop import tool_loop


def main() -> None:
    out, session_id, *questions = sys.argv[1:]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = OpenAI()
    messages = [{"role": "system", "content": "You answer weather questions."}]
    for question in questions:
        messages.append({"role": "user", "content": question})
        with using_session(session_id):
            answer = tool_loop(
                lambda history: client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=SCHEMAS),
                messages,
                TOOLS,
            )
        messages.append({"role": "assistant", "content": answer})
        print(answer)
    provider.shutdown()
    Path(out).write_text("".join(json.dumps(json.loads(s.to_json())) + "\n" for s in exporter.get_finished_spans()))


if __name__ == "__main__":
    main()

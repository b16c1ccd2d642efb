"""Real framework agents, instrumented to write their OpenTelemetry spans as JSON Lines.

Pointed at a local scripted model (fakes/scripted_openai.py).
"""

from __future__ import annotations

from typing import IO, Any


def pydantic_ai_weather_agent(openai_url: str, out: IO[str]) -> tuple[Any, Any]:
    """(agent, tracer provider).

    Pydantic AI's `weather_agent` on gpt-4o-mini at `openai_url`, its Instrumentation capability writing every span to
    `out` as one JSON line, with the tool get_weather (any city: 21 °C). Shut the provider down when the runs are over.
    """
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider()
    exporter = ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=openai_url, api_key="sk-test"))
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = Agent(model, name="weather_agent", capabilities=[instrumentation])
    agent.tool_plain(lambda city: {"city": city, "celsius": 21}, name="get_weather")
    return agent, provider

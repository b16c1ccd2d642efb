"""A real OpenAI Agents SDK agent for a `python:` runner.

A triage agent hands off to a weather agent with two tools, over Chat Completions (or the Responses API:
AGENT_OPENAI_API=responses) at $OPENAI_BASE_URL (a local scripted server in the tests). `answer` returns the SDK's own
`RunResult`, which AgentCI reads through the SDK's tracing; `answer_in_session` answers a conversation's turn with the
SDK's own session keeping the conversation, `answer_with_history` with the history AgentCI resends.

The SDK's default trace processor would upload traces to OpenAI: it is replaced by none at import, as a user with
their own exporter would; AgentCI adds its collector when it calls the function.
"""

from __future__ import annotations

import os

from agents import Agent, Runner, SQLiteSession, function_tool, set_default_openai_api, set_trace_processors

set_default_openai_api(os.environ.get("AGENT_OPENAI_API", "chat_completions"))  # or "responses", the SDK's default
set_trace_processors([])


@function_tool
def get_weather(city: str) -> dict:
    """Current weather of a city."""
    return {"city": city, "celsius": 21}


@function_tool
def to_fahrenheit(celsius: float) -> float:
    """Convert Celsius to Fahrenheit."""
    return round(celsius * 9 / 5 + 32, 1)


WEATHER = Agent(
    name="weather",
    instructions="You answer weather questions.",
    model="gpt-4o-mini",
    tools=[get_weather, to_fahrenheit],
)
TRIAGE = Agent(
    name="triage", instructions="Hand weather questions to the weather agent.", model="gpt-4o-mini", handoffs=[WEATHER]
)


def answer(query: str):
    return Runner.run_sync(TRIAGE, query)


async def answer_async(query: str):
    return await Runner.run(TRIAGE, query)


def answer_with_history(query: str, history: list[dict[str, str]]):
    """A conversation's turn with no state of its own.

    The conversation so far (AgentCI resends it every turn) is the run's input before the user's message, as the SDK
    takes a list of input items.
    """
    return Runner.run_sync(TRIAGE, [*history, {"role": "user", "content": query}])


def answer_in_session(query: str, session_id: str):
    """A conversation's turn.

    The SDK keeps the conversation in its SQLite session (a file under $AGENT_SESSIONS_DB, shared by the runner's worker
    processes), named by AgentCI's session id.
    """
    return Runner.run_sync(TRIAGE, query, session=SQLiteSession(session_id, os.environ["AGENT_SESSIONS_DB"]))

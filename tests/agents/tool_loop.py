"""What the weather agents share.

The tool-calling loop of an OpenAI-style client, and the tools whose second one fails (the readers' tests check that a
failed tool call carries its error).

The agents run as scripts from this folder, so they import this module by its name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def get_weather(city: str) -> dict:
    return {"city": city, "celsius": 21}


def get_forecast(city: str, days: int) -> list:
    raise RuntimeError("forecast service unavailable")


FAILING_TOOLS = {"get_weather": get_weather, "get_forecast": get_forecast}
FAILING_SCHEMAS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in FAILING_TOOLS
]


def tool_loop(complete: Callable[[list], Any], messages: list, tools: dict[str, Callable]) -> str:
    """Call the model (`complete(messages)` → a chat completion), run the tools it asks for, until it answers.

    A tool that raises RuntimeError answers `{"error": message}`, as agents report a failed tool to the model.
    """
    while True:
        message = complete(messages).choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            try:
                result = tools[call.function.name](**json.loads(call.function.arguments))
            except RuntimeError as exc:
                result = {"error": str(exc)}
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})

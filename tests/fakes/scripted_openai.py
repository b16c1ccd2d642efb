"""A local OpenAI Chat Completions server that plays a tool-calling agent's model from a script, on 127.0.0.1.

The script maps each user question to the model's turns: a turn either calls tools (names and arguments)
or answers in text, and says how many prompt and completion tokens it reports. Which turn to play is the
number of assistant messages already in the request, so any number of agents can talk to it at once and
each conversation advances on its own. The script is the ground truth a captured trace is compared with.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from .llm_server import FakeLLMServer


@dataclass(frozen=True)
class Turn:
    tool_calls: list[tuple[str, dict]] = field(default_factory=list)  # (tool name, arguments)
    content: str | None = None
    prompt_tokens: int = 10  # cached ones included, as OpenAI counts them
    completion_tokens: int = 5
    cached_tokens: int = 0  # reported as usage.prompt_tokens_details.cached_tokens when not 0


def scripted_turns(question: str, city: str, answer: str) -> list[Turn]:
    """A two-tool conversation for `question`: look up the weather, then convert the unit, then answer."""
    return [
        Turn(tool_calls=[("get_weather", {"city": city})], prompt_tokens=40 + len(city), completion_tokens=12),
        Turn(tool_calls=[("to_fahrenheit", {"celsius": 21})], prompt_tokens=60 + len(city), completion_tokens=9),
        Turn(content=answer, prompt_tokens=80 + len(city), completion_tokens=len(answer.split())),
    ]


def _text(content) -> str:
    """A message's text: a string, or the text parts of a list (Responses `input_text`)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class ScriptedOpenAIServer(FakeLLMServer):
    """`openai_url` is the SDK's base_url.

    `script` maps the first user message to its turns, played over Chat Completions (`/v1/chat/completions`) or the
    Responses API (`/v1/responses`).

    `per_message`: for conversations, the script maps each user message to its turns instead, the turn to play being
    the number of assistant messages since the last user message (the conversation before it is context only);
    every request body is kept in `bodies`.
    """

    def __init__(self, script: dict[str, list[Turn]], model: str = "gpt-4o-mini-2024-07-18", per_message: bool = False):
        self.script = script
        self.model = model
        self.per_message = per_message
        self.bodies: list[dict] = []
        super().__init__()

    def _handler_class(self):
        server = self
        base = super()._handler_class()

        class Handler(base):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw or b"{}")
                if self.path not in ("/v1/chat/completions", "/v1/responses"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                chat = self.path == "/v1/chat/completions"
                messages = body.get("messages") if chat else body.get("input")
                if isinstance(messages, str):
                    messages = [{"role": "user", "content": messages}]
                messages = messages or []
                if server.per_message:  # the exchange since the last user message
                    server.bodies.append(body)
                    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
                    messages = messages[last:]
                question = next((_text(m["content"]) for m in messages if m.get("role") == "user"), "")
                turns = server.script.get(question)
                if turns is None:
                    return self._send(400, {"error": {"message": f"no script for {question!r}"}})
                # turns so far: assistant messages (Chat Completions); function calls and assistant messages (Responses)
                index = sum(m.get("role") == "assistant" or m.get("type") == "function_call" for m in messages or [])
                turn = turns[min(index, len(turns) - 1)]
                serial = len(server.bodies) if server.per_message else index  # ids unique across the conversation
                if chat:
                    return self._send(200, server.reply(turn, serial, body.get("model")))
                echoed = {key: body.get(key) for key in ("instructions", "previous_response_id")}  # as the API does
                self._send(
                    200,
                    {**server.response(turn, serial, body.get("model")), **echoed, "tools": body.get("tools") or []},
                )

        return Handler

    def reply(self, turn: Turn, index: int, requested: str | None) -> dict:
        calls = [
            {
                "id": f"call_{index}_{position}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for position, (name, arguments) in enumerate(turn.tool_calls)
        ]
        message = {"role": "assistant", "content": turn.content, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-scripted-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop", "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": turn.prompt_tokens,
                "completion_tokens": turn.completion_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                **({"prompt_tokens_details": {"cached_tokens": turn.cached_tokens}} if turn.cached_tokens else {}),
            },
        }

    def response(self, turn: Turn, index: int, requested: str | None) -> dict:
        """The turn as a Responses API Response: function_call items, or one assistant message."""
        output: list[dict] = [
            {
                "type": "function_call",
                "id": f"fc_{index}_{position}",
                "call_id": f"call_{index}_{position}",
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
            for position, (name, arguments) in enumerate(turn.tool_calls)
        ]
        if turn.content is not None:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{index}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": turn.content, "annotations": []}],
                }
            )
        return {
            "id": f"resp_scripted_{index}",
            "object": "response",
            "created_at": int(time.time()),
            "model": self.model,
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": turn.prompt_tokens,
                "input_tokens_details": {"cached_tokens": turn.cached_tokens},
                "output_tokens": turn.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": turn.prompt_tokens + turn.completion_tokens,
            },
        }


PARIS_QUESTION = "What's the weather in Paris?"
PARIS_ANSWER = "It is 21°C in Paris; the forecast is unavailable."
# Two tools issued together (tests/agents/tool_loop.py: the second fails), then the answer; 64 cached tokens each.
FAILING_TOOL_SCRIPT = {
    PARIS_QUESTION: [
        Turn(
            tool_calls=[("get_weather", {"city": "Paris"}), ("get_forecast", {"city": "Paris", "days": 2})],
            prompt_tokens=120,
            completion_tokens=40,
            cached_tokens=64,
        ),
        Turn(content=PARIS_ANSWER, prompt_tokens=200, completion_tokens=12, cached_tokens=64),
    ]
}

"""A local Gemini API (`generateContent`) on 127.0.0.1 that plays a script of turns.

The turns are tests/fakes/scripted_openai.Turn; for agents built on `google-genai` (Google ADK): point them at it with
$GOOGLE_GEMINI_BASE_URL.

The turn to play is the number of model turns already in the request's `contents`, as the OpenAI script does.
Usage reports `promptTokenCount` (cached ones included, as Gemini counts them), `candidatesTokenCount` and
`cachedContentTokenCount`.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

from .llm_server import JSONHandler, LocalServer
from .scripted_openai import Turn


class ScriptedGeminiServer(LocalServer):
    """`base` is the base URL; `turns` the one conversation it plays; `model_version` what it says answered."""

    def __init__(self, turns: list[Turn], model_version: str = "gemini-2.0-flash-001"):
        self.turns = turns
        self.model_version = model_version
        super().__init__()

    def reply(self, index: int) -> dict:
        turn = self.turns[min(index, len(self.turns) - 1)]
        parts = [{"functionCall": {"name": name, "args": args}} for name, args in turn.tool_calls]
        if turn.content:
            parts.append({"text": turn.content})
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": turn.prompt_tokens,
                "candidatesTokenCount": turn.completion_tokens,
                "totalTokenCount": turn.prompt_tokens + turn.completion_tokens,
                "cachedContentTokenCount": turn.cached_tokens,
            },
            "modelVersion": self.model_version,
            "responseId": f"scripted-{index}",
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                if not self.path.endswith(":generateContent"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                index = sum(content.get("role") == "model" for content in body.get("contents") or [])
                self._send(200, server.reply(index))

        return Handler

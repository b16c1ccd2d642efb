"""A scripted model behind the OpenAI and Anthropic Messages wire formats, plain or streamed, on 127.0.0.1.

OpenAI: Chat Completions, Responses, Embeddings. Streamed as the providers stream them (SSE frames, `[DONE]` after Chat
Completions chunks), optionally gzip-compressed.

The script is ScriptedOpenAIServer's (`Turn`s per first user question; the turn played is the number of the
model's turns already in the conversation), so a real tool-calling agent on any of the three APIs runs against
it. Everything it answers is a function of the request (fixed ids and `created`), so recording it twice records
the same bytes. `delay` makes every answer that much slower (the slow provider the replay benchmark stands in).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
import zlib
from typing import Any

from .llm_server import JSONHandler, Received
from .scripted_openai import ScriptedOpenAIServer, Turn, _text

CREATED = 1767225600
PIECES = 3  # text and tool arguments are streamed in this many deltas


def pieces(text: str, count: int = PIECES) -> list[str]:
    """`text` cut into `count` consecutive pieces (some may be empty when it is short)."""
    size = -(-len(text) // count) if text else 0
    return [text[i * size : (i + 1) * size] for i in range(count)] if size else [""]


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


class ScriptedProviders(ScriptedOpenAIServer):
    """`openai_url` and `anthropic_url` are the SDKs' base URLs; `received` keeps every request."""

    def __init__(self, script: dict[str, list[Turn]], model: str = "gpt-4o-mini-2024-07-18", **options: Any):
        self.anthropic_model = options.pop("anthropic_model", "claude-haiku-4-5-20251001")
        self.gzip = options.pop("gzip", False)
        delay = options.pop("delay", 0.0)
        super().__init__(script, model)
        self.delay = delay  # after FakeLLMServer's __init__, which sets its own

    def _handler_class(self) -> type[JSONHandler]:
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    raw = gzip.decompress(raw)
                body = json.loads(raw or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.received.append(Received(self.path, headers, body, time.monotonic()))
                if server.delay:
                    time.sleep(server.delay)
                path = self.path.split("?")[0]
                if path == "/v1/embeddings":
                    return self._json(server.embeddings(body))
                if path not in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                turn, index = server.turn(path, body)
                if turn is None:
                    return self._send(400, {"error": {"message": "no script for this question"}})
                if body.get("stream"):
                    return self._stream(server.frames(path, turn, index, body))
                answer = {
                    "/v1/chat/completions": server.reply,
                    "/v1/responses": server.response,
                    "/v1/messages": server.message,
                }[path](turn, index, body.get("model"))
                self._json(answer)

            def _json(self, answer: dict) -> None:
                data = json.dumps(answer).encode()
                compress = server.gzip and "gzip" in (self.headers.get("accept-encoding") or "")
                data = gzip.compress(data, mtime=0) if compress else data
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{time.monotonic_ns()}")  # differs every time: never recorded
                self.send_header("set-cookie", "__cf_bm=secret-cookie; path=/")
                if compress:
                    self.send_header("content-encoding", "gzip")
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, frames: list[bytes]) -> None:
                compress = server.gzip and "gzip" in (self.headers.get("accept-encoding") or "")
                encoder = zlib.compressobj(wbits=16 + zlib.MAX_WBITS) if compress else None
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("transfer-encoding", "chunked")
                if compress:
                    self.send_header("content-encoding", "gzip")
                self.end_headers()
                for frame in frames:
                    data = encoder.compress(frame) + encoder.flush(zlib.Z_SYNC_FLUSH) if encoder else frame
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                if encoder:
                    tail = encoder.flush()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(tail), tail))
                self.wfile.write(b"0\r\n\r\n")

        return Handler

    @property
    def anthropic_url(self) -> str:
        return self.base

    # -- which turn ------------------------------------------------------------------------------------------------
    def turn(self, path: str, body: dict) -> tuple[Turn | None, int]:
        messages = body.get("input") if path == "/v1/responses" else body.get("messages")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        messages = messages or []
        question = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        turns = self.script.get(question)
        if turns is None:
            return None, 0
        index = sum(m.get("role") == "assistant" or m.get("type") == "function_call" for m in messages)
        if path == "/v1/responses":  # several function calls of one turn are several items
            index = _responses_turns(messages)
        return turns[min(index, len(turns) - 1)], index

    # -- plain answers (Chat Completions and Responses come from ScriptedOpenAIServer) ----------------------------
    def reply(self, turn: Turn, index: int, requested: str | None) -> dict:
        return {**super().reply(turn, index, requested), "created": CREATED}

    def response(self, turn: Turn, index: int, requested: str | None) -> dict:
        return {**super().response(turn, index, requested), "created_at": CREATED}

    def message(self, turn: Turn, index: int, requested: str | None) -> dict:
        content: list[dict] = [{"type": "text", "text": turn.content}] if turn.content is not None else []
        content += [
            {"type": "tool_use", "id": f"toolu_{index}_{p}", "name": name, "input": arguments}
            for p, (name, arguments) in enumerate(turn.tool_calls)
        ]
        return {
            "id": f"msg_scripted_{index}",
            "type": "message",
            "role": "assistant",
            "model": self.anthropic_model,
            "content": content,
            "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": turn.prompt_tokens - turn.cached_tokens,
                "output_tokens": turn.completion_tokens,
                "cache_read_input_tokens": turn.cached_tokens,
                "cache_creation_input_tokens": 0,
            },
        }

    def embeddings(self, body: dict) -> dict:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [b / 255 for b in hashlib.sha256(str(t).encode()).digest()[:4]],
            }
            for i, t in enumerate(inputs)
        ]
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 8, "total_tokens": 8},
        }

    # -- streamed answers -------------------------------------------------------------------------------------------
    def frames(self, path: str, turn: Turn, index: int, body: dict) -> list[bytes]:
        if path == "/v1/chat/completions":
            return self.chat_frames(turn, index, body)
        if path == "/v1/responses":
            return self.response_frames(turn, index)
        return self.message_frames(turn, index)

    def chat_frames(self, turn: Turn, index: int, body: dict) -> list[bytes]:
        plain = self.reply(turn, index, body.get("model"))
        base = {"id": plain["id"], "object": "chat.completion.chunk", "created": CREATED, "model": self.model}

        def chunk(delta: dict, finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return sse(None, {**base, "choices": [choice]})

        frames = [chunk({"role": "assistant", "content": "" if turn.content is not None else None})]
        frames += [chunk({"content": piece}) for piece in pieces(turn.content or "") if turn.content]
        for position, call in enumerate(plain["choices"][0]["message"].get("tool_calls", [])):
            start = {
                "index": position,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            frames.append(chunk({"tool_calls": [start]}))
            for piece in pieces(call["function"]["arguments"]):
                frames.append(chunk({"tool_calls": [{"index": position, "function": {"arguments": piece}}]}))
        frames.append(chunk({}, plain["choices"][0]["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            frames.append(sse(None, {**base, "choices": [], "usage": plain["usage"]}))
        return [*frames, sse(None, "[DONE]")]

    def response_frames(self, turn: Turn, index: int) -> list[bytes]:
        final = self.response(turn, index, None)
        events: list[dict] = []

        def event(kind: str, **fields: Any) -> None:
            events.append({"type": kind, "sequence_number": len(events), **fields})

        started = {**final, "status": "in_progress", "output": [], "usage": None}
        event("response.created", response=started)
        event("response.in_progress", response=started)
        for position, item in enumerate(final["output"]):
            if item["type"] == "function_call":
                event(
                    "response.output_item.added",
                    output_index=position,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
                for piece in pieces(item["arguments"]):
                    event(
                        "response.function_call_arguments.delta", item_id=item["id"], output_index=position, delta=piece
                    )
                event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=position,
                    arguments=item["arguments"],
                )
            else:
                text = item["content"][0]["text"]
                added = {**item, "content": [], "status": "in_progress"}
                event("response.output_item.added", output_index=position, item=added)
                at = {"item_id": item["id"], "output_index": position, "content_index": 0}
                part = {"type": "output_text", "text": "", "annotations": []}
                event("response.content_part.added", **at, part=part)
                for piece in pieces(text):
                    event("response.output_text.delta", **at, delta=piece, logprobs=[])
                event("response.output_text.done", **at, text=text, logprobs=[])
                event("response.content_part.done", **at, part={**part, "text": text})
            event("response.output_item.done", output_index=position, item=item)
        event("response.completed", response=final)
        return [sse(e["type"], e) for e in events]

    def message_frames(self, turn: Turn, index: int) -> list[bytes]:
        final = self.message(turn, index, None)
        frames = [
            sse(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        **final,
                        "content": [],
                        "stop_reason": None,
                        "usage": {**final["usage"], "output_tokens": 1},
                    },
                },
            ),
            sse("ping", {"type": "ping"}),
        ]
        for position, block in enumerate(final["content"]):
            if block["type"] == "text":
                frames.append(
                    sse(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": position,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"])]
            else:
                start = {**block, "input": {}}
                frames.append(
                    sse(
                        "content_block_start",
                        {"type": "content_block_start", "index": position, "content_block": start},
                    )
                )
                deltas = [
                    {"type": "input_json_delta", "partial_json": piece} for piece in pieces(json.dumps(block["input"]))
                ]
            frames += [
                sse("content_block_delta", {"type": "content_block_delta", "index": position, "delta": d})
                for d in deltas
            ]
            frames.append(sse("content_block_stop", {"type": "content_block_stop", "index": position}))
        delta = {"stop_reason": final["stop_reason"], "stop_sequence": None}
        frames.append(
            sse(
                "message_delta",
                {"type": "message_delta", "delta": delta, "usage": {"output_tokens": final["usage"]["output_tokens"]}},
            )
        )
        frames.append(sse("message_stop", {"type": "message_stop"}))
        return frames


def _responses_turns(items: list[dict]) -> int:
    """The model's turns in a Responses input: each run of function_call items, or an assistant message, is one."""
    turns, previous = 0, None
    for item in items:
        kind = (
            "call"
            if item.get("type") == "function_call"
            else "assistant"
            if item.get("role") == "assistant"
            else "other"
        )
        turns += kind == "assistant" or (kind == "call" and previous != "call")
        previous = kind
    return turns

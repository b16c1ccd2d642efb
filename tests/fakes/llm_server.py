"""A local stand-in for the Anthropic Messages and OpenAI Chat Completions APIs, on 127.0.0.1.

With an `agent_model`, a Chat Completions request without a response format is an agent's turn: the model
function chooses the assistant message (text, or tool calls), so a real tool-calling agent runs against it.
It answers the wire formats the real SDKs speak (POST /v1/messages, POST /v1/chat/completions, and
POST /v1/embeddings with the vectors in `vectors`, [1, 0, 0] for any other text),
insists on structured output as the providers enforce it (a forced tool; a strict json_schema
response format), and fails like the providers when told to: 429 with retry-after, 500, a reply
slower than the client's timeout, or a malformed verdict. Every request is counted and kept.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Verdict = dict[str, Any]
# An agent's model for tool-calling tests: (messages, tools) -> the assistant message (content and/or tool_calls).
AgentModel = Callable[[list[dict], list[dict]], dict]
# (model, system prompt, user prompt) -> verdict; the default passes everything with a 5.
Policy = Callable[[str, str, str], Verdict]


def always(score: int = 5, label: str = "pass", rationale: str = "meets the rubric") -> Policy:
    return lambda model, system, user: {"score": score, "label": label, "rationale": rationale}


@dataclass
class Fault:
    kind: str  # "429" | "500" | "slow" | "malformed" | "echo" (a 400 quoting the request's auth headers back)
    retry_after: float | str | Callable[[], str] | None = None  # seconds, an HTTP date, or one made when answering
    seconds: float = 0.0

    def retry_after_header(self) -> dict[str, str]:
        """The retry-after header to send, if any: a callable is called now, so a date is relative to the answer."""
        if self.retry_after is None:
            return {}
        return {"retry-after": self.retry_after() if callable(self.retry_after) else str(self.retry_after)}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class JSONHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler that answers JSON."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stall

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass


class LocalServer(ABC):
    """An HTTP server on 127.0.0.1 serving in a daemon thread while used as a context manager.

    Subclasses give `_handler_class()` and set what it reads before calling this `__init__`.
    """

    def __init__(self) -> None:
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._http.daemon_threads = True
        # shutdown() is seen within 0.02 s, not the standard library's 0.5 s: half a second at every test's end
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.02,), daemon=True)

    @abstractmethod
    def _handler_class(self) -> type[BaseHTTPRequestHandler]: ...

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    @property
    def base(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"


class FakeLLMServer(LocalServer):
    """Use as a context manager; `anthropic_url` and `openai_url` are the SDKs' base_url values."""

    def __init__(
        self,
        policy: Policy | None = None,
        delay: float = 0.0,
        vectors: dict[str, list[float]] | None = None,
        agent_model: AgentModel | None = None,
    ):
        self.policy = policy or always()
        self.agent_model = agent_model
        self.delay = delay
        self.vectors = vectors or {}
        self.received: list[Received] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        super().__init__()
        self._http.request_queue_size = 128

    @property
    def anthropic_url(self) -> str:
        return self.base

    @property
    def openai_url(self) -> str:
        return f"{self.base}/v1"

    def fail_next(
        self,
        kind: str,
        times: int = 1,
        retry_after: float | str | Callable[[], str] | None = None,
        seconds: float = 0.0,
    ) -> None:
        """Queue `times` faults; each request takes the next one before answering normally."""
        with self._lock:
            self._faults.extend(Fault(kind, retry_after, seconds) for _ in range(times))

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def reset(self) -> None:
        with self._lock:
            self.received.clear()
            self._faults.clear()

    # -- serving ----------------------------------------------------------------------------
    def _take(self, request: Received) -> Fault | None:
        with self._lock:
            self.received.append(request)
            return self._faults.popleft() if self._faults else None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": {"message": "body is not JSON"}})
                received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                fault = server._take(received)
                if self.path == "/v1/messages":
                    wire = _AnthropicWire
                elif self.path == "/v1/chat/completions":
                    wire = _OpenAIWire
                elif self.path == "/v1/embeddings":
                    wire = _EmbeddingsWire
                else:
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                agent_turn = wire is _OpenAIWire and server.agent_model is not None and "response_format" not in body
                problem = None if agent_turn else wire.invalid(received)
                if problem:
                    return self._send(*problem)
                if server.delay:
                    time.sleep(server.delay)
                if fault and fault.kind == "429":
                    return self._send(429, wire.error("rate_limit_error", "rate limited"), fault.retry_after_header())
                if fault and fault.kind == "500":
                    return self._send(500, wire.error("api_error", "internal server error"))
                if fault and fault.kind == "echo":
                    quoted = {k: v for k, v in received.headers.items() if k in ("authorization", "x-api-key")}
                    return self._send(400, wire.error("invalid_request_error", f"rejected credentials {quoted}"))
                if fault and fault.kind == "slow":
                    time.sleep(fault.seconds)
                if wire is _EmbeddingsWire:
                    return self._send(200, wire.reply(body, server.vectors))
                if agent_turn:
                    return self._send(
                        200, _chat_completion(body, server.agent_model(body["messages"], body.get("tools") or []))
                    )
                system, user = wire.prompts(body)
                verdict = server.policy(body["model"], system, user)
                self._send(
                    200,
                    wire.reply(
                        body, verdict, malformed=bool(fault and fault.kind == "malformed"), system=system, user=user
                    ),
                )

        return Handler


def _chat_completion(body: dict, message: dict) -> dict:
    """A Chat Completions reply carrying `message`, with usage counted from the request and the reply."""
    prompt = _tokens(json.dumps(body["messages"]) + json.dumps(body.get("tools") or []))
    completion = _tokens(json.dumps(message))
    return {
        "id": "chatcmpl-agent",
        "object": "chat.completion",
        "created": 1767225600,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, **message},
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _AnthropicWire:
    @staticmethod
    def invalid(request: Received) -> tuple[int, dict] | None:
        if not (request.headers.get("x-api-key") or request.headers.get("authorization", "").startswith("Bearer ")):
            return 401, _AnthropicWire.error(
                "authentication_error", "an x-api-key or bearer authorization header is required"
            )
        if not request.headers.get("anthropic-version"):
            return 400, _AnthropicWire.error("invalid_request_error", "anthropic-version header is required")
        body = request.body
        tools = body.get("tools") or []
        choice = body.get("tool_choice") or {}
        if choice.get("type") != "tool" or choice.get("name") not in {t.get("name") for t in tools}:
            return 400, _AnthropicWire.error("invalid_request_error", "structured output requires a forced tool_choice")
        if "max_tokens" not in body or not body.get("messages"):
            return 400, _AnthropicWire.error("invalid_request_error", "max_tokens and messages are required")
        return None

    @staticmethod
    def error(kind: str, message: str) -> dict:
        return {"type": "error", "error": {"type": kind, "message": message}}

    @staticmethod
    def prompts(body: dict) -> tuple[str, str]:
        system = body.get("system") or ""
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system)
        content = body["messages"][-1]["content"]
        user = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        return system, user

    @staticmethod
    def reply(body: dict, verdict: Verdict, malformed: bool, system: str, user: str) -> dict:
        tool = body["tool_choice"]["name"]
        content: Any = [
            {
                "type": "tool_use",
                "id": "toolu_fake",
                "name": tool,
                "input": {"score": "five", "verdict": "ok"} if malformed else verdict,
            }
        ]
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": _tokens(system + user), "output_tokens": _tokens(json.dumps(verdict))},
        }


class _OpenAIWire:
    @staticmethod
    def invalid(request: Received) -> tuple[int, dict] | None:
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return 401, _OpenAIWire.error("invalid_request_error", "missing bearer token")
        fmt = request.body.get("response_format") or {}
        if fmt.get("type") != "json_schema" or not (fmt.get("json_schema") or {}).get("strict"):
            return 400, _OpenAIWire.error(
                "invalid_request_error", "structured output requires a strict json_schema response_format"
            )
        return None

    @staticmethod
    def error(kind: str, message: str) -> dict:
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    @staticmethod
    def prompts(body: dict) -> tuple[str, str]:
        system = "".join(m["content"] for m in body["messages"] if m["role"] in ("system", "developer"))
        user = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
        return system, user

    @staticmethod
    def reply(body: dict, verdict: Verdict, malformed: bool, system: str, user: str) -> dict:
        content = "the answer looks fine to me" if malformed else json.dumps(verdict)
        prompt_tokens, completion_tokens = _tokens(system + user), _tokens(content)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


class _EmbeddingsWire(_OpenAIWire):
    @staticmethod
    def invalid(request: Received) -> tuple[int, dict] | None:
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return 401, _OpenAIWire.error("invalid_request_error", "missing bearer token")
        return None

    @staticmethod
    def reply(body: dict, vectors: dict[str, list[float]]) -> dict:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": vectors.get(text, [1.0, 0.0, 0.0])}
            for i, text in enumerate(inputs)
        ]
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
        }

"""The model-call proxy: an HTTP server on 127.0.0.1 that the agent's SDKs use as their provider's base URL.

Each run gets its own route, `http://127.0.0.1:PORT/agentci/<token>/<provider>`, given to the agent as its base
URL (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`); what follows the provider is the path the SDK asks for
(`/chat/completions`, `/responses`, `/embeddings`, `/v1/messages`, or anything else an OpenAI-compatible server
serves). A route is bound to one run's ReplaySession at a time (a `python:` runner's worker keeps its route and
is bound to each run it serves). Per request:

1. the body is read (Content-Length or chunked, gzip or deflate undone) and keyed (request_keys);
2. unless the mode is `record`, the session's next recorded answer for the key is sent: JSON as JSON, a stream
   as its frames with the same framing, with the recorded status and content type;
3. otherwise, under `replay`, the request is a miss: the agent gets an error it does not retry (400, an error
   body in its provider's shape whose message is the miss's explanation, `x-should-retry: false`);
4. else the request goes to the provider (the agent's own headers, keys included, go with it; nothing else
   does) and the answer comes back as it arrives, a stream frame by frame, while it is recorded. Answers the
   SDKs retry (408, 409, 429, 5xx) are passed on but not recorded: the retry is.

Only allow-listed headers are recorded (none of the request's by default; the answer's content type); API keys,
`Authorization`, `x-api-key`, cookies and organisation ids never are, nor URL parameters beyond the allow-list.
The keys a request carries (its key headers, URL parameters named like a secret) are secrets of the call: wherever
they occur in its body or its answer (a model that repeats the key it was shown), the recording holds the
placeholder instead (answer_secrets.py). A replayed answer is sent with its recorded status and content type only.
The server accepts only loopback connections whose Host header names the loopback (a web page cannot reach it
through DNS rebinding).
"""

from __future__ import annotations

import functools
import secrets
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agentci_action.run._loopback import LoopbackServer
from agentci_action.run.replay import sse_frames
from agentci_action.run.replay.answer_secrets import masked_answer
from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest, RecordedResponse, content_of, masked
from agentci_action.run.replay.replay_session import ReplaySession
from agentci_action.run.replay.request_keys import Volatility, canonical_json, keyed_query
from agentci_action.run.replay.upstream import Upstream, UpstreamAnswer, UpstreamError
from agentci_action.run.secrets import SECRET_NAME
from agentci_action.spec.replay_modes import ReplayMode

PREFIX = "agentci"
MAX_BODY = 64 << 20
IDLE_TIMEOUT = 120.0
MAX_HEADERS = 100
POLL_S = 0.05  # how soon `stop` is noticed (the standard 0.5 s would add that much to every run)
RETRIED_STATUSES = frozenset({408, 409, 429})
RECORDED_RESPONSE_HEADERS = frozenset({"content-type"})
# Never forwarded to the provider: they describe the agent's connection to the proxy, or what is undone here.
NOT_FORWARDED = frozenset(
    {"host", "connection", "keep-alive", "content-length", "transfer-encoding", "content-encoding", "accept-encoding"}
)
# Never recorded, even when allow-listed: credentials, cookies, organisation and project ids.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "x-goog-api-key",
        "anthropic-admin-api-key",
    }
)
# Headers whose value is a key (after an authorization scheme such as "Bearer"): a secret of the call.
KEY_HEADERS = SECRET_HEADERS - {"cookie", "set-cookie", "openai-organization", "openai-project"}
LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})


def _stderr(message: str) -> None:
    print(f"agentci replay proxy: {message}", file=sys.stderr, flush=True)


class ReplayProxy(LoopbackServer):
    """Use as a context manager (the port is freed on every way out).

    `upstreams` maps each provider name the agent may use (`openai`, `anthropic`, ...) to the base URL its live calls go
    to.
    """

    def __init__(
        self,
        upstreams: Mapping[str, str],
        *,
        record_headers: Iterable[str] = (),
        port: int = 0,
        log: Callable[[str], None] = _stderr,
    ):
        self.upstreams = {name: Upstream(url) for name, url in upstreams.items()}
        self.record_headers = frozenset(h.lower() for h in record_headers) - SECRET_HEADERS
        self.log = log
        self._routes: dict[str, ReplaySession | None] = {}
        self._lock = threading.Lock()
        super().__init__(port, "agentci-replay", POLL_S)

    def stop(self) -> None:
        """Stop serving, free the port and close the connections to the providers; safe to call twice."""
        super().stop()
        for upstream in self.upstreams.values():
            upstream.close()

    # -- routes -------------------------------------------------------------------------------------------------
    def route(self, session: ReplaySession | None = None) -> str:
        """A new route's token, bound to `session` (or to nothing until `bind`)."""
        token = secrets.token_hex(8)
        with self._lock:
            self._routes[token] = session
        return token

    def bind(self, token: str, session: ReplaySession | None) -> None:
        with self._lock:
            self._routes[token] = session

    def close(self, token: str) -> None:
        with self._lock:
            self._routes.pop(token, None)

    def base_url(self, token: str, provider: str) -> str:
        """What the agent's SDK for `provider` takes as its base URL."""
        return f"http://127.0.0.1:{self.port}/{PREFIX}/{token}/{provider}"

    def _session(self, token: str) -> tuple[bool, ReplaySession | None]:
        with self._lock:
            return token in self._routes, self._routes.get(token)

    # -- HTTP ---------------------------------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class ProxyHandler(_Handler):
            pass

        ProxyHandler.proxy = proxy
        return ProxyHandler


class _Refusal(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = IDLE_TIMEOUT
    proxy: ReplayProxy
    asked_headers: dict[str, str]  # the request's, by lower-case name
    _headers_buffer: list[bytes]
    raw_requestline: bytes  # set by handle_one_request before parse_request

    def log_message(self, *args: object) -> None:  # requests are not logged; problems are
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # a client that closed its connection with an answer's last bytes unread
            self.close_connection = True

    def parse_request(self) -> bool:
        """The request line and headers, read without the standard library's email parser.

        That parser took a third of a replayed call's time (benchmarks/agent.md#record-and-replay-of-model-calls). HTTP/1.0 and 1.1 only, at most
        MAX_HEADERS headers of at most 64 KiB each, names lower-cased into `asked_headers` (repeated ones joined by ",
        "), keep-alive as HTTP/1.1 has it, and `Expect: 100-continue` answered. False, with the error sent, for anything
        else.
        """
        self.command, self.close_connection = "", True
        self.request_version = self.default_request_version
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.0", "HTTP/1.1"):
            self.send_error(400, "Bad request line: HTTP/1.0 or HTTP/1.1 requests only")
            return False
        self.command, self.path, self.request_version = words
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS):
            line = self.rfile.readline(65537)
            if len(line) > 65536:
                self.send_error(431, "Header line too long")
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            name, colon, value = str(line, "iso-8859-1").partition(":")
            if not colon:
                self.send_error(400, "Malformed header line")
                return False
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        else:
            self.send_error(431, "Too many headers")
            return False
        self.asked_headers = headers
        connection = headers.get("connection", "").lower()
        self.close_connection = connection == "close" or (
            self.request_version == "HTTP/1.0" and connection != "keep-alive"
        )
        if headers.get("expect", "").lower() == "100-continue" and self.request_version == "HTTP/1.1":
            self.send_response_only(100)
            self.end_headers()
        return True

    def do_POST(self) -> None:
        provider = "openai"
        try:
            self._check_origin()
            token, provider, target = self._split()
            known, session = self.proxy._session(token)
            if not known:
                raise _Refusal(404, f"no run is bound to route {token!r} (it has ended, or the URL is not AgentCI's)")
            if session is None:
                raise _Refusal(503, "no run is being served on this route right now")
            upstream = self.proxy.upstreams.get(provider)
            if upstream is None:
                names = ", ".join(sorted(self.proxy.upstreams))
                raise _Refusal(404, f"no upstream for provider {provider!r} (configured: {names})")
            self._serve(session, provider, upstream, target)
        except _Refusal as refusal:
            self._error(refusal.status, refusal.message, provider)
        except (BrokenPipeError, ConnectionResetError):  # the agent went away
            self.close_connection = True
        except Exception as exc:  # a fault of the proxy's own: answered, logged, and the proxy serves on
            self.proxy.log(f"internal error on {self.command} {self.path}: {type(exc).__name__}: {exc}")
            self.close_connection = True
            self._error(500, f"AgentCI replay proxy: internal error ({type(exc).__name__})", provider)

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    # -- the request ---------------------------------------------------------------------------------------------
    def _check_origin(self) -> None:
        if self.client_address[0] not in LOOPBACK:
            raise _Refusal(403, "only loopback connections are served")
        host = self.asked_headers.get("host", "").rsplit(":", 1)[0].strip("[]").lower()
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise _Refusal(403, f"Host {host!r} is not the loopback address this proxy serves")

    def _split(self) -> tuple[str, str, str]:
        """(route token, provider, the path and query after the provider)."""
        parts = self.path.split("/", 4)  # "", PREFIX, token, provider, rest
        if len(parts) < 4 or parts[1] != PREFIX:
            raise _Refusal(404, f"no route {self.path.split('?')[0]}: use the base URL AgentCI gives the agent")
        rest = parts[4] if len(parts) > 4 else ""
        return parts[2], parts[3].split("?")[0], "/" + rest if not rest.startswith("?") else rest

    def _body(self) -> bytes:
        if "chunked" in self.asked_headers.get("transfer-encoding", "").lower():
            raw = self._chunked()
        else:
            length = self.asked_headers.get("content-length", "0")
            if not length.strip().isdigit():
                raise _Refusal(400, "Content-Length is not a number")
            if int(length) > MAX_BODY:
                self.close_connection = True
                raise _Refusal(413, f"the body of {length} bytes exceeds {MAX_BODY} bytes")
            raw = self.rfile.read(int(length))
        encoding = self.asked_headers.get("content-encoding", "").strip().lower()
        if not encoding or encoding == "identity":
            return raw
        if encoding not in ("gzip", "x-gzip", "deflate"):
            raise _Refusal(415, f"content encoding {encoding!r} is not supported (gzip and deflate are)")
        try:
            decoder = zlib.decompressobj(16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS)
            body = decoder.decompress(raw, MAX_BODY + 1)
        except zlib.error as exc:
            raise _Refusal(400, f"the {encoding} body does not decompress: {exc}") from None
        if len(body) > MAX_BODY:
            raise _Refusal(413, f"the body exceeds {MAX_BODY} bytes once decompressed")
        return body

    def _chunked(self) -> bytes:
        body = bytearray()
        while True:
            size_line = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise _Refusal(400, "a malformed chunked body") from None
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers
                    pass
                return bytes(body)
            if len(body) + size > MAX_BODY:
                self.close_connection = True
                raise _Refusal(413, f"the body exceeds {MAX_BODY} bytes")
            body += self.rfile.read(size)
            self.rfile.readline(8)

    def _serve(self, session: ReplaySession, provider: str, upstream: Upstream, target: str) -> None:
        asked = _ArrivedRequest(
            provider=provider,
            method=self.command,
            target=target,
            raw=self._body(),
            content_type=self.asked_headers.get("content-type"),
            headers={name: value for name, value in self.asked_headers.items() if name in self.proxy.record_headers},
            keys=_keys(self.asked_headers, target),
        )
        number, started = session.number(), time.perf_counter()
        if session.mode == ReplayMode.RECORD:  # nothing to look up: the request is read when the recording is written
            return self._live(session, asked, (number, started), upstream)
        request = asked.recorded(session.volatility.with_secrets(asked.keys))
        recorded = session.answer(request.key(), number)
        if recorded is not None:
            took = _ms_since(started)  # a replayed stream's frames all leave at once: its first bytes with the rest
            session.timed(number, took, took if "stream" in recorded.response.content else None)
            return self._replay(recorded.response)
        miss = session.miss(request, number)
        if not miss.went_live:
            return self._error(400, f"AgentCI replay: {miss.explanation}", provider, code="replay_miss")
        self._live(session, asked, (number, started), upstream)

    # -- answers -------------------------------------------------------------------------------------------------
    def _replay(self, response: RecordedResponse) -> None:
        payload = response.payload
        self.send_response(response.status)
        if "content-type" in response.headers:  # the one answer header replayed (recordings.py checks its value)
            self.send_header("content-type", response.headers["content-type"])
        self.send_header("content-length", str(len(payload)))
        self.send_header("x-agentci-replay", "replayed")
        self._send_with_headers(payload)

    def _send_with_headers(self, payload: bytes) -> None:
        """End the headers and send them with `payload` in one write (two would be two packets: Nagle is off)."""
        self._headers_buffer.extend((b"\r\n", payload))
        self.flush_headers()

    def _live(
        self, session: ReplaySession, asked: _ArrivedRequest, call: tuple[int, float], upstream: Upstream
    ) -> None:
        """Forward the request and pass the answer on; `call`: its number and when it arrived (perf_counter).

        The call is handed to the session (to be read when the recording is written), with how long it took, before the
        answer's last bytes leave, so an agent that has read its answer always finds its call among the run's.
        """
        number, started = call
        headers = {name: value for name, value in self.asked_headers.items() if name not in NOT_FORWARDED}
        headers["accept-encoding"] = "gzip, identity"
        try:
            answer = upstream.send(self.command, asked.target, headers, asked.raw)
        except UpstreamError as exc:
            self.proxy.log(str(exc))
            raise _Refusal(502, f"AgentCI replay proxy: {exc}") from None
        kept = RECORDED_RESPONSE_HEADERS | self.proxy.record_headers
        answered = _Answered(
            status=answer.status, headers={name: v for name, v in answer.headers.items() if name in kept}
        )

        def keep(first_bytes: float | None = None) -> None:
            if answer.status not in RETRIED_STATUSES and answer.status < 500:
                session.live(functools.partial(_call, asked, answered, session.volatility), number)
                ttft = None if first_bytes is None else (first_bytes - started) * 1000
                session.timed(number, _ms_since(started), ttft)

        if "text/event-stream" in answer.headers.get("content-type", ""):
            return self._relay_stream(answer, answered, keep)
        try:
            answered.chunks.append(b"".join(answer.chunks))
        except UpstreamError as exc:
            self.proxy.log(str(exc))
            raise _Refusal(502, f"AgentCI replay proxy: {exc}") from None
        keep()
        self._head(answer)
        self.send_header("content-length", str(len(answered.chunks[0])))
        self._send_with_headers(answered.chunks[0])

    def _head(self, answer: UpstreamAnswer) -> None:
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("x-agentci-replay", "live")

    def _relay_stream(self, answer: UpstreamAnswer, answered: _Answered, keep: Callable[[float | None], None]) -> None:
        """Pass a stream on as it arrives (chunked), one chunk behind: the last is sent once the call is kept.

        The call is kept with when its first bytes arrived. A stream the provider broke off is broken off for the agent
        too, and not kept.
        """
        answered.streamed = True
        self._head(answer)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        first_bytes = None
        try:
            for chunk in answer.chunks:
                if answered.chunks:
                    self._chunk(answered.chunks[-1])
                else:
                    first_bytes = time.perf_counter()
                answered.chunks.append(chunk)
        except UpstreamError as exc:
            self.proxy.log(str(exc))
            self.close_connection = True
            return
        keep(first_bytes)
        if answered.chunks:
            self._chunk(answered.chunks[-1])
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _error(self, status: int, message: str, provider: str, code: str = "replay_proxy") -> None:
        """An error body in the provider's shape, so its SDK raises with `message`; a miss is not retried."""
        if provider == "anthropic":
            body: dict[str, Any] = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        else:
            body = {"error": {"message": message, "type": "agentci_replay", "param": None, "code": code}}
        payload = canonical_json(body).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            if code == "replay_miss":
                self.send_header("x-should-retry", "false")
            self._send_with_headers(payload)
        except OSError:
            self.close_connection = True


@dataclass(frozen=True, kw_only=True)
class _ArrivedRequest:
    """A request as it arrived, read into a RecordedRequest only when it must be keyed or recorded."""

    provider: str
    method: str
    target: str  # the path and query after the provider
    raw: bytes
    content_type: str | None
    headers: dict[str, str]  # the allow-listed ones
    keys: tuple[str, ...] = ()  # the keys it carries: secrets of the call

    def recorded(self, volatility: Volatility) -> RecordedRequest:
        parts = urlsplit(self.target)
        return RecordedRequest(
            provider=self.provider,
            method=self.method,
            path=parts.path,
            content=masked(content_of(self.raw, self.content_type), volatility),
            query=keyed_query(dict(parse_qsl(parts.query, keep_blank_values=True))),
            headers=self.headers,
        )


@dataclass(kw_only=True)
class _Answered:
    """A live answer as it arrived: its status, allow-listed headers and body (a stream's chunks, in order)."""

    status: int
    headers: dict[str, str]
    chunks: list[bytes] = field(default_factory=list)
    streamed: bool = False

    def recorded(self, volatility: Volatility) -> RecordedResponse:
        """The answer as recorded, every secret of `volatility` masked in it."""
        raw = b"".join(self.chunks)
        if self.streamed:
            splitter = sse_frames.FrameSplitter()
            frames = [frame for frame, _ in splitter.feed(raw)] + [frame for frame, _ in splitter.rest()]
            content: dict[str, Any] = {"stream": frames}
        else:
            content = content_of(raw, self.headers.get("content-type"))
        return RecordedResponse(status=self.status, headers=self.headers, content=masked_answer(content, volatility))


def _call(asked: _ArrivedRequest, answered: _Answered, volatility: Volatility) -> RecordedCall:
    secret = volatility.with_secrets(asked.keys)
    return RecordedCall(request=asked.recorded(secret), response=answered.recorded(secret))


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _keys(headers: Mapping[str, str], target: str) -> tuple[str, ...]:
    """The keys a request carries.

    Its key headers' values (without an authorization scheme such as "Bearer") and the values of URL parameters
    named like a secret (`api_key`, `key`, `token`).
    """
    found = [value.split(" ", 1)[-1].strip() for name, value in headers.items() if name in KEY_HEADERS]
    found += [v for k, v in parse_qsl(urlsplit(target).query, keep_blank_values=True) if SECRET_NAME.search(k)]
    return tuple(found)

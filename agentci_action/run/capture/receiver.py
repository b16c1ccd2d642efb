"""An OTLP/HTTP receiver on 127.0.0.1 that keeps an agent's spans, grouped by the run they belong to.

A run is named by the resource attributes `agentci.query_id` and `agentci.run` (AgentCI puts them in each
run's `OTEL_RESOURCE_ATTRIBUTES`). Spans whose resource has no `agentci.query_id` are foreign: kept under
the key None when the receiver is told to keep them (`agentci collect`), else dropped and counted, and the
exporter is told so in the response's partial success.

Only the processes AgentCI started may send spans: each receiver makes a secret token, which those processes get
through the standard `OTEL_EXPORTER_OTLP_HEADERS` (environment.py), so their exporters send it as the header
`x-agentci-token`. Spans without it are refused with 401: another local process can find the port, and its forged
spans for a query would otherwise become that query's trace.

Routes: `POST /v1/traces` (see `otlp` for encodings and answers); `POST /v1/metrics` and `/v1/logs` are
answered 200 and discarded, since `OTEL_EXPORTER_OTLP_ENDPOINT` sends every signal here; anything else 404.
Bounds: a body over `max_body` bytes (compressed or not) is refused with 413 and never held in memory (it
is read and dropped for `DRAIN_S` seconds at most, so the client reads the answer); a connection idle for
`IDLE_TIMEOUT` seconds is closed. Every refused request is logged (the first of each
kind in full, the rest counted in `problems`); no request can stop the receiver.
"""

from __future__ import annotations

import hmac
import secrets
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from agentci_action.run._loopback import LoopbackServer
from agentci_action.run.capture import otlp

RunKey = tuple[str, int, int]  # (query id, run, turn: 0 outside a conversation)
QUERY_ID = "agentci.query_id"
RUN = "agentci.run"
TURN = "agentci.turn"
IDLE_TIMEOUT = 30.0
DRAIN_S = 5.0
DISCARDED_SIGNALS = ("/v1/metrics", "/v1/logs")
TOKEN_HEADER = "x-agentci-token"


def run_key(resource: dict[str, Any]) -> RunKey | None:
    """(query id, run, turn) named by a resource's attributes; None without a query id.

    A run or turn that is not a whole number counts as 0.
    """
    query_id = resource.get(QUERY_ID)
    if query_id in (None, ""):
        return None
    run, turn = (str(resource.get(name, "0")).strip() for name in (RUN, TURN))
    return str(query_id), int(run) if run.isdigit() else 0, int(turn) if turn.isdigit() else 0


def _stderr(message: str) -> None:
    print(f"agentci otel receiver: {message}", file=sys.stderr, flush=True)


class Receiver(LoopbackServer):
    """Use as a context manager (the port is freed on every way out). `endpoint` is the OTLP base URL."""

    def __init__(
        self,
        port: int = 0,
        keep_foreign: bool = False,
        max_body: int = otlp.MAX_BODY,
        log: Callable[[str], None] = _stderr,
    ):
        self.token = secrets.token_urlsafe(32)  # what the processes AgentCI starts send (TOKEN_HEADER)
        self.keep_foreign = keep_foreign
        self.max_body = max_body
        self.log = log
        self.spans_received = 0
        self.foreign_spans = 0
        self.problems: Counter[str] = Counter()  # refused requests and dropped spans, by kind
        self._runs: dict[RunKey | None, list[otlp.ResourceSpans]] = {}
        self._last_spans = 0.0  # monotonic time spans were last kept
        self._unsettled = False  # spans kept since `settled` last said True
        self._busy: set[int] = set()  # requests being handled, by number
        self._numbers = iter(range(1, sys.maxsize))
        self._cond = threading.Condition()
        super().__init__(port, "agentci-otlp")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        """The header an exporter must send with its spans."""
        return {TOKEN_HEADER: self.token}

    def authorised(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token.encode(), self.token.encode())

    # -- the store ----------------------------------------------------------------------------------------------
    def add(self, batch: list[otlp.ResourceSpans]) -> tuple[int, str]:
        """Keep a request's resourceSpans by run; (spans not kept, why) for the partial-success answer."""
        dropped, why = 0, ""
        with self._cond:
            for resource_spans in batch:
                key = run_key(resource_spans.resource)
                self.spans_received += resource_spans.count
                if key is None:
                    self.foreign_spans += resource_spans.count
                    if not self.keep_foreign:
                        dropped += resource_spans.count
                        why = f"spans without the resource attribute {QUERY_ID} are not kept by AgentCI"
                        service = resource_spans.resource.get("service.name", "a service")
                        self.note("foreign", f"dropped spans of {service}: {why}")
                        continue
                self._runs.setdefault(key, []).append(resource_spans)
                self._last_spans, self._unsettled = time.monotonic(), True
            self._cond.notify_all()
        return dropped, why

    def take(self, key: RunKey | None) -> list[dict[str, Any]]:
        """Remove and return a run's resourceSpans as OTLP/JSON dicts (empty when none arrived)."""
        with self._cond:
            found = self._runs.pop(key, [])
        return [resource_spans.json() for resource_spans in found]

    def spans(self, key: RunKey | None) -> list[dict[str, Any]]:
        """A run's resourceSpans so far as OTLP/JSON dicts, kept."""
        with self._cond:
            found = list(self._runs.get(key, []))
        return [resource_spans.json() for resource_spans in found]

    def runs(self) -> list[RunKey | None]:
        with self._cond:
            return list(self._runs)

    def settled(self, quiet_s: float) -> bool:
        """Whether some run got spans since the last call that said so, none of them in the last `quiet_s` s."""
        with self._cond:
            if not self._unsettled or time.monotonic() - self._last_spans < quiet_s:
                return False
            self._unsettled = False
            return True

    def settle(self, key: RunKey | None, timeout_s: float) -> bool:
        """Wait for the requests being handled now to be stored, then for the run's first spans.

        The first spans only while the run has none; `timeout_s` seconds at most in all. True when the run has spans.
        """
        deadline = time.monotonic() + timeout_s
        with self._cond:
            pending = set(self._busy)
            while (pending & self._busy or key not in self._runs) and self._cond.wait(deadline - time.monotonic()):
                pass
            return key in self._runs

    def note(self, kind: str, message: str) -> None:
        """Count a problem; log the first of its kind."""
        with self._cond:
            self.problems[kind] += 1
            first = self.problems[kind] == 1
        if first:
            self.log(message + " (further ones are counted, not logged)")

    def _begin(self) -> int:
        with self._cond:
            number = next(self._numbers)
            self._busy.add(number)
            return number

    def _end(self, number: int) -> None:
        with self._cond:
            self._busy.discard(number)
            self._cond.notify_all()

    # -- HTTP ---------------------------------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class OtlpHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            timeout = IDLE_TIMEOUT

            def log_message(self, *args: object) -> None:  # requests are not logged, refusals are
                pass

            def do_POST(self) -> None:
                number = receiver._begin()
                try:
                    self._answer(self._handle())
                except Exception as exc:
                    receiver.note("internal", f"internal error on {self.path}: {type(exc).__name__}: {exc}")
                    self.close_connection = True
                    self._answer(otlp.failure(None, otlp.RequestError(500, "internal error")))
                finally:
                    receiver._end(number)

            def do_GET(self) -> None:
                self._refuse(405, "only POST is served")

            do_PUT = do_DELETE = do_PATCH = do_GET

            def _handle(self) -> otlp.Answer:
                content_type = self.headers.get("content-type")
                try:
                    body = self._body()
                    if self.path == "/v1/traces" and not receiver.authorised(self.headers.get(TOKEN_HEADER)):
                        raise otlp.RequestError(
                            401,
                            f"spans without AgentCI's {TOKEN_HEADER} header: only the processes AgentCI started "
                            "(with its OTEL_EXPORTER_OTLP_HEADERS) may send them",
                        )
                    if self.path in DISCARDED_SIGNALS:
                        return otlp.success(content_type)  # empty Export{Metrics,Logs}ServiceResponse, same bytes
                    if self.path != "/v1/traces":
                        raise otlp.RequestError(404, f"no route {self.path}: traces go to /v1/traces")
                    batch = otlp.decode(
                        otlp.decompress(body, self.headers.get("content-encoding"), receiver.max_body), content_type
                    )
                except otlp.RequestError as error:
                    receiver.note(
                        str(error.status), f"refused a request to {self.path} ({error.status}): {error.message}"
                    )
                    return otlp.failure(content_type, error)
                return otlp.success(content_type, *receiver.add(batch))

            def _body(self) -> bytes:
                length = self.headers.get("content-length")
                if length is None or not length.strip().isdigit():
                    self.close_connection = True
                    raise otlp.RequestError(411, "a Content-Length header is required")
                if int(length) > receiver.max_body:
                    self._discard(int(length))
                    raise otlp.RequestError(413, f"the body of {length} bytes exceeds {receiver.max_body} bytes")
                try:
                    body = self.rfile.read(int(length))
                except TimeoutError:
                    self.close_connection = True
                    raise otlp.RequestError(408, f"no data for {IDLE_TIMEOUT:g} s while reading the body") from None
                if len(body) < int(length):
                    self.close_connection = True
                    raise otlp.RequestError(400, f"the body ended after {len(body)} of {length} bytes")
                return body

            def _discard(self, length: int) -> None:
                """Read and drop an oversized body, so the client reads the 413 instead of a reset connection.

                A megabyte at a time, DRAIN_S seconds at most; the connection is closed after the answer.
                """
                self.close_connection = True
                deadline = time.monotonic() + DRAIN_S
                while length > 0 and time.monotonic() < deadline:
                    chunk = self.rfile.read1(min(length, 1 << 20))
                    if not chunk:
                        return
                    length -= len(chunk)

            def _refuse(self, status: int, message: str) -> None:
                self.close_connection = True
                self._answer(otlp.failure(None, otlp.RequestError(status, message)))

            def _answer(self, answer: otlp.Answer) -> None:
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.content_type)
                    self.send_header("content-length", str(len(answer.body)))
                    if self.close_connection:
                        self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(answer.body)
                except OSError:  # the client went away (a refused upload it was still sending)
                    self.close_connection = True

        return OtlpHandler

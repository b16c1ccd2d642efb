"""An HTTP server on 127.0.0.1 only (never another interface), serving in a daemon thread from `start` to `stop`.

The base of the OTLP receiver and the replay proxy, which give their handler class.
"""

from __future__ import annotations

import sys
import threading
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class _Server(ThreadingHTTPServer):
    """A ThreadingHTTPServer that says nothing when a client goes away mid-request.

    The standard one prints a traceback to standard error for it; an agent killed by its timeout, or any local process,
    can reset its connection, and that is no error of the run's.
    """

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class LoopbackServer(ABC):
    """Use as a context manager (the port is freed on every way out).

    Subclasses set what their handler reads before calling this `__init__`, which asks them for `_handler_class()`.
    `poll_s`: how soon `stop` is noticed.
    """

    def __init__(self, port: int = 0, name: str = "agentci-http", poll_s: float = 0.5):
        self._http = _Server(("127.0.0.1", port), self._handler_class(), bind_and_activate=False)
        self._http.daemon_threads = True
        self._http.request_queue_size = 128
        self._name, self._poll_s = name, poll_s
        self._thread: threading.Thread | None = None

    @abstractmethod
    def _handler_class(self) -> type[BaseHTTPRequestHandler]: ...

    def start(self) -> Self:
        try:
            self._http.server_bind()
            self._http.server_activate()
        except OSError:
            self._http.server_close()
            raise
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(self._poll_s,), name=self._name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port; safe to call twice, and before start."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

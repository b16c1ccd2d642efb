"""The provider behind the proxy: forward one request, hand back its answer as it arrives, decompressed.

Connections are kept alive and reused (one per request at a time, idle ones in a pool), so a call through the
proxy costs no new TCP or TLS handshake. The answer's body is read in chunks as the provider sends them (a
stream's frames reach the agent as they are produced) and gzip or deflate is undone on the way, since the
recording keeps the plain text and the agent is answered without compression. HTTPS goes through the proxy
named by HTTPS_PROXY (a CONNECT tunnel) unless NO_PROXY exempts the host; loopback hosts never do.
"""

from __future__ import annotations

import http.client
import ssl
import threading
import urllib.request
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

CHUNK = 65536
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
IDLE_CONNECTIONS = 16


class UpstreamError(Exception):
    """The provider could not be reached or broke off its answer."""


@dataclass
class UpstreamAnswer:
    status: int
    headers: dict[str, str]  # lower-case names, content-encoding and framing headers removed
    chunks: Iterator[bytes]  # the body, decompressed, as it arrives; UpstreamError when it breaks off


class Upstream:
    """One provider's base URL (`https://api.openai.com/v1`); `send` appends the request's path to it."""

    def __init__(self, base_url: str, timeout_s: float = 600.0, environ: Mapping[str, str] | None = None):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream {base_url!r}: give an http:// or https:// URL")
        self.base_url = base_url.rstrip("/")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.timeout_s = timeout_s
        self.tunnel = _proxy_for(self.scheme, self.host, environ)
        self._context = ssl.create_default_context() if self.scheme == "https" else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def send(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> UpstreamAnswer:
        """Send `method prefix+target`; the answer's status and headers once they arrive, its body to be read.

        UpstreamError when the provider cannot be reached (a kept connection that went stale is retried once).
        """
        for attempt in (0, 1):
            connection, reused = self._connection()
            try:
                connection.request(method, self.prefix + target, body=body, headers=dict(headers))
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                if reused and attempt == 0 and isinstance(exc, ConnectionError):  # the provider closed it meanwhile
                    continue
                raise UpstreamError(f"{self.base_url} could not be reached: {type(exc).__name__}: {exc}") from None
            return UpstreamAnswer(
                status=response.status,
                headers=_plain_headers(response),
                chunks=self._body(connection, response),
            )
        raise AssertionError("unreachable")

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        host, port = self.tunnel or (self.host, self.port)
        connection: http.client.HTTPConnection
        if self._context is not None:
            connection = http.client.HTTPSConnection(host, port, timeout=self.timeout_s, context=self._context)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=self.timeout_s)
        if self.tunnel:
            connection.set_tunnel(self.host, self.port)
        return connection, False

    def _body(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> Iterator[bytes]:
        decoder = _decoder(response.getheader("content-encoding"))
        try:
            while chunk := response.read1(CHUNK) or response.read():  # read() marks the answer as read
                if decoded := decoder.decompress(chunk) if decoder else chunk:
                    yield decoded
            if decoder and (tail := decoder.flush()):
                yield tail
        except (OSError, http.client.HTTPException, zlib.error) as exc:
            connection.close()
            raise UpstreamError(f"{self.base_url} broke off its answer: {type(exc).__name__}: {exc}") from None
        except BaseException:
            connection.close()  # the agent went away mid-stream: this connection's state is unknown
            raise
        if response.will_close:
            connection.close()
            return
        with self._lock:
            if len(self._idle) < IDLE_CONNECTIONS:
                self._idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _decoder(encoding: str | None) -> zlib._Decompress | None:
    name = (encoding or "").strip().lower()
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if name == "deflate":
        return zlib.decompressobj()
    return None


HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "te", "trailer", "upgrade"}
)


def _plain_headers(response: http.client.HTTPResponse) -> dict[str, str]:
    """The answer's headers (lower-case) without those that describe the connection or the encoding undone here."""
    return {name.lower(): value for name, value in response.getheaders() if name.lower() not in HOP_BY_HOP}


def _proxy_for(scheme: str, host: str, environ: Mapping[str, str] | None) -> tuple[str, int] | None:
    """(host, port) of the HTTPS proxy to tunnel through, from HTTPS_PROXY / NO_PROXY; None for none or loopback."""
    if scheme != "https" or host in LOOPBACK_HOSTS:
        return None
    proxies = urllib.request.getproxies_environment() if environ is None else _proxies(environ)
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # not in typeshed
    if "https" not in proxies or bypass(host, proxies):
        return None
    proxy = urlsplit(proxies["https"] if "://" in proxies["https"] else f"http://{proxies['https']}")
    return (proxy.hostname or "", proxy.port or 80) if proxy.hostname else None


def _proxies(environ: Mapping[str, str]) -> dict[str, str]:
    found = {}
    for name, value in environ.items():
        lower = name.lower()
        if value and lower.endswith("_proxy"):
            found[lower[: -len("_proxy")]] = value
    return found

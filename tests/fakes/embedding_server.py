"""A local HTTP server that answers like the OpenAI embeddings endpoint (and fails like it), for the real SDK."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class EmbeddingServer:
    """POST /v1/embeddings → a vector per input from `vectors` (text → list), else [1, 0, 0].

    `failures` is a list of (status, headers) answered, in order, before any success; a status of None stalls
    for a second first (longer than a short client timeout). `requests` records every request body received.
    """

    def __init__(self, vectors: dict[str, list[float]] | None = None, failures: list[tuple[int, dict[str, str]]] | None = None):
        self.vectors = vectors or {}
        self.failures = list(failures or [])
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("authorization")})
                if server.failures and server.failures[0][0] is None:
                    server.failures.pop(0)
                    time.sleep(1.0)
                elif server.failures:
                    status, headers = server.failures.pop(0)
                    self._send(status, {"error": {"message": "scripted failure", "type": "server_error"}}, headers)
                    return
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": i, "embedding": server.vectors.get(text, [1.0, 0.0, 0.0])}
                        for i, text in enumerate(inputs)]
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})

            def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "EmbeddingServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

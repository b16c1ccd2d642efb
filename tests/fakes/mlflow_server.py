"""A local stand-in for an MLflow tracking server's trace endpoints, on 127.0.0.1.

What `mlflow-tracing` calls to log a trace and read it back: the experiment lookup, `POST /api/3.0/mlflow/traces`
(the trace's info, kept here) and `GET /api/3.0/mlflow/traces/<id>`. The span data goes where the returned
info's `mlflow.artifactLocation` tag points: a local folder, written and read by MLflow's own artifact
repository, as a real server's artifact store would be.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlparse

from .llm_server import JSONHandler, LocalServer


class FakeMlflowServer(LocalServer):
    """Use as a context manager; `base` is the tracking URI, `artifacts` the folder the span data lands in."""

    def __init__(self, artifacts: Path):
        self.artifacts = artifacts
        self.traces: dict[str, dict] = {}  # trace id → the trace info as logged
        super().__init__()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                path = urlparse(self.path).path
                if path == "/api/2.0/mlflow/experiments/get":
                    experiment = {"experiment_id": "0", "name": "Default", "lifecycle_stage": "active"}
                    return self._send(
                        200, {"experiment": {**experiment, "artifact_location": server.artifacts.as_uri()}}
                    )
                trace_id = path.removeprefix("/api/3.0/mlflow/traces/")
                if trace_id in server.traces:
                    return self._send(200, {"trace": {"trace_info": server.traces[trace_id]}})
                self._send(404, {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": f"no {path}"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                if urlparse(self.path).path != "/api/3.0/mlflow/traces":
                    return self._send(404, {"error_code": "ENDPOINT_NOT_FOUND", "message": f"no {self.path}"})
                info = body["trace"]["trace_info"]
                location = (server.artifacts / info["trace_id"]).as_uri()
                info["tags"] = {**(info.get("tags") or {}), "mlflow.artifactLocation": location}
                server.traces[info["trace_id"]] = info
                self._send(200, {"trace": {"trace_info": info}})

        return Handler

"""Recorded answer headers are checked when a recording is loaded, and only the content type is replayed.

No CR, LF or NUL: sent raw, one would inject headers into the agent's HTTP client. Only the content type is replayed,
as docs/guides/replay.md says.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest

from agentci_action.run.replay import recordings
from agentci_action.run.replay.model_proxy import ReplayProxy
from agentci_action.run.replay.recordings import RecordingError
from agentci_action.run.replay.replay_session import ReplaySession
from agentci_action.run.replay.request_keys import Volatility

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def write_recording(path: Path, headers: dict[str, str]) -> Path:
    call = {
        "request": {"provider": "openai", "method": "POST", "path": "/chat/completions", "body": BODY},
        "response": {"status": 200, "headers": headers, "body": {"choices": []}},
    }
    path.write_text(json.dumps({"version": 1, "query": "q", "run": 0, "calls": [call]}, indent=2) + "\n")
    return path


@pytest.mark.parametrize("bad", ["application/json\r\nx-injected: 1", "text/plain\nx: y", "application/json\0"])
def test_a_header_with_a_line_break_or_nul_is_an_error_at_its_file_and_line(tmp_path, bad):
    path = write_recording(tmp_path / "run-0.json", {"content-type": bad})
    with pytest.raises(RecordingError) as caught:
        recordings.read(path)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if '"content-type"' in text)
    assert (caught.value.file, caught.value.line) == (str(path), line)
    assert "content-type" in caught.value.message and "line break or NUL" in caught.value.message


def test_a_bad_header_name_is_refused_too(tmp_path):
    with pytest.raises(RecordingError, match="line break or NUL"):
        recordings.read(write_recording(tmp_path / "run-0.json", {"x-a\r\nx-b": "1"}))


def test_only_the_content_type_of_a_recorded_answer_is_replayed(tmp_path):
    path = write_recording(
        tmp_path / "run-0.json", {"content-type": "application/json", "x-recorded": "1", "set-cookie": "a=b"}
    )
    session = ReplaySession(query="q", run=0, path=path, mode="replay", volatility=Volatility.declared())
    with ReplayProxy({"openai": "http://127.0.0.1:9/v1"}) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        connection.request(
            "POST",
            f"/agentci/{proxy.route(session)}/openai/chat/completions",
            body=json.dumps(BODY),
            headers={"content-type": "application/json"},
        )
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read()) == {"choices": []}
        names = {name.lower() for name, _ in response.getheaders()}
        connection.close()
    assert names == {"content-type", "content-length", "x-agentci-replay", "server", "date"}

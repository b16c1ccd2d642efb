"""Server-sent events as ordered frames: split a stream as it arrives, keep each frame readable, write it back.

A frame is what the stream carries between two blank lines: its `event:` name, its `data:` lines (joined by
"\\n", as the SSE specification joins them), and `id:` / `retry:` when present. Comment lines (`: ping`) carry
nothing a client reads and are dropped. Kept as a dict for the recording:

    {"event": "message_start", "data": {...}}     data that is a JSON object or array, parsed (readable in review)
    {"text": "[DONE]"}                              any other data, verbatim (a bare "[DONE]", plain text)

`encode` writes a frame back with the same framing: `event:` first, one `data:` line per line of data, a blank
line after; a JSON payload is written compactly (the providers' own form), so a client reads the same values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Frame = dict[str, Any]
FIELDS = ("event", "id", "retry")
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # made once: json.dumps makes one per call


class FrameSplitter:
    """Feed bytes as they arrive; complete frames come out, each with the raw bytes it was sent as."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> Iterator[tuple[Frame, bytes]]:
        """The frames completed by `chunk` (frames with neither event nor data, such as comments, are dropped)."""
        self._pending += chunk
        while True:
            end, gap = _boundary(self._pending)
            if end < 0:
                return
            raw, self._pending = self._pending[: end + gap], self._pending[end + gap :]
            frame = parse_frame(raw[:end].decode("utf-8", errors="replace"))
            if frame:
                yield frame, raw

    def rest(self) -> Iterator[tuple[Frame, bytes]]:
        """A last frame the stream ended without a blank line after (a truncated stream)."""
        raw, self._pending = self._pending, b""
        frame = parse_frame(raw.decode("utf-8", errors="replace")) if raw.strip() else {}
        if frame:
            yield frame, raw


def _boundary(buffer: bytes) -> tuple[int, int]:
    """Where the first frame ends and how long the blank line after it is; (-1, 0) when no frame is complete."""
    found = [(at, len(sep)) for sep in (b"\n\n", b"\r\n\r\n", b"\r\r") if (at := buffer.find(sep)) >= 0]
    return min(found) if found else (-1, 0)


def parse_frame(text: str) -> Frame:
    """One frame's lines as a dict (see the module docstring); {} for a frame of comments only."""
    fields: dict[str, str] = {}
    data: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name in FIELDS:
            fields[name] = value
    frame: Frame = dict(fields)
    if data:
        payload = "\n".join(data)
        parsed = _json_container(payload)
        if parsed is None:
            frame["text"] = payload
        else:
            frame["data"] = parsed
    return frame


def _json_container(payload: str) -> Any:
    """The payload parsed when it is a JSON object or array, else None."""
    if payload[:1] not in ("{", "["):
        return None
    try:
        return json.loads(payload)
    except ValueError:
        return None


def encode(frame: Frame) -> bytes:
    """A frame written back as the stream sent it: fields, then its data lines, then a blank line."""
    lines = [f"{name}: {frame[name]}" for name in FIELDS if name in frame]
    if "data" in frame:
        lines.append("data: " + compact_json(frame["data"]))
    elif "text" in frame:
        lines.extend(f"data: {line}" for line in str(frame["text"]).split("\n"))
    return ("\n".join(lines) + "\n\n").encode()


def compact_json(value: Any) -> str:
    """JSON as the providers send it: no spaces, non-ASCII as is."""
    return _COMPACT.encode(value)


def encode_stream(frames: list[Frame]) -> bytes:
    return b"".join(encode(frame) for frame in frames)

"""Recording files: the model calls of one run of one query, in the order the agent made them, as JSON.

One file per query and run (`<recordings>/<query id>/run-<n>.json`), written to be read in review: indented, one
value per line, a request's object keys sorted (an answer's in the provider's order, as it was sent), no time,
duration or header that is not allow-listed, so recording the same behaviour again writes the same bytes.

    {
      "version": 1,
      "query": "order-status",
      "run": 0,
      "calls": [
        {
          "request": {
            "provider": "openai",          openai | anthropic
            "method": "POST",
            "path": "/chat/completions",   after the provider's base URL
            "query": {...},                allow-listed URL parameters only (see request_keys); absent when none
            "headers": {...},              allow-listed request headers only; absent when none
            "body": {...}                  a JSON body (volatile parts masked); "text" or "base64" for others
          },
          "response": {
            "status": 200,
            "headers": {...},              the content type (the one replayed); no CR, LF or NUL in any
            "body": {...}                  or "stream": [frames, see sse_frames], "text" or "base64"
          }
        }
      ]
    }

JSON rather than YAML, whose multi-line blocks read better, for speed: a recording is read before every replayed
run, and the standard library reads JSON about 90 times faster than PyYAML reads YAML, even with libyaml (86 MB/s
against 1 MB/s, measured on this project's machine). A file that cannot be read is a RecordingError naming the file
and the line.
"""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from agentci_action._util.errors import InputError, Problem
from agentci_action._util.output import replace_file
from agentci_action.run.replay import sse_frames
from agentci_action.run.replay.request_keys import Volatility, request_key

FORMAT_VERSION = 1
REQUEST_CONTENT = ("body", "text", "base64")
RESPONSE_CONTENT = (*REQUEST_CONTENT, "stream")
FRAME_KEYS = frozenset({"event", "id", "retry", "data", "text"})
_DECODER = json.JSONDecoder()


class RecordingError(InputError):
    """A recording that cannot be used: `file`, `line` (1-based, 0 when unknown) and what is wrong."""

    kind = "recording"

    def __init__(self, file: str, line: int, message: str):
        super().__init__(Problem(file, line, message))
        self.file, self.line, self.message = file, line, message


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    provider: str
    method: str
    path: str
    content: dict[str, Any]  # {"body": JSON} | {"text": str} | {"base64": str} | {} (no body)
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def key(self, volatility: Volatility | None = None) -> str:
        """The request's key; its content masked by `volatility` first (None: it already is)."""
        content = self.content if volatility is None else masked(self.content, volatility)
        return request_key(self.provider, self.method, self.path, self.query, content)

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "method": self.method,
            "path": self.path,
            **({"query": dict(sorted(self.query.items()))} if self.query else {}),
            **({"headers": dict(sorted(self.headers.items()))} if self.headers else {}),
            **_sorted(self.content),
        }


@dataclass(frozen=True, kw_only=True)
class RecordedResponse:
    status: int
    headers: dict[str, str]
    content: dict[str, Any]  # {"body": JSON} | {"stream": [frames]} | {"text": str} | {"base64": str} | {}

    @cached_property
    def payload(self) -> bytes:
        """The body to send: the JSON compactly, the frames with their framing, text or bytes as they were."""
        return payload_bytes(self.content)

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "headers": dict(sorted(self.headers.items())), **self.content}


@dataclass(frozen=True, kw_only=True)
class RecordedCall:
    request: RecordedRequest
    response: RecordedResponse

    def as_json(self) -> dict[str, Any]:
        return {"request": self.request.as_json(), "response": self.response.as_json()}


def masked(content: dict[str, Any], volatility: Volatility) -> dict[str, Any]:
    """A request's content with its volatile parts masked (a JSON body by path and pattern, text by pattern)."""
    if "body" in content:
        return {"body": volatility.mask(content["body"])}
    if "text" in content and volatility.masks_text:
        return {"text": volatility.mask(content["text"])}
    return content


def content_of(raw: bytes, content_type: str | None) -> dict[str, Any]:
    """A body as recorded: parsed JSON when it is JSON, else text when it is UTF-8, else base64; {} when empty."""
    if not raw:
        return {}
    if "json" in (content_type or "") or raw[:1] in (b"{", b"["):
        try:
            return {"body": json.loads(raw)}
        except ValueError:
            pass
    try:
        return {"text": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def payload_bytes(content: dict[str, Any]) -> bytes:
    if "body" in content:
        return sse_frames.compact_json(content["body"]).encode()
    if "stream" in content:
        return sse_frames.encode_stream(content["stream"])
    if "text" in content:
        return str(content["text"]).encode()
    if "base64" in content:
        return base64.b64decode(content["base64"])
    return b""


def _sorted(value: Any) -> Any:
    """JSON with every object's keys in sorted order (lists keep theirs)."""
    if isinstance(value, dict):
        return {name: _sorted(value[name]) for name in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


# -- writing -------------------------------------------------------------------------------------------------------
def render(query: str, run: int, calls: list[RecordedCall]) -> str:
    """The recording file's text (see the module docstring): the same calls always give the same bytes."""
    document = {"version": FORMAT_VERSION, "query": query, "run": run, "calls": [c.as_json() for c in calls]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, text: str, what: str = "the recording") -> None:
    """Write the file whole or not at all, through no symbolic link (output.replace_file).

    LinkedPath for a link on its way, OutputError when anything else fails.
    """
    replace_file(path, text, what)


# -- reading -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Recording:
    """A recording file's calls, in order; `line(index)` is where a call starts in the file."""

    path: Path
    query: str
    run: int
    calls: list[RecordedCall]
    text: str = field(repr=False)

    def line(self, index: int) -> int:
        return locate(self.text, ("calls", index))


def record_command(spec_path: str | Path | None) -> str:
    """The one command that records a spec's model calls, as every "not recorded" message prints it."""
    return "agentci record" + (f" --spec {shlex.quote(str(spec_path))}" if spec_path else "")


def check_folders(directory: Path, query_ids: Iterable[str], remedy: str) -> None:
    """RecordingError when the recordings folder, or a query's folder in it, is there but is not a folder."""
    for path in [directory, *(directory / query_id for query_id in query_ids)]:
        if path.exists() and not path.is_dir():
            raise RecordingError(
                str(path), 0, f"is a file where a folder of recordings belongs: move it away, then `{remedy}`"
            )


def stale_folders(directory: Path, query_ids: set[str]) -> list[Path]:
    """The folders in `directory` that record no query in `query_ids` (a query renamed or removed)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_dir() and p.name not in query_ids)


def read(path: Path) -> Recording:
    """A recording file; RecordingError at the file and line of anything wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(str(path), 0, f"cannot be read: {exc}") from None
    return parse(text, path)


def parse(text: str, path: Path) -> Recording:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        ended = exc.pos >= len(text.rstrip()) or not text.rstrip().endswith("}")
        cut = " (the file ends before the recording does: it was cut short)" if ended else ""
        raise RecordingError(str(path), exc.lineno, f"is not valid JSON: {exc.msg}{cut}; record it again") from None
    return _Reader(str(path), text).recording(data, path)


def locate(text: str, where: tuple[str | int, ...]) -> int:
    """The line (1-based) where the value at `where` starts in a JSON text, or its nearest existing parent.

    `where` holds object keys and array indexes from the top; each step is found by decoding the members before it.
    """
    position = _skip(text, 0)
    for step in where:
        found = _member(text, position, step)
        if found is None:
            break
        position = found
    return text.count("\n", 0, position) + 1


def _member(text: str, start: int, step: str | int) -> int | None:
    """Where the member `step` of the object or array starting at `start` starts; None when it has none."""
    opener = text[start : start + 1]
    if opener not in ("{", "[") or (opener == "{") != isinstance(step, str):
        return None
    position, index = _skip(text, start + 1), 0
    try:
        while text[position : position + 1] not in ("}", "]", ""):
            if opener == "{":
                name, position = _DECODER.raw_decode(text, position)
                position = _skip(text, text.index(":", position) + 1)
                if name == step:
                    return position
            elif index == step:
                return position
            _, position = _DECODER.raw_decode(text, position)
            position, index = _skip(text, position), index + 1
            if text[position : position + 1] == ",":
                position = _skip(text, position + 1)
    except (json.JSONDecodeError, ValueError):
        return None
    return None


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


Where = tuple[str | int, ...]


class _Reader:
    """Checks a loaded recording's shape, naming the line of the first thing wrong."""

    def __init__(self, name: str, text: str):
        self.name, self.text = name, text

    def fail(self, where: Where, message: str) -> RecordingError:
        return RecordingError(self.name, locate(self.text, where), message)

    def recording(self, data: Any, path: Path) -> Recording:
        if not isinstance(data, dict):
            raise self.fail((), "is not a recording: expected an object with version, query, run and calls")
        if data.get("version") != FORMAT_VERSION:
            raise self.fail(("version",), f"version {data.get('version')!r} is not {FORMAT_VERSION}: record it again")
        calls = data.get("calls")
        if not isinstance(calls, list):
            raise self.fail(("calls",), "calls: expected a list of the run's model calls")
        query, run = data.get("query"), data.get("run")
        if not isinstance(query, str) or not isinstance(run, int):
            raise self.fail(("query",), "query (a query id) and run (a number) are required")
        return Recording(path, query, run, [self.call(item, index) for index, item in enumerate(calls)], self.text)

    def call(self, item: Any, index: int) -> RecordedCall:
        at: Where = ("calls", index)
        if not isinstance(item, dict) or not isinstance(item.get("request"), dict):
            raise self.fail(at, f"call {index + 1}: expected a `request` and a `response` object")
        if not isinstance(item.get("response"), dict):
            raise self.fail(at, f"call {index + 1}: has no `response` object")
        request, response = item["request"], item["response"]
        for name in ("provider", "method", "path"):
            if not isinstance(request.get(name), str):
                raise self.fail((*at, "request", name), f"call {index + 1}: request.{name} must be a string")
        status = response.get("status")
        if not isinstance(status, int) or isinstance(status, bool):
            raise self.fail(
                (*at, "response", "status"), f"call {index + 1}: response.status must be an HTTP status number"
            )
        return RecordedCall(
            request=RecordedRequest(
                provider=request["provider"],
                method=request["method"],
                path=request["path"],
                query=self.strings(request, "query", (*at, "request")),
                headers=self.strings(request, "headers", (*at, "request")),
                content=self.content(request, REQUEST_CONTENT, (*at, "request"), index),
            ),
            response=RecordedResponse(
                status=status,
                headers=self.headers(response, (*at, "response"), index),
                content=self.content(response, RESPONSE_CONTENT, (*at, "response"), index),
            ),
        )

    def strings(self, part: dict[str, Any], name: str, at: Where) -> dict[str, str]:
        value = part.get(name) or {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self.fail((*at, name), f"{at[-1]}.{name} must map names to strings")
        return value

    def headers(self, response: dict[str, Any], at: Where, index: int) -> dict[str, str]:
        """An answer's headers, none holding a CR, LF or NUL.

        Sent raw, one would add headers of its own to what the agent's HTTP client reads.
        """
        headers = self.strings(response, "headers", at)
        for name, value in headers.items():
            if any(c in name + value for c in "\r\n\0"):
                raise self.fail(
                    (*at, "headers", name),
                    f"call {index + 1}: response header {name!r} holds a line break or NUL: record it again",
                )
        return headers

    def content(self, part: dict[str, Any], kinds: tuple[str, ...], at: Where, index: int) -> dict[str, Any]:
        found = [kind for kind in kinds if kind in part]
        if len(found) > 1:
            raise self.fail((*at, found[1]), f"call {index + 1}: {at[-1]} has both {found[0]} and {found[1]}")
        if not found:
            return {}
        kind, value = found[0], part[found[0]]
        checks: dict[str, Callable[[Any], bool]] = {
            "text": lambda v: isinstance(v, str),
            "base64": _is_base64,
            "stream": lambda v: isinstance(v, list),
        }
        if not checks.get(kind, lambda v: True)(value):
            raise self.fail((*at, kind), f"call {index + 1}: {at[-1]}.{kind} is not a valid {kind} value")
        if kind == "stream":
            for position, frame in enumerate(value):
                if not isinstance(frame, dict) or not frame or not set(frame) <= FRAME_KEYS:
                    raise self.fail(
                        (*at, kind, position),
                        f"call {index + 1}: stream frame {position + 1} must map some of "
                        f"{', '.join(sorted(FRAME_KEYS))} to values",
                    )
        return {kind: value}


def _is_base64(value: Any) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        return False
    return isinstance(value, str)

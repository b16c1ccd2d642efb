"""Read trace files (a file, a directory or a glob; one object, a list, or JSON Lines) into canonical traces.

Every parse or validation problem names the file and the line; nothing is skipped silently.
"""

from __future__ import annotations

import glob
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentci_action._util.errors import Problem, TraceError
from agentci_action._util.gcpause import gc_paused
from agentci_action._util.limits import MAX_NESTING, deeper_than
from agentci_action.spec.models import ModelPrice
from agentci_action.trace.adapters import convert
from agentci_action.trace.canonical import Trace, compact
from agentci_action.trace.pricing import price_trace

TRACE_SUFFIXES = (".json", ".jsonl", ".ndjson")


_DECODER = json.JSONDecoder()
_BLANKS = re.compile(r"[ \t\r\n]*")  # JSON's insignificant white space
_BLANKS_AND_COMMAS = re.compile(r"[ \t\r\n,]*")


@dataclass(frozen=True)
class Record:
    """One top-level JSON value of a trace file, the line it starts on and (when read from a file) the
    file's text and the value's offset in it, to find the line of a field inside it."""

    value: Any
    line: int
    text: str = ""
    offset: int = 0

    def line_at(self, loc: tuple[str | int, ...]) -> int:
        """The line of the deepest key or item of `loc` (a pydantic error location) present in the record's
        JSON text; the record's own line when the text is unknown or nothing of `loc` is found."""
        if not self.text:
            return self.line
        return self.line + self.text.count("\n", self.offset, _locate(self.text, self.offset, loc))


def _blank_end(text: str, pos: int, commas: bool = False) -> int:
    """The offset of the first character at or after `pos` that is not JSON white space (nor a comma, with `commas`)."""
    match = (_BLANKS_AND_COMMAS if commas else _BLANKS).match(text, pos)
    return match.end() if match else pos  # never None: the patterns match the empty string


def _locate(text: str, pos: int, loc: tuple[str | int, ...]) -> int:
    """Offset of the deepest part of `loc` found, walking the (valid) JSON value that starts at `pos`:
    a str part is an object key (the last occurrence, as json.loads keeps), an int part an array index."""
    found = pos
    for part in loc:
        pos = _blank_end(text, pos)
        if isinstance(part, str) and text.startswith("{", pos):
            hit, pos = None, _blank_end(text, pos + 1)
            while text.startswith('"', pos):
                key, after = _DECODER.raw_decode(text, pos)
                value_at = _blank_end(text, _blank_end(text, after) + 1)
                if key == part:
                    hit = (pos, value_at)
                pos = _blank_end(text, _DECODER.raw_decode(text, value_at)[1], commas=True)
            if hit is None:
                return found
            found, pos = hit
        elif isinstance(part, int) and text.startswith("[", pos):
            pos = _blank_end(text, pos + 1)
            for _ in range(part):
                if text.startswith("]", pos):
                    return found
                pos = _blank_end(text, _DECODER.raw_decode(text, pos)[1], commas=True)
            if text.startswith("]", pos):
                return found
            found = pos
        else:
            return found
    return found


def resolve_paths(patterns: list[str]) -> list[Path]:
    """Files named by each pattern: a file, every trace file in a directory (recursively, sorted), or a glob."""
    files: list[Path] = []
    for pattern in patterns:
        path = Path(pattern)
        if path.is_file():
            found = [path]
        elif path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in TRACE_SUFFIXES)
        elif path.exists():  # reading a FIFO without a writer would wait forever
            raise TraceError.at(pattern, 0, "not a regular file (a FIFO or device); name a trace file or directory")
        else:
            found = sorted(Path(p) for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
        if not found:
            raise TraceError.at(
                pattern, 0, "no trace files found (expected a file, a directory of .json/.jsonl files, or a glob)"
            )
        files.extend(f for f in found if f not in files)
    return files


class _LineCounter:
    """Line numbers of increasing offsets in one text, counting each newline once."""

    def __init__(self, text: str):
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def read_records(path: Path) -> list[Record]:
    """Split a file into top-level JSON values: one document, a list's items, or JSON Lines.

    A UTF-8 byte-order mark is skipped. Bytes that are not UTF-8, malformed JSON and a record nested deeper
    than the parser can read are errors at their line; in JSON Lines a record left unclosed is reported at the
    line where it starts (the parser only notices on a later line)."""
    text = _read_text(path)
    if not text.strip():
        raise TraceError.at(str(path), 0, "trace file is empty")
    records = _array_items(text)
    if records is None:
        records = _values(path, text)
    return records


_TOO_DEEP = f"a record nested deeper than {MAX_NESTING} lists and objects"


def _too_deep(trace: Trace) -> bool:
    """Whether a value the agent wrote (a call's arguments or result, the metadata) nests deeper than MAX_NESTING:
    matching and serialising recurse once per level. Only these free-form values are walked (they are few and
    shallow), not the whole record."""
    calls = trace.tool_calls
    values = [trace.metadata, *(call.arguments for call in calls), *(call.result for call in calls)]
    return deeper_than(values, MAX_NESTING + 1)  # one walk for all of them, inside one more list


JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError.at(str(path), 0, f"cannot read trace file: {exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise TraceError.at(
            str(path),
            data.count(b"\n", 0, exc.start) + 1,
            f"not UTF-8: byte 0x{data[exc.start]:02x} at column {exc.start - line_start + 1} (save the file as UTF-8)",
        ) from None


def _values(path: Path, text: str) -> list[Record]:
    """The file's top-level values one after another (JSON Lines, or one document)."""
    lines = _LineCounter(text)
    values: list[Record] = []
    pos, end = _blank_end(text, 0), len(text)
    json_lines = path.suffix.lower() in JSON_LINES_SUFFIXES
    while pos < end:
        start = lines.at(pos)
        try:
            value, next_pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            if exc.lineno > start and (json_lines or values):
                message = (
                    f"malformed JSON in the record that starts here: {exc.msg} (line {exc.lineno}, column {exc.colno})"
                )
                raise TraceError.at(str(path), start, message) from None
            raise TraceError.at(str(path), exc.lineno, f"malformed JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:  # deeper than the parser's own limit (about 1,000 levels)
            raise TraceError.at(str(path), start, _TOO_DEEP) from None
        values.append(Record(value, start, text, pos))
        pos = _blank_end(text, next_pos)
    return values


def _array_items(text: str) -> list[Record] | None:
    """The items of a text that is exactly one JSON array, each with the line it starts on, parsed once.

    None when the text is anything else (an object, JSON Lines, an array followed by more values) or is
    malformed: read_records then reads it value by value, and names the error's line.
    """
    pos = _blank_end(text, 0)
    if not text.startswith("[", pos):
        return None
    lines = _LineCounter(text)
    items: list[Record] = []
    pos = _blank_end(text, pos + 1)
    if not text.startswith("]", pos):
        while True:
            try:
                value, next_pos = _DECODER.raw_decode(text, pos)
            except (json.JSONDecodeError, RecursionError):
                return None
            items.append(Record(value, lines.at(pos), text, pos))
            pos = _blank_end(text, next_pos)
            if text.startswith("]", pos):
                break
            if not text.startswith(",", pos):
                return None
            pos = _blank_end(text, pos + 1)
    return items if _blank_end(text, pos + 1) == len(text) else None


def load_traces(
    patterns: list[str], trace_format: str | None = None, pricing: dict[str, ModelPrice] | None = None
) -> list[Trace]:
    """Load, convert and price every trace named by `patterns`. Raises TraceError listing every problem.

    `trace_format` names an adapter (None or "auto": detect per file); `pricing` is the spec's `pricing:`.
    """
    traces: list[Trace] = []
    problems: list[Problem] = []
    for path in resolve_paths(patterns):
        try:
            with gc_paused():
                converted = list(convert(read_records(path), str(path), trace_format))
                for trace in converted:
                    if _too_deep(trace):
                        file, _, line = trace.source.rpartition(":")
                        raise TraceError.at(file, int(line) if line.isdigit() else 0, _TOO_DEEP)
                traces.extend(compact(price_trace(trace, pricing)) for trace in converted)
        except TraceError as exc:
            problems.extend(exc.problems)
    if problems:
        raise TraceError(problems)
    return traces

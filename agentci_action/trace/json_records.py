"""One trace file's top-level JSON values (one object, a list, or JSON Lines), each with its line.

The line it starts on, so that every problem found later can name the file and the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentci_action._util.errors import TraceError, not_utf8
from agentci_action._util.limits import MAX_NESTING

TOO_DEEP = f"a record nested deeper than {MAX_NESTING} lists and objects"
_DECODER = json.JSONDecoder()


_BLANKS = re.compile(r"[ \t\r\n]*")  # JSON's insignificant white space


_BLANKS_AND_COMMAS = re.compile(r"[ \t\r\n,]*")


@dataclass(frozen=True)
class Record:
    """One top-level JSON value of a trace file and the line it starts on, with where it was read from.

    When read from a file, the file's text and the value's offset in it, to find the line of a field inside it.
    """

    value: Any
    line: int
    text: str = ""
    offset: int = 0

    def line_at(self, loc: tuple[str | int, ...]) -> int:
        """The line of the deepest key or item of `loc` (a pydantic error location) present in the record's JSON text.

        The record's own line when the text is unknown or nothing of `loc` is found.
        """
        if not self.text:
            return self.line
        return self.line + self.text.count("\n", self.offset, _locate(self.text, self.offset, loc))


def _blank_end(text: str, pos: int, commas: bool = False) -> int:
    """The offset of the first character at or after `pos` that is not JSON white space (nor a comma, with `commas`)."""
    match = (_BLANKS_AND_COMMAS if commas else _BLANKS).match(text, pos)
    return match.end() if match else pos  # never None: the patterns match the empty string


def _locate(text: str, pos: int, loc: tuple[str | int, ...]) -> int:
    """Offset of the deepest part of `loc` found, walking the (valid) JSON value that starts at `pos`.

    A str part is an object key (the last occurrence, as json.loads keeps), an int part an array index.
    """
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
    line where it starts (the parser only notices on a later line).
    """
    text = _read_text(path)
    if not text.strip():
        raise TraceError.at(str(path), 0, "trace file is empty")
    records = _array_items(text)
    if records is None:
        records = _values(path, text)
    return records


JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError.at(str(path), 0, f"cannot read trace file: {exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceError([not_utf8(str(path), data, exc, "file")]) from None


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
            raise TraceError.at(str(path), start, TOO_DEEP) from None
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

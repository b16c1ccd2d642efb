"""Where text leaves the process (standard output, report and results files, the runner's files): every write
completes or raises OutputError (exit 2) naming the destination, never a silent truncation; and text is made
encodable here, once for every output.

Encodable: a lone surrogate (U+D800–U+DFFF alone; valid JSON, what JavaScript leaves when it cuts a string
mid-emoji) cannot be written as UTF-8. It becomes U+FFFD, the replacement character; a high and low surrogate
side by side are joined into the character they encode.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from agentci_action._util.errors import InfraError

REPLACEMENT = "\ufffd"


class OutputError(InfraError):
    """A report, results or runner file could not be written (whole)."""


def utf8(text: str) -> bytes:
    """`text` in UTF-8, lone surrogates replaced by U+FFFD (one encode when there are none)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def encodable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD: safe for any UTF-8 stream or API."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return utf8(text).decode("utf-8")
    return text


def describe(exc: OSError) -> str:
    """An OSError as a short sentence (its strerror, never a traceback)."""
    return exc.strerror or type(exc).__name__


def write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to the file descriptor `fd`. A file-size limit makes write() take only part of it, and
    Python's buffered files then report success: the loop asks again, and the next write raises (EFBIG)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


CHUNK = 1 << 20  # characters encoded at a time by write_text


def write_text(fd: int, text: str) -> None:
    """`text` in UTF-8 (lone surrogates replaced, as utf8 does) to `fd`, encoded a chunk at a time: a results file
    of 100 MB is not held a second time as bytes. A chunk never ends between the two halves of a surrogate pair."""
    start = 0
    while start < len(text):
        end = start + CHUNK
        while end < len(text) and "\ud800" <= text[end - 1] <= "\udbff":
            end += 1  # a high surrogate goes with the character after it
        write_all(fd, utf8(text[start:end]))
        start = end


def write_file(path: str | Path, text: str | Iterable[str], *, append: bool = False, what: str = "the report") -> None:
    """Write (or append) `text`, or its pieces in turn, to `path`, creating its parent directories; OutputError when
    any of it fails."""
    target = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    try:
        if not append and not target.parent.exists():  # a file there is "Not a directory" when opening
            target.parent.mkdir(parents=True)
        fd = os.open(target, flags, 0o644)
        try:
            for piece in pieces(text):
                write_text(fd, piece)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OutputError(f"could not write {what} to {path}: {describe(exc)}") from None


def write_stream(text: str | Iterable[str], stream: TextIO | None = None, *, what: str = "the report") -> None:
    """Write `text`, or its pieces in turn, to `stream` (default standard output) whole; OutputError when the write
    fails (a full disk, a file-size limit, a closed pipe), after which standard output is silenced so nothing more
    fails at exit."""
    stream = stream or sys.stdout
    try:
        try:
            fd = stream.fileno()
        except (AttributeError, ValueError, io.UnsupportedOperation):  # io.StringIO, a captured stream
            for piece in pieces(text):
                stream.write(encodable(piece))
            return
        stream.flush()
        for piece in pieces(text):
            write_text(fd, piece)
    except OSError as exc:
        _silence(stream)
        name = "standard output" if stream in (sys.stdout, sys.__stdout__) else getattr(stream, "name", "a stream")
        raise OutputError(f"could not write {what} to {name}: {describe(exc)}") from None


def pieces(text: str | Iterable[str]) -> Iterable[str]:
    """A text given whole or in pieces (a report rendered a piece at a time), as pieces. A piece never ends between
    the two halves of a surrogate pair (each is a whole JSON value, or a report whole)."""
    return (text,) if isinstance(text, str) else text


def _silence(stream: TextIO) -> None:
    """After a failed write, point standard output at /dev/null: what it still buffers would fail again in the
    interpreter's exit flush (printing 'Exception ignored' and changing the exit code)."""
    if stream is sys.stdout:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)

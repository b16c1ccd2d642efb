"""Where text leaves the process (standard output, report and results files, the runner's files).

Every write completes or raises OutputError (exit 2) naming the destination, never a silent truncation; and text is made
encodable here, once for every output.

Never through a symbolic link: the working directory is usually a checkout a pull request controls, and a link
planted there as `agentci-results.html` (or `.agentci/`, or `recordings/<query>/`) would make a write land in its
target. Every file AgentCI writes below the working directory (reports, results, traces, caches, recordings,
baselines, history exports) goes through this module: it is opened with O_NOFOLLOW, and so is every directory of its
path below the working directory (directories above it, such as the runner's own temporary directory, are the
caller's choice); a link there is a LinkedPath error naming it (exit 2), and nothing is written.

Encodable: a lone surrogate (U+D800–U+DFFF alone; valid JSON, what JavaScript leaves when it cuts a string
mid-emoji) cannot be written as UTF-8. It becomes U+FFFD, the replacement character; a high and low surrogate
side by side are joined into the character they encode.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Iterable, Iterator
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
    """Every byte of `data` to the file descriptor `fd`.

    A file-size limit makes write() take only part of it, and Python's buffered files then report success: the loop asks
    again, and the next write raises (EFBIG).
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


CHUNK = 1 << 20  # characters encoded at a time by write_text


def write_text(fd: int, text: str) -> None:
    """`text` in UTF-8 (lone surrogates replaced, as utf8 does) to `fd`, encoded a chunk at a time.

    A results file of 100 MB is not held a second time as bytes. A chunk never ends between the two halves of a
    surrogate pair.
    """
    start = 0
    while start < len(text):
        end = start + CHUNK
        while end < len(text) and "\ud800" <= text[end - 1] <= "\udbff":
            end += 1  # a high surrogate goes with the character after it
        write_all(fd, utf8(text[start:end]))
        start = end


def write_file(path: str | Path, text: str | Iterable[str], *, append: bool = False, what: str = "the report") -> None:
    """Write (or append) `text`, or its pieces in turn, to `path`, never through a symbolic link.

    Its parent directories are created (not when appending); see the module docstring for links. OutputError when any of
    it fails.
    """
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    with failing_as(what, path, f"write {what} to {path}"):
        fd = open_no_follow(Path(path), flags, make_parents=not append)
        try:
            for piece in pieces(text):
                write_text(fd, piece)
        finally:
            os.close(fd)


@contextlib.contextmanager
def failing_as(what: str, path: str | Path, doing: str) -> Iterator[None]:
    """The block's failures as the writers report them.

    LinkedPath(what, path) for a symbolic link on the way; OutputError "could not {doing}: {reason}" for any other
    OSError.
    """
    try:
        yield
    except SymbolicLink as link:
        raise LinkedPath(what, path, link) from None
    except OSError as exc:
        raise OutputError(f"could not {doing}: {describe(exc)}") from None


class SymbolicLink(Exception):
    """A path component that is a symbolic link where none may be; str() is the path up to it."""


class LinkedPath(OutputError):
    """A file not written because a symbolic link is on its way (see the module docstring)."""

    def __init__(self, what: str, path: str | Path, link: SymbolicLink):
        super().__init__(
            f"could not write {what} to {path}: {link} is a symbolic link, and AgentCI never writes through one "
            "(remove it)"
        )


def open_no_follow(path: Path, flags: int, *, make_parents: bool = False, mode: int = 0o644) -> int:
    """A descriptor of `path` opened with `flags`, following no symbolic link.

    No link is followed at the file itself nor in a directory of its path below the working directory (missing ones are
    made with `make_parents`); SymbolicLink naming the first link met, OSError for anything else.
    """
    directory = open_directory(path.parent, make=make_parents)
    try:
        try:
            return os.open(path.name, flags | os.O_NOFOLLOW, mode, dir_fd=directory)
        except OSError:
            if path.is_symlink():
                raise SymbolicLink(str(path)) from None
            raise
    finally:
        os.close(directory)


def open_directory(path: Path, *, make: bool = False) -> int:
    """A descriptor of the directory `path`, reached without following a symbolic link below the working directory.

    Missing directories are made with `make`; SymbolicLink naming the first link met, OSError for anything else.
    Directories above the working directory (the runner's temporary directory) are the caller's choice.
    """
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        inside: tuple[str, ...] = absolute.relative_to(Path.cwd()).parts
        start = Path.cwd()
    except ValueError:  # outside the working directory: its directories are the caller's own
        inside, start = (), absolute
    if make and not inside:  # another writer may have made it, or a file is there ("Not a directory" below)
        with contextlib.suppress(FileExistsError):
            start.mkdir(parents=True)
    directory = os.open(start, os.O_RDONLY | os.O_DIRECTORY)
    walked = start
    for part in inside:
        walked = walked / part
        try:
            inner = _enter(directory, part, walked, make)
        finally:
            os.close(directory)
        directory = inner
    return directory


def _enter(directory: int, part: str, walked: Path, make: bool) -> int:
    """A descriptor of the directory `part` inside `directory`, not followed when it is a link.

    Made when missing and `make`; a writer that made it first (parallel runs of one query) is no error.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(part, flags, dir_fd=directory)
    except FileNotFoundError:
        if not make:
            raise
    except OSError:
        if walked.is_symlink():
            raise SymbolicLink(os.path.relpath(walked)) from None
        raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(part, 0o777, dir_fd=directory)
    return _enter(directory, part, walked, make=False)  # what is there now, a planted link refused as above


def make_directory(path: Path, what: str) -> Path:
    """Make the directory `path` and its missing parents, through no symbolic link below the working directory.

    LinkedPath for a link on the way, OutputError when anything else fails.
    """
    with failing_as(what, path, f"create {what} {path}"):
        os.close(open_directory(path, make=True))
    return path


def replace_file(path: Path, text: str, what: str, *, mode: int = 0o600) -> Path:
    """Write `text` to `path` whole or not at all (see publish).

    LinkedPath for a link on the way, OutputError when anything else fails.
    """
    with failing_as(what, path, f"write {what} to {path}"):
        publish(path, utf8(text), mode=mode)
    return path


def publish(path: Path, data: bytes, *, mode: int = 0o600, overwrite: bool = True, sync: bool = False) -> None:
    """Write `data` to `path` in one step, through no symbolic link.

    A new temporary file beside `path` (created exclusively, with `mode`, in a directory reached through no link:
    open_directory), fsync'ed with `sync`, then put in place: a rename (which replaces a link at `path` rather than
    following it), or without `overwrite` a hard link that fails if `path` exists (FileExistsError). SymbolicLink or
    OSError when that fails, and nothing was changed.
    """
    temporary = f".{path.name}.{secrets.token_hex(6)}.tmp"
    directory = open_directory(path.parent, make=True)
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=directory)
        try:
            os.fchmod(handle, mode)  # whatever the umask: a committed baseline is readable by all, a cache by its owner
            write_all(handle, data)
            if sync:
                os.fsync(handle)
        finally:
            os.close(handle)
        if overwrite:
            os.replace(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        else:
            os.link(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
        os.close(directory)


def replace_directory(path: Path, staged: Path, what: str) -> None:
    """Put the folder `staged`, a sibling of `path`, in the place of `path` by renames, through no symbolic link.

    The old folder is renamed aside first, the staged one renamed in, then the old one removed: `path` holds the old
    set of files or the new one, never a mix (between the two renames it is briefly absent). LinkedPath when `path` or
    a directory above it (below the working directory) is a link, OutputError when anything else fails.
    """
    with failing_as(what, path, f"replace {what} at {path}"):
        parent = open_directory(path.parent)
        try:
            aside: str | None = f".{path.name}.{secrets.token_hex(6)}.old"
            try:
                if stat.S_ISLNK(os.stat(path.name, dir_fd=parent, follow_symlinks=False).st_mode):
                    raise SymbolicLink(os.path.relpath(path))
                os.rename(path.name, str(aside), src_dir_fd=parent, dst_dir_fd=parent)
            except FileNotFoundError:
                aside = None
            os.rename(staged.name, path.name, src_dir_fd=parent, dst_dir_fd=parent)
            if aside is not None:
                shutil.rmtree(aside, dir_fd=parent)
        finally:
            os.close(parent)


def remove_directory(path: Path, what: str) -> None:
    """Remove the folder `path` and everything in it, following no symbolic link (missing: nothing to do).

    OutputError when it fails (LinkedPath for a link on the way).
    """
    with failing_as(what, path, f"remove {what} at {path}"), contextlib.suppress(FileNotFoundError):
        parent = open_directory(path.parent)
        try:
            shutil.rmtree(path.name, dir_fd=parent)
        finally:
            os.close(parent)


def write_stream(text: str | Iterable[str], stream: TextIO | None = None, *, what: str = "the report") -> None:
    """Write `text`, or its pieces in turn, to `stream` (default standard output) whole.

    OutputError when the write fails (a full disk, a file-size limit, a closed pipe), after which standard output is
    silenced so nothing more fails at exit.
    """
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
    """A text given whole or in pieces (a report rendered a piece at a time), as pieces.

    A piece never ends between the two halves of a surrogate pair (each is a whole JSON value, or a report whole).
    """
    return (text,) if isinstance(text, str) else text


def _silence(stream: TextIO) -> None:
    """After a failed write, point standard output at /dev/null.

    What it still buffers would fail again in the interpreter's exit flush (printing 'Exception ignored' and changing
    the exit code).
    """
    if stream is sys.stdout:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)

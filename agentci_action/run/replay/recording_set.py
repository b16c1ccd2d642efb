"""A query's recordings replaced as one set when they are recorded again (`record`).

Under `record` every run file of a recorded query (`run-<n>.json`, the model calls, and `run-<n>.user.json`, a
simulated user) is written into a fresh sibling folder, `<recordings>/.<query id>.<token>.new`; when every run has
ended, that folder takes the query folder's place (output.replace_directory). So no run file of an earlier recording
is left beside the new ones (a query recorded with fewer runs keeps no old run), and the folder holds the old set or
the new one, never a mix. A run kept by --resume (adaptive runs' later batches) keeps its files: they are copied into
the new set. An interruption, or a failure before the end, leaves the old set as it was and removes the new folder.

`record-missing` keeps the runs that are recorded and adds the missing ones, removing nothing: adaptive runs replay
runs beyond the spec's minimum, so a run beyond the current number is not stale. Each pull request shows which
recordings it added, changed or removed (compare/recording_changes.py).

Nothing is written through a symbolic link: a linked recordings folder, or a linked query folder, is a LinkedPath error
(exit 2) before the agent runs, and nothing is written outside the query's own folder.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterable
from pathlib import Path

from agentci_action._util.output import (
    LinkedPath,
    SymbolicLink,
    failing_as,
    make_directory,
    open_no_follow,
    publish,
    remove_directory,
    replace_directory,
)

WHAT = "the recordings"


class RecordingSet:
    """The new run files of the queries recorded afresh: `begin` before the first run, `commit` or `discard` after."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._staged: dict[str, Path] = {}
        self._lock = threading.Lock()

    def begin(self, query_ids: Iterable[str], kept: Iterable[tuple[str, int]] = ()) -> None:
        """A fresh folder for each query, with the files of the runs `kept` (query id, run) copied in.

        LinkedPath when the recordings folder or a query's folder is a symbolic link.
        """
        for query_id in sorted(set(query_ids)):
            folder = self.directory / query_id
            if folder.is_symlink():
                raise LinkedPath(WHAT, folder, SymbolicLink(os.path.relpath(folder)))
            staged = self.directory / f".{query_id}.{secrets.token_hex(4)}.new"
            with self._lock:
                self._staged[query_id] = make_directory(staged, WHAT)
        for query_id, run in kept:
            if query_id in self._staged:
                for name in (f"run-{run}.json", f"run-{run}.user.json"):
                    self._carry(query_id, name)

    def path(self, query_id: str, name: str) -> Path:
        """Where this recording writes the file `name` of the query `query_id`."""
        with self._lock:
            return self._staged[query_id] / name

    def commit(self) -> None:
        """Put each query's new set in the place of its old one."""
        with self._lock:
            staged, self._staged = self._staged, {}
        for query_id, folder in staged.items():
            replace_directory(self.directory / query_id, folder, WHAT)

    def discard(self) -> None:
        """Remove the new sets: the old ones stay as they were."""
        with self._lock:
            staged, self._staged = self._staged, {}
        for folder in staged.values():
            remove_directory(folder, WHAT)

    def _carry(self, query_id: str, name: str) -> None:
        """Copy the query's recorded file `name` into its new set (nothing when it has none)."""
        source = self.directory / query_id / name
        with failing_as(WHAT, source, f"read {source}"):
            try:
                fd = open_no_follow(source, os.O_RDONLY)
            except FileNotFoundError:
                return
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
        publish(self.path(query_id, name), data)

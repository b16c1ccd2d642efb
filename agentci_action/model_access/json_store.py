"""One JSON file of content-addressed entries, the storage of the judge's verdict cache and the embedding cache.

The file is `{"version": V, "<field>": {key: entry}}`, written sorted and indented so a change is a small
diff in review. Reading checks the version, the shape of the document and of every entry; a file that is
not valid JSON, of another version or holding a malformed entry is an InputError naming the file and line
(exit 2), with the advice to delete it. Saving merges the entries another run wrote meanwhile (ours win on
the same key) and is atomic (a new temporary file, then a rename: never written through a link planted beside
it), so an interrupted run leaves the old file.

On a pull request the file in the checkout is the pull request's to write: anyone can add a verdict under the public
key the judge will ask for. `trust_only` takes the file as it is at the base commit, and from then on an entry the
checkout adds or changes is not used (a miss: judged again with a key, else not verified), until this run writes
its own.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentci_action._util.errors import InputError
from agentci_action._util.output import replace_file

VERSION = 1


class JsonStore:
    """Thread-safe entries read once from `path` and saved back; `path=None` keeps them in memory only.

    `what` names the file in messages ("judge cache"), `field` is the document's key holding the entries,
    and `valid(entry)` says whether one entry has the expected shape.
    """

    def __init__(self, path: str | Path | None, *, what: str, field: str, valid: Callable[[Any], bool], shape: str):
        self.path = Path(path) if path else None
        self.what, self.field, self.valid, self.shape = what, field, valid, shape
        self._entries: dict[str, Any] = {}
        self._distrusted: set[str] = set()  # keys whose entry is not at the trusted base (trust_only)
        self._dirty = False
        self._lock = threading.Lock()
        if self.path and self.path.exists():
            self._entries = self._read(self.path)

    def _problem(self, line: int, message: str) -> InputError:
        return InputError.at(str(self.path), line, f"{message} (delete it to start afresh)")

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError.at(str(path), 0, f"cannot read {self.what}: {exc}") from None
        try:
            return self._entries_of(text)
        except _Malformed as exc:
            raise self._problem(exc.line, exc.message) from None

    def _entries_of(self, text: str) -> dict[str, Any]:
        """The entries of a document's text; _Malformed (line, message) when it is not a valid one."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _Malformed(exc.lineno, f"{self.what} is not valid JSON: {exc.msg}") from None
        if (
            not isinstance(document, dict)
            or document.get("version") != VERSION
            or not isinstance(document.get(self.field), dict)
        ):
            raise _Malformed(1, f"not an AgentCI {self.what} (expected version {VERSION} and a `{self.field}` object)")
        entries: dict[str, Any] = document[self.field]
        for key, entry in entries.items():
            if not self.valid(entry):
                line = text.count("\n", 0, max(text.find(json.dumps(key)), 0)) + 1
                raise _Malformed(line, f"{self.what} entry {key!r} is not {self.shape}")
        return entries

    def trust_only(self, base: bytes | None) -> int:
        """Use only the entries the file held with the same value at a pull request's base commit.

        `base`: its bytes there, None when it had no such file; a file that is not valid counts as none. How many are
        set aside.
        """
        try:
            trusted = self._entries_of(base.decode("utf-8")) if base is not None else {}
        except (_Malformed, UnicodeDecodeError):
            trusted = {}
        with self._lock:
            self._distrusted = {key for key, entry in self._entries.items() if trusted.get(key) != entry}
            return len(self._distrusted)

    def size(self) -> int:
        """How many entries the file holds (a store is never falsy: an empty one is still a store)."""
        with self._lock:
            return len(self._entries)

    def distrusted(self, key: str) -> bool:
        """Whether the checkout holds an entry for `key` that is not at the trusted base (so it is not used)."""
        with self._lock:
            return key in self._distrusted

    def get_entry(self, key: str) -> Any | None:
        with self._lock:
            return None if key in self._distrusted else self._entries.get(key)

    def put_entry(self, key: str, entry: Any) -> None:
        with self._lock:
            self._entries[key] = entry
            self._distrusted.discard(key)
            self._dirty = True

    def save(self) -> bool:
        """Write the file if anything was added (merged with what is on disk); returns whether it wrote."""
        with self._lock:
            if not (self.path and self._dirty):
                return False
            if self.path.exists():
                self._entries = {**self._read(self.path), **self._entries}
            text = (
                json.dumps(
                    {"version": VERSION, self.field: self._entries}, ensure_ascii=False, indent=1, sort_keys=True
                )
                + "\n"
            )
            replace_file(self.path, text, f"the {self.what}")
            self._dirty = False
            return True


class _Malformed(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message

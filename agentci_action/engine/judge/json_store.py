"""One JSON file of content-addressed entries, the storage of the judge's verdict cache and the embedding cache.

The file is `{"version": V, "<field>": {key: entry}}`, written sorted and indented so a change is a small
diff in review. Reading checks the version, the shape of the document and of every entry; a file that is
not valid JSON, of another version or holding a malformed entry is an InputError naming the file and line
(exit 2), with the advice to delete it. Saving merges the entries another run wrote meanwhile (ours win on
the same key) and is atomic (a new temporary file, then a rename: never written through a link planted beside
it), so an interrupted run leaves the old file.
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
        self._dirty = False
        self._lock = threading.Lock()
        if self.path and self.path.exists():
            self._entries = self._read(self.path)

    def _problem(self, line: int, message: str) -> InputError:
        return InputError.at(str(self.path), line, f"{message} (delete it to start afresh)")

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            text = path.read_text(encoding="utf-8")
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._problem(exc.lineno, f"{self.what} is not valid JSON: {exc.msg}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError.at(str(path), 0, f"cannot read {self.what}: {exc}") from None
        if (
            not isinstance(document, dict)
            or document.get("version") != VERSION
            or not isinstance(document.get(self.field), dict)
        ):
            raise self._problem(
                1, f"not an AgentCI {self.what} (expected version {VERSION} and a `{self.field}` object)"
            )
        entries: dict[str, Any] = document[self.field]
        for key, entry in entries.items():
            if not self.valid(entry):
                line = text.count("\n", 0, max(text.find(json.dumps(key)), 0)) + 1
                raise self._problem(line, f"{self.what} entry {key!r} is not {self.shape}")
        return entries

    def get_entry(self, key: str) -> Any | None:
        with self._lock:
            return self._entries.get(key)

    def put_entry(self, key: str, entry: Any) -> None:
        with self._lock:
            self._entries[key] = entry
            self._dirty = True

    def save(self) -> bool:
        """Write the file if anything was added (merged with what is on disk); returns whether it wrote."""
        with self._lock:
            if not (self.path and self._dirty):
                return False
            self.path.parent.mkdir(parents=True, exist_ok=True)
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

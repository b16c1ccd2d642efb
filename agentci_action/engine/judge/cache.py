"""A content-addressed verdict cache in one JSON file, meant to be committed (or kept with actions/cache).

key = sha256 of the JSON list [provider, model, temperature, system prompt, user prompt] (+ [slot]
when slot > 0): a rerun with the same rubric, query, answer and context finds its verdict and makes
no API call; any change to them is a new key. `slot` counts earlier ensemble slots with the same
model (models [a, b, b] → slots 0, 0, 1), so a repeated model is its own vote with its own entry
instead of reading back the first one's verdict; slot 0 keeps the plain key. The file is written sorted and indented so a changed verdict is a small diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from ...errors import InputError
from .prompt import Prompt
from .verdict import Verdict, parse_verdict

CACHE_VERSION = 1


def cache_key(provider: str, model: str, temperature: float, prompt: Prompt, slot: int = 0) -> str:
    """sha256 of [provider, model, temperature, system, user] (+ [slot] when slot > 0), hex."""
    parts: list = [provider, model, temperature, prompt.system, prompt.user] + ([slot] if slot else [])
    material = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class VerdictCache:
    """Thread-safe; `path=None` keeps verdicts in memory only."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else None
        self._entries: dict[str, dict] = {}
        self._dirty = False
        self._lock = threading.Lock()
        if self.path and self.path.exists():
            self._entries = self._read(self.path)

    @staticmethod
    def _read(path: Path) -> dict[str, dict]:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError.at(str(path), exc.lineno, f"judge cache is not valid JSON: {exc.msg} (delete it to start afresh)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError.at(str(path), 0, f"cannot read judge cache: {exc}") from None
        if not isinstance(document, dict) or document.get("version") != CACHE_VERSION or not isinstance(document.get("verdicts"), dict):
            raise InputError.at(str(path), 1, f"not an AgentCI judge cache (expected version {CACHE_VERSION} and a `verdicts` object)")
        return document["verdicts"]

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            entry = self._entries.get(key)
        return parse_verdict({k: entry[k] for k in ("score", "label", "rationale") if k in entry}) if entry else None

    def put(self, key: str, model: str, verdict: Verdict) -> None:
        with self._lock:
            self._entries[key] = {"model": model, **verdict.model_dump()}
            self._dirty = True

    def save(self) -> bool:
        """Write the file if anything was added; returns whether it wrote.

        Verdicts another run wrote to the file meanwhile are kept (ours win on the same key); the
        write is atomic (a temporary file, then a rename).
        """
        with self._lock:
            if not (self.path and self._dirty):
                return False
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                self._entries = {**self._read(self.path), **self._entries}
            text = json.dumps({"version": CACHE_VERSION, "verdicts": self._entries}, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            partial = self.path.with_name(self.path.name + ".partial")
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, self.path)
            self._dirty = False
            return True

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
from pathlib import Path
from typing import Any

from agentci_action.engine.judge.verdict import Verdict, parse_verdict
from agentci_action.model_access.json_store import JsonStore
from agentci_action.model_access.untrusted import Prompt


def cache_key(provider: str, model: str, temperature: float, prompt: Prompt, slot: int = 0) -> str:
    """sha256 of [provider, model, temperature, system, user] (+ [slot] when slot > 0), hex."""
    parts: list[Any] = [provider, model, temperature, prompt.system, prompt.user] + ([slot] if slot else [])
    material = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _verdict_of(entry: object) -> Verdict | None:
    """The verdict of a cache entry {model, score, label, rationale}; None when it is not one."""
    return (
        parse_verdict({k: entry[k] for k in ("score", "label", "rationale") if k in entry})
        if isinstance(entry, dict)
        else None
    )


class VerdictCache(JsonStore):
    """Thread-safe; `path=None` keeps verdicts in memory only. File: {"version": 1, "verdicts": {key: verdict}}."""

    def __init__(self, path: str | Path | None = None):
        super().__init__(
            path,
            what="judge cache",
            field="verdicts",
            valid=lambda entry: _verdict_of(entry) is not None,
            shape="a verdict {score, label, rationale}",
        )

    def get(self, key: str) -> Verdict | None:
        return _verdict_of(self.get_entry(key))

    def put(self, key: str, model: str, verdict: Verdict) -> None:
        self.put_entry(key, {"model": model, **verdict.model_dump()})

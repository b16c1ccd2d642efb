"""The recordings a pull request added, changed or removed against its base commit.

Re-recorded answers are never silent: each run file under runner.replay's recordings folder (`<query>/run-<n>.json`,
`<query>/run-<n>.user.json`) is compared with the same file at the base commit (compare/base_ref.py), and a changed
one says where it first differs: "call 2: system prompt line 3", "call 1: message 4", "call 1: request `model`",
"call 3: answer", "2 calls, was 3", "simulated user step 2".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentci_action.compare.base_ref import BaseRef, Snapshot, open_snapshot, repository_path

SAFE_FIELD = re.compile(r"[A-Za-z0-9_.-]{1,40}")  # a request field named in the comment (recordings are the PR's)


@dataclass(frozen=True)
class RecordingChange:
    """One run file of the recordings: `query`, `run` ("run-3", "run-3.user"), how it changed and where."""

    query: str
    run: str
    change: Literal["added", "changed", "removed"]
    detail: str = ""

    def as_json(self) -> dict[str, str]:
        return {"query": self.query, "run": self.run, "change": self.change, "detail": self.detail}


def recording_changes(folder: Path, base: BaseRef) -> list[RecordingChange]:
    """The run files under `folder` (the recordings) added, changed or removed since the commit `base` names."""
    directory = Path.cwd().resolve()
    snapshot, root = open_snapshot(base, directory)
    prefix = repository_path(str(folder.resolve()), root, directory)
    before = {path[len(prefix) + 1 :]: path for path in snapshot.files(prefix) if _run_file(path[len(prefix) + 1 :])}
    now = {
        name: path
        for path in sorted(folder.glob("*/run-*.json"))
        if _run_file(name := path.relative_to(folder).as_posix()) and path.is_file() and not path.is_symlink()
    }
    return [change for name in sorted(before.keys() | now.keys()) if (change := _compare(name, before, now, snapshot))]


def _run_file(name: str) -> bool:
    """`<query>/run-<n>.json` or `<query>/run-<n>.user.json`, in a query's folder (not a hidden one)."""
    query, _, file = name.partition("/")
    return bool(query) and not query.startswith(".") and "/" not in file and file.startswith("run-")


def _compare(name: str, before: dict[str, str], now: dict[str, Path], snapshot: Snapshot) -> RecordingChange | None:
    query, _, file = name.partition("/")
    run = file.removesuffix(".json")
    if name not in now:
        return RecordingChange(query, run, "removed")
    if name not in before:
        return RecordingChange(query, run, "added")
    old, new = snapshot.read(before[name]), now[name].read_bytes()
    if old == new:
        return None
    return RecordingChange(query, run, "changed", what_changed(old, new))


def what_changed(old: bytes, new: bytes) -> str:
    """Where a recording first differs from its earlier version (see the module docstring); "" when it cannot say."""
    try:
        before, after = json.loads(old), json.loads(new)
    except ValueError:
        return ""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ""
    if "steps" in after:  # a simulated user's recording
        steps = zip(before.get("steps") or [], after.get("steps") or [], strict=False)
        return next((f"simulated user step {k}" for k, (a, b) in enumerate(steps, 1) if a != b), "simulated user")
    calls_before, calls_after = before.get("calls") or [], after.get("calls") or []
    for index, (a, b) in enumerate(zip(calls_before, calls_after, strict=False), 1):
        if a.get("request") != b.get("request"):
            return f"call {index}: {_request_part(a.get('request') or {}, b.get('request') or {})}"
        if a != b:
            return f"call {index}: answer"
    if len(calls_before) != len(calls_after):
        return f"{len(calls_after)} calls, was {len(calls_before)}"
    return ""


def _request_part(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The first part of a request that differs: the system prompt's line, a message, or a field."""
    body_before, body_after = before.get("body"), after.get("body")
    if not isinstance(body_before, dict) or not isinstance(body_after, dict):
        return "request"
    system_before, system_after = _system(body_before), _system(body_after)
    if system_before != system_after:
        lines = zip(system_before.splitlines(), system_after.splitlines(), strict=False)
        line = next(
            (k for k, (a, b) in enumerate(lines, 1) if a != b),
            min(len(system_before.splitlines()), len(system_after.splitlines())) + 1,
        )
        return f"system prompt line {line}"
    messages_before, messages_after = body_before.get("messages") or [], body_after.get("messages") or []
    if messages_before != messages_after:
        pairs = zip(messages_before, messages_after, strict=False)
        found = next(
            (k for k, (a, b) in enumerate(pairs, 1) if a != b), min(len(messages_before), len(messages_after)) + 1
        )
        return f"message {found}"
    field = next(
        (key for key in sorted(body_before.keys() | body_after.keys()) if body_before.get(key) != body_after.get(key)),
        None,
    )
    return f"request `{field}`" if field and SAFE_FIELD.fullmatch(field) else "request"


def _system(body: dict[str, Any]) -> str:
    """A request's system prompt as text: Anthropic's `system`, or OpenAI's system (or developer) messages."""
    system = body.get("system")
    if system is None:
        system = [
            m.get("content")
            for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") in ("system", "developer")
        ]
    if isinstance(system, str):
        return system
    parts = system if isinstance(system, list) else [system]
    return "\n".join(p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in parts)

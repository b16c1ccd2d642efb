"""Why a request has no recorded answer, in a sentence a reviewer can act on.

A miss is explained against the nearest recorded request of the same run: among the recorded calls to the same
endpoint (else any), the one whose body differs in the fewest places, the one nearest in position on a tie.
Differences are named by their JSON path and, where the path has a meaning, what it is ("messages[0].content
(the system prompt) changed at line 3: recorded 'Be brief.', now 'Be thorough.'"); a multi-line string is
compared line by line, so the first changed line is the one quoted, from a little before its first changed character
(text_change: never a prefix both sides share). At most MAX_SHOWN differences are spelled
out, the rest counted.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentci_action._util.text import plural
from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest, Recording

MAX_SHOWN = 3
PREVIEW = 80
BEFORE = 30  # characters quoted before where a long line first differs
NEAREST_LIMIT = 200  # differences counted per candidate before it is known not to be the nearest
Step = str | int


@dataclass(frozen=True)
class Difference:
    path: tuple[Step, ...]
    recorded: Any
    now: Any
    kind: str  # "changed" | "added" | "removed"


def differences(recorded: Any, now: Any, path: tuple[Step, ...] = (), limit: int = NEAREST_LIMIT) -> list[Difference]:
    """The places where two JSON values differ, in document order (objects by sorted key), at most `limit`."""
    found: list[Difference] = []
    _walk(recorded, now, path, found, limit)
    return found


def _walk(recorded: Any, now: Any, path: tuple[Step, ...], found: list[Difference], limit: int) -> None:
    if len(found) >= limit or (recorded == now and type(recorded) is type(now)):
        return
    if isinstance(recorded, dict) and isinstance(now, dict):
        for name in sorted(set(recorded) | set(now)):
            if name not in now:
                found.append(Difference((*path, name), recorded[name], None, "removed"))
            elif name not in recorded:
                found.append(Difference((*path, name), None, now[name], "added"))
            else:
                _walk(recorded[name], now[name], (*path, name), found, limit)
    elif isinstance(recorded, list) and isinstance(now, list):
        for index in range(min(len(recorded), len(now))):
            _walk(recorded[index], now[index], (*path, index), found, limit)
        found.extend(Difference((*path, i), recorded[i], None, "removed") for i in range(len(now), len(recorded)))
        found.extend(Difference((*path, i), None, now[i], "added") for i in range(len(recorded), len(now)))
    else:
        found.append(Difference(path, recorded, now, "changed"))
    del found[limit:]


def nearest(request: RecordedRequest, number: int, calls: list[RecordedCall]) -> tuple[int, list[Difference]] | None:
    """(index in `calls`, differences) of the recorded call nearest to `request`, the run's call `number` (1-based).

    None when nothing was recorded.
    """
    if not calls:
        return None
    same = [i for i, c in enumerate(calls) if _endpoint(c.request) == _endpoint(request)]
    candidates = same or list(range(len(calls)))
    now = _comparable(request)
    scored = [(differences(_comparable(calls[i].request), now), i) for i in candidates]
    found, index = min(scored, key=lambda pair: (len(pair[0]), abs(pair[1] + 1 - number)))
    return index, found


def _endpoint(request: RecordedRequest) -> tuple[str, str, str]:
    return request.provider, request.method, request.path


def _comparable(request: RecordedRequest) -> dict[str, Any]:
    """What a request is keyed on, as one JSON value to compare."""
    return {"endpoint": " ".join(_endpoint(request)), "query": request.query, **request.content}


def explain(request: RecordedRequest, number: int, path: Path, recording: Recording | None) -> str:
    """Why the run's call `number` has no recorded answer in its recording at `path` (None when there is none)."""
    asked = f"call {number} ({request.method} {request.provider} {request.path})"
    if recording is None:
        return f"{asked}: not recorded yet ({path} does not exist)"
    found = nearest(request, number, recording.calls)
    if found is None:
        return f"{asked}: the recording {path} holds no calls"
    index, diffs = found
    where = f"{path}:{recording.line(index)}"
    if not diffs:
        return (
            f"{asked}: the same request was recorded, but this run asks it more often than the recorded run did "
            f"(its recorded answers are used up; nearest: call {index + 1} at {where})"
        )
    shown = "; ".join(describe(d, _comparable(request)) for d in diffs[:MAX_SHOWN])
    more = len(diffs) - MAX_SHOWN
    rest = (
        f"; and {more}{'+' if len(diffs) >= NEAREST_LIMIT else ''} more difference{'s' * (more > 1)}"
        if more > 0
        else ""
    )
    return f"{asked}: no recorded request matches; the nearest (call {index + 1} at {where}) differs: {shown}{rest}"


def describe(difference: Difference, request: dict[str, Any]) -> str:
    """One difference as a phrase: its path, what the path is, and the values."""
    name = path_text(difference.path)
    meaning = _meaning(difference.path, request)
    named = f"{name} ({meaning})" if meaning else name
    if difference.kind == "added":
        return f"{named} added: {preview(difference.now)}"
    if difference.kind == "removed":
        return f"{named} removed (was {preview(difference.recorded)})"
    recorded, now = difference.recorded, difference.now
    if isinstance(recorded, str) and isinstance(now, str):
        return f"{named} changed{text_change(recorded, now)}"
    return f"{named} changed: recorded {preview(recorded)}, now {preview(now)}"


def text_change(recorded: str, now: str) -> str:
    """Where two strings first differ, both sides around it: ' at line 3: recorded 'Be brief.', now 'Be thorough.''.

    The first differing line is named (and, where the line is cut to a window, the character) and quoted on both sides
    from a little before its first differing character, so a change at the end of a long prompt is seen, never a
    prefix both share; a change of more than that line is counted: '(2 lines added, 1 removed)'.
    """
    old_lines, new_lines = recorded.split("\n"), now.split("\n")
    line = next(
        (i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b), min(len(old_lines), len(new_lines))
    )
    old = old_lines[line] if line < len(old_lines) else None
    new = new_lines[line] if line < len(new_lines) else None
    column = _common_prefix(old or "", new or "")
    cut = max(len(old or ""), len(new or "")) > PREVIEW
    where = [f"line {line + 1}"] if len(old_lines) > 1 or len(new_lines) > 1 else []
    where += [f"character {column + 1}"] if cut else []
    added, removed = _lines_changed(old_lines, new_lines)
    more = f" ({plural(added, 'line')} added, {removed} removed)" if added + removed > 2 else ""
    return (
        f"{' at ' + ', '.join(where) if where else ''}: recorded {_window(old, column, cut)}, now {_window(new, column, cut)}"
        + more
    )


def _common_prefix(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _window(line: str | None, column: int, cut: bool) -> str:
    """The line quoted whole, or (`cut`) from BEFORE characters before `column` on, PREVIEW at most, '…' where cut."""
    if line is None:
        return "(no such line)"
    if len(line) <= PREVIEW and not cut:
        return repr(line)
    start = max(0, column - BEFORE)  # the same on both sides: they agree up to `column`
    end = start + PREVIEW
    return repr(("…" if start else "") + line[start:end] + ("…" if end < len(line) else ""))


def _lines_changed(old: list[str], new: list[str]) -> tuple[int, int]:
    """(lines added, lines removed) between two texts, a changed line counting as one of each."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    return sum(j2 - j1 for _, _, _, j1, j2 in opcodes), sum(i2 - i1 for _, i1, i2, _, _ in opcodes)


def path_text(path: tuple[Step, ...]) -> str:
    """("body", "messages", 0, "content") → messages[0].content (the request's body is the default place)."""
    steps = path[1:] if path[:1] == ("body",) else path
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "the body"


def _meaning(path: tuple[Step, ...], request: dict[str, Any]) -> str:
    """What a path of a Chat Completions, Responses or Messages body is, when it is one of the well-known parts."""
    steps = path[1:] if path[:1] == ("body",) else path
    if not steps or path[:1] != ("body",):
        return {"endpoint": "the endpoint", "query": "the URL parameters"}.get(str(path[0]) if path else "", "")
    head = steps[0]
    if head in ("system", "instructions"):
        return "the system prompt" if head == "system" else "the instructions"
    if head in ("model", "tools", "tool_choice", "temperature", "stream", "response_format"):
        return f"the {str(head).replace('_', ' ')}"
    if head in ("messages", "input") and len(steps) > 1 and isinstance(steps[1], int):
        items = request.get("body", {}).get(head)
        item = items[steps[1]] if isinstance(items, list) and steps[1] < len(items) else None
        role = item.get("role") or item.get("type") if isinstance(item, dict) else None
        return {
            "system": "the system prompt",
            "developer": "the system prompt",
            "user": "a user message",
            "assistant": "an assistant message",
            "tool": "a tool result",
            "function_call_output": "a tool result",
            "function_call": "a tool call",
        }.get(str(role), "")
    return ""


def preview(value: Any) -> str:
    """A value on one line, quoted, cut to PREVIEW characters."""
    text = value if isinstance(value, str) else repr(value) if not isinstance(value, dict | list) else _json(value)
    text = " ".join(str(text).split())
    return repr(text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)

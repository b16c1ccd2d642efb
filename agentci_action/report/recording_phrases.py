"""The "Recordings changed in this PR" section: counts and the first few entries, in markdown and on the console."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agentci_action._util.text import inline, one_line
from agentci_action.compare.recording_changes import RecordingChange

TITLE = "Recordings changed in this PR"
SHOWN = 5  # entries listed; the rest are counted


def counts(changes: Sequence[RecordingChange]) -> str:
    """'2 added · 1 changed · 1 removed' (only the kinds there are)."""
    found = Counter(change.change for change in changes)
    return " · ".join(f"{found[kind]} {kind}" for kind in ("added", "changed", "removed") if found[kind])


def entry(change: RecordingChange) -> str:
    """'order-status run-3 changed: call 2: system prompt line 3'."""
    return f"{change.query} {change.run} {change.change}" + (f": {change.detail}" if change.detail else "")


def markdown_section(changes: Sequence[RecordingChange]) -> str:
    """The section in markdown ('' when the PR changed no recording)."""
    if not changes:
        return ""
    lines = [f"### {TITLE}", "", counts(changes), ""]
    lines += [f"- {inline(entry(change), 300)}" for change in changes[:SHOWN]]
    if len(changes) > SHOWN:
        lines.append(f"- and {len(changes) - SHOWN} more")
    return "\n".join(lines) + "\n"


def console_lines(changes: Sequence[RecordingChange]) -> list[str]:
    """The section on the console (nothing when the PR changed no recording)."""
    if not changes:
        return []
    more = [f"  and {len(changes) - SHOWN} more"] if len(changes) > SHOWN else []
    return [f"{TITLE}: {counts(changes)}", *(f"  {one_line(entry(c), 300)}" for c in changes[:SHOWN]), *more]

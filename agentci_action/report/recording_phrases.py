"""The "Recordings changed in this PR" section: counts and the first few entries, in markdown and on the console."""

from __future__ import annotations

from collections.abc import Sequence

from agentci_action.compare.recording_changes import RecordingChange
from agentci_action.report.change_lists import ChangeList

TITLE = "Recordings changed in this PR"
SHOWN = 5  # entries listed; the rest are counted


def entry(change: RecordingChange) -> str:
    """'order-status run-3 changed: call 2: system prompt line 3'."""
    return f"{change.query} {change.run} {change.change}" + (f": {change.detail}" if change.detail else "")


def markdown_section(changes: Sequence[RecordingChange]) -> str:
    """The section in markdown ('' when the PR changed no recording)."""
    return section(changes).markdown()


def console_lines(changes: Sequence[RecordingChange]) -> list[str]:
    """The section on the console (nothing when the PR changed no recording)."""
    return section(changes).console_lines()


def section(changes: Sequence[RecordingChange]) -> ChangeList:
    """The section's title, kinds and entries, for each renderer."""
    return ChangeList(TITLE, [change.change for change in changes], [entry(change) for change in changes], SHOWN)

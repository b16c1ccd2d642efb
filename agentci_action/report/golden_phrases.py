"""The "Golden queries changed in this PR" section: each added, changed or removed query with its line and provenance.

So new cases never arrive unseen: a promoted query says where it came from, and an incident that it fails on its
source trace by design. Spec text is untrusted: ChangeList makes every entry inert (markdown) or one line (console).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.report.change_lists import ChangeList
from agentci_action.spec.models import Provenance

TITLE = "Golden queries changed in this PR"
SHOWN = 10  # entries listed; the rest are counted (the results JSON lists every one)
INCIDENT = "incident: fails on its source trace by design"


def entry(change: GoldenChange) -> str:
    """'refund-window added at agentci_spec.yaml:42, promoted from traces/t.json (trace 7f3a, langgraph, commit 1a2b3c4)'.

    A changed query says what changed after a colon; a removed one, the base's line ('gone removed from spec.yaml:8').
    """
    at = "from" if change.change == "removed" else "at"
    said = f"{change.query} {change.change} {at} {change.line}" + (f": {change.detail}" if change.detail else "")
    return said + (f", {provenance(change.provenance)}" if change.provenance is not None else "")


def provenance(found: Provenance) -> str:
    """'promoted from traces/t.json (trace 7f3a, langgraph, commit 1a2b3c4); incident: fails on ... by design'."""
    details = [
        *([f"trace {found.trace_id}"] if found.trace_id else []),
        *([found.framework] if found.framework else []),
        *([f"commit {found.promoted_commit[:7]}"] if found.promoted_commit else []),
    ]
    said = f"promoted from {found.source}" + (f" ({', '.join(details)})" if details else "")
    return said + (f"; {INCIDENT}" if found.incident else "")


def markdown_section(changes: Sequence[GoldenChange]) -> str:
    """The section in markdown ('' when the PR changed no golden query)."""
    return section(changes).markdown()


def console_lines(changes: Sequence[GoldenChange]) -> list[str]:
    """The section on the console (nothing when the PR changed no golden query)."""
    return section(changes).console_lines()


def section(changes: Sequence[GoldenChange]) -> ChangeList:
    """The section's title, kinds and entries, for each renderer."""
    return ChangeList(TITLE, [c.change for c in changes], [entry(c) for c in changes], SHOWN, limit=500)

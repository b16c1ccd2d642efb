"""Status icons shared by the markdown renderings (the run report and the diff)."""

from __future__ import annotations

from agentci_action.engine.results import Status

ICONS = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.ERROR: "💥", Status.SKIP: "⏭️"}

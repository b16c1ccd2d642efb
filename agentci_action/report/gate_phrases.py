"""The suite's gates in words, for every report.

One phrase per gate (its figure against its limit), and the verdict a headline leads with when one failed.
"""

from __future__ import annotations

from agentci_action._util.text import inline
from agentci_action.engine.results import GateResult, Status
from agentci_action.report.icons import ICONS

CONSOLE_MARKS = {Status.PASS: "✓", Status.FAIL: "✗", Status.WARN: "!", Status.SKIP: "-"}


def phrase(gate: GateResult) -> str:
    """'min_pass_rate: pass rate 80% (8 of 10) < min 90%', its status as the reader needs it."""
    return f"{gate.name}: {gate.message}"


def failed(gates: list[GateResult]) -> list[GateResult]:
    return [g for g in gates if g.status is Status.FAIL]


def verdict(gates: list[GateResult]) -> str:
    """'suite gate failed: <phrase>' (or 'N suite gates failed: <names>'), '' when none failed.

    With several, their phrases are on the gates' own line; says when the failure does not block (fail-on without
    `suite`).
    """
    bad = failed(gates)
    if not bad:
        return ""
    what = f"suite gate failed: {phrase(bad[0])}" if len(bad) == 1 else f"{len(bad)} suite gates failed: "
    what += ", ".join(g.name for g in bad) if len(bad) > 1 else ""
    blocking = "" if any(g.blocking for g in bad) else " (not blocking: fail-on without suite)"
    return what + blocking


def console_lines(gates: list[GateResult]) -> list[str]:
    """One line per gate: its mark, figure and limit, and where the spec sets it."""
    return [f"suite gate {CONSOLE_MARKS.get(g.status, '?')} {phrase(g)}  ({g.file}:{g.line})" for g in gates]


def markdown_line(gates: list[GateResult]) -> str:
    """'Suite gates: ✅ min_pass_rate: … · ❌ max_regressions: …' ('' without gates).

    Phrases are the engine's own figures and the spec's key names, escaped all the same (the baseline's label is a name
    the user chose).
    """
    if not gates:
        return ""
    return "Suite gates: " + " · ".join(f"{ICONS[g.status]} {inline(phrase(g), 300)}" for g in gates) + "\n"

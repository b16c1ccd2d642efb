"""Turn a measured value into a Check: pass, or the check's severity (fail or warn), or skip with the reason."""

from __future__ import annotations

from typing import Any

from agentci_action.engine.results import Check, Status
from agentci_action.spec.check_models import CHECK_INFO, CheckGroup, Severity

_STATUS = {Severity.FAIL: Status.FAIL, Severity.WARN: Status.WARN}


def failure_status(group: CheckGroup, name: str) -> Status:
    """The status a failure of this check gets: its severity, fail or warn."""
    return _STATUS[group.severity_of(name)]


def verdict(group: CheckGroup, name: str, ok: bool, message: str, data: dict[str, Any] | None = None) -> Check:
    """PASS when `ok`, else the check's severity; a heuristic's failure message starts with "heuristic:"."""
    info = CHECK_INFO[name]
    data = {**(data or {}), "severity": group.severity_of(name).value}
    if info.heuristic:
        data["heuristic"] = True
    if ok:
        return Check(name=name, status=Status.PASS, data=data)
    prefix = "heuristic: " if info.heuristic else ""
    return Check(name=name, status=failure_status(group, name), message=prefix + message, data=data)


def skipped(name: str, reason: str, data: dict[str, Any] | None = None) -> Check:
    """Not applicable: the value is N/A (None), never 0, and the reason is said."""
    return Check(
        name=name, status=Status.SKIP, message=f"{name} skipped: {reason}", data={"value": None, **(data or {})}
    )


def number(value: float) -> str:
    """Whole numbers with thousands separators, others with three significant digits (1,234 · 0.25 · 12.3)."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def bounded(
    group: CheckGroup, name: str, value: float | None, limit: float | None, what: str, missing: str = ""
) -> Check | None:
    """value ≥ limit or value ≤ limit, as the check's `bound` says ("min" or "max", CHECK_INFO), in its unit.

    None when no limit is set; skip (N/A) when the value is unknown, `missing` saying why.
    """
    if limit is None:
        return None
    info = CHECK_INFO[name]
    bound, unit = info.bound, info.unit
    assert bound is not None, f"{name} bounds no measured value"
    if value is None:
        return skipped(name, missing, {bound: limit})
    ok, beyond = (value >= limit, "<") if bound == "min" else (value <= limit, ">")
    message = f"{what} {number(value)}{unit} {beyond} {bound} {number(limit)}{unit}"
    return verdict(group, name, ok, message, {"value": value, bound: limit})

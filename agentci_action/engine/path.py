"""Layer 2, path: soft warnings, except a forbidden tool, which fails hard.

The reference sequence R for sequence similarity and the match mode is the baseline trace of the same
query when there is one, else the spec's `expected_tools`; with neither, those two checks do not run.
"""

from __future__ import annotations

from typing import Any

from ..spec.models import PathSpec
from ..trace.models import Trace
from . import metrics
from .results import Check, LayerResult, Status


def _names(items: list[str]) -> str:
    return ", ".join(items)


def reference_sequence(spec: PathSpec, baseline: Trace | None) -> tuple[list[str], str] | None:
    """(R, where R came from): the baseline's tools, else expected_tools, else None."""
    if baseline is not None:
        return baseline.tool_names, "baseline"
    if spec.expected_tools is not None:
        return list(spec.expected_tools), "expected_tools"
    return None


def _at_most(name: str, actual: float, limit: float | None, what: str) -> Check | None:
    if limit is None:
        return None
    ok = actual <= limit
    return Check(name=name, status=Status.PASS if ok else Status.WARN,
                 message="" if ok else f"{what}: {actual:g} > max {limit:g}", data={"actual": actual, "max": limit})


def _at_least(name: str, actual: float, limit: float | None, what: str, detail: str = "") -> Check | None:
    if limit is None:
        return None
    ok = actual >= limit
    return Check(name=name, status=Status.PASS if ok else Status.WARN,
                 message="" if ok else f"{what}: {actual:.2f} < min {limit:g}{detail}", data={"actual": actual, "min": limit})


def evaluate_path(spec: PathSpec | None, trace: Trace, baseline: Trace | None = None) -> LayerResult:
    """Every path assertion of `spec` on `trace`; metrics are reported even when no threshold is set."""
    used = trace.tool_names
    loops = metrics.find_loops(used)
    details: dict[str, Any] = {"tool_calls": len(used), "tools_used": list(dict.fromkeys(used)),
                               "loops_detected": sum(loop.repeats for loop in loops)}
    if spec is None:
        return LayerResult(status=Status.SKIP, details=details, messages=["no path checks"])
    checks: list[Check | None] = []

    if spec.forbidden_tools:
        violations = metrics.forbidden_violations(used, spec.forbidden_tools)
        details["forbidden_violations"] = violations
        checks.append(Check(name="forbidden_tools", status=Status.FAIL if violations else Status.PASS,
                            message=f"forbidden tools used: {_names(violations)}" if violations else "",
                            data={"violations": violations}))

    checks.append(_at_most("max_tool_calls", len(used), spec.max_tool_calls, "tool calls"))

    if spec.expected_tools is not None:
        expected, used_set = set(spec.expected_tools), set(used)
        recall = metrics.tool_recall(expected, used_set)
        precision = metrics.tool_precision(expected, used_set)
        missing = [t for t in dict.fromkeys(spec.expected_tools) if t not in used_set]
        extra = [t for t in dict.fromkeys(used) if t not in expected]
        details.update(tool_recall=recall, tool_precision=precision, tool_f1=metrics.tool_f1(precision, recall),
                       missing_tools=missing, unexpected_tools=extra)
        checks.append(_at_least("min_tool_recall", recall, spec.min_tool_recall, "tool recall",
                                f" (missing: {_names(missing)})" if missing else ""))
        checks.append(_at_least("min_tool_precision", precision, spec.min_tool_precision, "tool precision",
                                f" (unexpected: {_names(extra)})" if extra else ""))

    reference = reference_sequence(spec, baseline)
    if reference is not None:
        ref_tools, source = reference
        similarity = metrics.sequence_similarity(used, ref_tools, spec.sequence_metric)
        outcome = metrics.match(used, ref_tools, spec.match_mode)
        details.update(reference=source, sequence_metric=spec.sequence_metric.value, sequence_similarity=similarity,
                       match_mode={"mode": spec.match_mode.value, "matched": outcome.matched, "missing": outcome.missing,
                                   "unexpected": outcome.unexpected,
                                   "first_divergence": _divergence_dict(outcome.first_divergence)})
        checks.append(_at_least("min_sequence_similarity", similarity, spec.min_sequence_similarity,
                                f"sequence similarity ({spec.sequence_metric.value}) against the {source}"))
        checks.append(Check(name="match_mode", status=Status.PASS if outcome.matched else Status.WARN,
                            message="" if outcome.matched else f"match mode {spec.match_mode.value!r} against the {source} failed: {_explain(outcome)}",
                            data={"mode": spec.match_mode.value}))
    elif spec.min_sequence_similarity is not None:
        checks.append(Check(name="min_sequence_similarity", status=Status.SKIP,
                            message="sequence similarity skipped: no baseline trace and no expected_tools to compare with"))

    if spec.max_loops is not None:
        where = "; ".join(f"{lp.tool} ×{lp.count} at steps {lp.start}-{lp.start + lp.count - 1}" for lp in loops)
        details["loops"] = [{"tool": lp.tool, "start": lp.start, "count": lp.count} for lp in loops]
        check = _at_most("max_loops", details["loops_detected"], spec.max_loops, "loops")
        if check.status is Status.WARN:
            check.message += f" ({where})"
        checks.append(check)

    checks.extend(_handoff_checks(spec, trace, details))
    return LayerResult.from_checks([c for c in checks if c is not None], details)


def _divergence_dict(divergence: tuple[int, str | None, str | None] | None) -> dict | None:
    if divergence is None:
        return None
    index, expected, actual = divergence
    return {"index": index, "expected": expected, "actual": actual}


def _explain(outcome: metrics.MatchOutcome) -> str:
    parts = []
    if outcome.first_divergence is not None:
        index, expected, actual = outcome.first_divergence
        parts.append(f"first difference at step {index}: expected {expected or '(end)'}, got {actual or '(end)'}")
    if outcome.missing:
        parts.append(f"missing: {_names(outcome.missing)}")
    if outcome.unexpected:
        parts.append(f"unexpected: {_names(outcome.unexpected)}")
    return "; ".join(parts)


def _handoff_checks(spec: PathSpec, trace: Trace, details: dict[str, Any]) -> list[Check]:
    targets = [h.to for h in trace.handoffs]
    details["handoffs"] = targets
    checks = []
    if spec.expected_handoff is not None:
        ok = spec.expected_handoff in targets
        checks.append(Check(name="expected_handoff", status=Status.PASS if ok else Status.WARN,
                            message="" if ok else f"expected a handoff to {spec.expected_handoff}, got {_names(targets) or 'no handoff'}"))
    if spec.expected_handoffs_available is not None:
        allowed = set(spec.expected_handoffs_available)
        stray = list(dict.fromkeys(t for t in targets if t not in allowed))
        checks.append(Check(name="expected_handoffs_available", status=Status.WARN if stray else Status.PASS,
                            message=f"handoff to an agent not in expected_handoffs_available: {_names(stray)}" if stray else ""))
    limit = _at_most("max_handoff_count", len(targets), spec.max_handoff_count, "handoffs")
    if limit is not None:
        checks.append(limit)
    return checks

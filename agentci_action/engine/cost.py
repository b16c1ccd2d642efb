"""Layer 3, cost: soft warnings on exceedance (failures where the block's `severity` says so).

A warning blocks only when fail-on names the cost layer.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from agentci_action._util.text import usd_pair
from agentci_action.engine.results import NO_BASELINE, PASS, SKIP, Check, LayerResult
from agentci_action.engine.severity import failed
from agentci_action.spec.models import CostSpec
from agentci_action.trace.canonical import Trace

_Value = TypeVar("_Value", int, float)
NOTHING_RECORDED = "no model calls were recorded for this run"  # why a budget on a total derived from none is skipped


def cost_multiplier(cost: float | None, baseline_cost: float | None) -> float | None:
    """cost / baseline_cost; None when either is unknown or the baseline cost is 0."""
    if cost is None or not baseline_cost:
        return None
    return cost / baseline_cost


def unknown_cost_reason(trace: Trace) -> str:
    """Why a trace's cost is unknown, as the pricing step recorded it (see trace/pricing.py)."""
    reasons = trace.metadata.get("cost_unknown") or []
    return "; ".join(str(r) for r in reasons) or "the trace does not record cost"


class _Figure(NamedTuple):
    """A trace figure a cost limit bounds: the limit's check, the figure's words in messages, the unit before a value.

    A tuple: _limit unpacks it in one step (bench_hot_path).
    """

    check: str
    what: str
    unit: str = ""


_TOKENS = _Figure("max_total_tokens", "tokens")
_LLM_CALLS = _Figure("max_llm_calls", "LLM calls")
_LATENCY = _Figure("max_latency_ms", "latency (ms)")
_COST = _Figure("max_cost_usd", "cost", "$")
_TURNS = _Figure("max_turns", "turns")


def _limit(spec: CostSpec, figure: _Figure, actual: float | None, limit: float, unknown: str = "") -> Check:
    """The check of a limit the spec sets: pass, fail (by its severity) past it, skip when the trace lacks the figure."""
    name, what, unit = figure
    if actual is None:
        because = unknown or f"the trace does not record {what}"
        return Check(name, SKIP, f"{name} skipped: {because}")
    if actual <= limit:
        return Check(name, PASS, "", {"actual": actual, "max": limit})
    return failed(spec, name, f"{what}: {unit}{actual:,.6g} > max {unit}{limit:,.6g}", {"actual": actual, "max": limit})


def evaluate_cost(
    spec: CostSpec | None, trace: Trace, baseline: Trace | None = None, extra_checks: list[Check] | None = None
) -> LayerResult:
    """The cost layer: its actual figures, a check for each limit the spec sets, then `extra_checks`.

    Actual figures are always reported; `extra_checks` are this layer's checks from the query's `checks:` block, e.g.
    performance.
    """
    figures = trace.__dict__  # its fields as a dict: spec/models.py, "fields as a dict"
    cost, tokens, llm_calls, latency = (
        figures["total_cost_usd"],
        figures["total_tokens"],
        figures["total_llm_calls"],
        figures["total_duration_ms"],
    )
    details: dict[str, Any] = {"cost_usd": cost, "total_tokens": tokens, "llm_calls": llm_calls, "latency_ms": latency}
    if cost is None:
        details["cost_unknown_reason"] = unknown_cost_reason(trace)
    if baseline is not None:
        details["baseline_cost_usd"] = baseline.total_cost_usd
    if spec is None:
        if extra_checks:
            return LayerResult.from_checks(list(extra_checks), details)
        return LayerResult(status=SKIP, details=details, messages=["no cost checks"])
    checks = []  # a check for each limit the spec sets (tested here, not in a call per limit: bench_hot_path)
    unrecorded = trace.unrecorded_totals  # totals derived from no model calls: nothing recorded them
    limits = spec.__dict__  # spec/models.py, "fields as a dict"
    if (max_tokens := limits["max_total_tokens"]) is not None:
        tokens, why = _recorded("total_tokens", tokens, unrecorded)
        checks.append(_limit(spec, _TOKENS, tokens, max_tokens, why))
    if (max_llm_calls := limits["max_llm_calls"]) is not None:
        llm_calls, why = _recorded("total_llm_calls", llm_calls, unrecorded)
        checks.append(_limit(spec, _LLM_CALLS, llm_calls, max_llm_calls, why))
    if (max_latency := limits["max_latency_ms"]) is not None:
        checks.append(_limit(spec, _LATENCY, latency, max_latency))
    if (max_cost := limits["max_cost_usd"]) is not None:
        cost, why = _recorded("total_cost_usd", cost, unrecorded, details.get("cost_unknown_reason", ""))
        checks.append(_limit(spec, _COST, cost, max_cost, why))
    if (max_turns := limits["max_turns"]) is not None:
        checks.append(_limit(spec, _TURNS, len(trace.turns) or 1, max_turns))
    if (max_multiplier := limits["max_cost_multiplier"]) is not None:
        checks.append(_multiplier_check(spec, max_multiplier, trace, baseline, details, unrecorded))
    if extra_checks:
        checks += extra_checks
    return LayerResult.from_checks(checks, details)


def _recorded(
    name: str, value: _Value | None, unrecorded: frozenset[str], unknown: str = ""
) -> tuple[_Value | None, str]:
    """A total as a limit judges it, and why it is unknown: None, "nothing recorded", when derived from no model calls."""
    return (None, NOTHING_RECORDED) if name in unrecorded else (value, unknown)


def _multiplier_check(
    spec: CostSpec,
    limit: float,
    trace: Trace,
    baseline: Trace | None,
    details: dict[str, Any],
    unrecorded_totals: frozenset[str],
) -> Check:
    """cost / baseline cost against `limit`; `unrecorded_totals` is the trace's, as evaluate_cost read it."""
    if baseline is None:  # said once per run, not per query (RunResult.without_baseline): no message here
        return Check(name="max_cost_multiplier", status=SKIP, data={"reason": NO_BASELINE})
    unrecorded = "total_cost_usd" in unrecorded_totals  # a cost derived from no model calls
    cost, baseline_cost = None if unrecorded else details["cost_usd"], details["baseline_cost_usd"]  # read once
    multiplier = cost_multiplier(cost, baseline_cost)
    if multiplier is None:
        if unrecorded:
            reason = NOTHING_RECORDED
        elif baseline_cost == 0:
            reason = "the baseline cost is 0"
        elif cost is None:
            reason = f"the cost is unknown ({unknown_cost_reason(trace)})"
        else:
            reason = f"the baseline cost is unknown ({unknown_cost_reason(baseline)})"
        return Check(name="max_cost_multiplier", status=SKIP, message=f"cost multiplier skipped: {reason}")
    details["cost_multiplier"] = multiplier
    data = {"actual": multiplier, "max": limit}
    if multiplier <= limit:
        return Check("max_cost_multiplier", PASS, "", data)
    now, before = usd_pair(cost or 0.0, baseline_cost or 0.0)
    return failed(
        spec, "max_cost_multiplier", f"cost {multiplier:.2f}× the baseline (max {limit:g}×): {now} vs {before}", data
    )

"""Speed from the trace's LLM calls (cost layer): time to first token, token latency, throughput.

Only calls that report `duration_ms` count towards token latency and throughput; with none, both are None (N/A).
"""

from __future__ import annotations

from agentci_action.engine.checks._measured import bounded
from agentci_action.engine.results import Check
from agentci_action.spec.check_models import PerformanceChecks
from agentci_action.trace.canonical import LLMCall, Trace

NO_TIMING = "no LLM call in the trace reports duration_ms"


def ttft_ms(calls: list[LLMCall]) -> float | None:
    """The slowest time to first token among the calls that report one; None when none does."""
    reported = [call.ttft_ms for call in calls if call.ttft_ms is not None]
    return max(reported) if reported else None


def _timed(calls: list[LLMCall]) -> tuple[float, int] | None:
    """(Σ duration_ms, Σ output_tokens) over the calls that report a duration; None when none does."""
    timed = [call for call in calls if call.duration_ms is not None]
    if not timed:
        return None
    return sum(call.duration_ms or 0.0 for call in timed), sum(call.output_tokens for call in timed)


def token_latency_ms(duration_ms: float, output_tokens: int) -> float:
    """duration_ms / output_tokens (ms per token); 0.0 when no token was produced."""
    return duration_ms / output_tokens if output_tokens > 0 else 0.0


def throughput(output_tokens: int, duration_ms: float) -> float:
    """output_tokens / (duration_ms / 1000) (tokens per second); 0.0 when the duration is 0 (a measurement error)."""
    return output_tokens / (duration_ms / 1000) if duration_ms > 0 else 0.0


def evaluate(group: PerformanceChecks, trace: Trace) -> list[Check]:
    timed = _timed(trace.llm_calls)
    latency = token_latency_ms(*timed) if timed else None
    speed = throughput(timed[1], timed[0]) if timed else None
    checks = [
        bounded(
            group,
            "max_ttft_ms",
            ttft_ms(trace.llm_calls),
            group.max_ttft_ms,
            "time to first token",
            missing="no LLM call in the trace reports ttft_ms",
        ),
        bounded(
            group,
            "max_token_latency_ms",
            latency,
            group.max_token_latency_ms,
            "token latency",
            missing=NO_TIMING,
        ),
        bounded(group, "min_throughput", speed, group.min_throughput, "throughput", missing=NO_TIMING),
    ]
    return [c for c in checks if c is not None]

"""Prometheus text exposition (format 0.0.4).

per-query gauges labelled {agent, query}, then suite gauges, then the spec's `suite:` gates labelled {agent, gate} when
it sets any.

Per-query values are means over the query's runs (the value itself for one run); a metric the run did
not measure (e.g. recall without expected_tools) has no sample. Label values escape backslash, double
quote and newline as the format requires; +Inf is written for an infinite value.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from agentci_action.engine.results import GateResult, QueryResult, RunResult, Status, Summary

# name → (help, value of a query result)
QUERY_METRICS: dict[str, tuple[str, Callable[[QueryResult], float | None]]] = {
    "agentci_correctness_pass": (
        "1 when the correctness layer did not fail (across runs: the min_pass_rate gate) or had no checks, else 0.",
        lambda r: float(r.correctness.status in (Status.PASS, Status.SKIP)),
    ),
    "agentci_tool_recall": ("Tool recall against expected_tools, mean over runs.", lambda r: r.figure("tool_recall")),
    "agentci_tool_precision": (
        "Tool precision against expected_tools, mean over runs.",
        lambda r: r.figure("tool_precision"),
    ),
    "agentci_cost_usd": ("Cost of one run in US dollars, mean over runs.", lambda r: r.figure("cost_usd")),
    "agentci_latency_ms": ("Latency of one run in milliseconds, mean over runs.", lambda r: r.figure("latency_ms")),
    "agentci_total_tokens": ("Tokens of one run, mean over runs.", lambda r: r.figure("total_tokens")),
    "agentci_pass_rate": ("Passed runs / runs.", lambda r: r.reliability.pass_rate),
    "agentci_score": (
        "Weighted score 0-100 (tool accuracy, output quality, sequence), mean over runs.",
        lambda r: r.score.value,
    ),
}

SUITE_METRICS: dict[str, tuple[str, Callable[[Summary], float]]] = {
    "agentci_suite_pass_rate": ("Passed runs / runs over the suite.", lambda s: s.pass_rate),
    "agentci_suite_composite_score": (
        "(pass_rate * pass_weight + mean score / 100 * impl_weight) / (pass_weight + impl_weight) "
        "over the suite; weights from the spec's composite (default 0.5 / 0.5).",
        lambda s: s.composite_score,
    ),
    "agentci_suite_cost_usd": ("Total cost of every run in US dollars (known costs).", lambda s: s.cost_usd),
    "agentci_suite_failed_queries": ("Queries that failed.", lambda s: s.failed),
}


# name → (help, value of a gate); a gate whose figure was unknown (it skipped) has no pass or value sample
GATE_METRICS: dict[str, tuple[str, Callable[[GateResult], float | None]]] = {
    "agentci_gate_pass": (
        "1 when the suite gate held, 0 when it failed; no sample when its figure was unknown.",
        lambda g: None if g.status is Status.SKIP else float(g.status is Status.PASS),
    ),
    "agentci_gate_value": ("The suite's figure the gate judged (e.g. the pass rate).", lambda g: g.actual),
    "agentci_gate_limit": ("The gate's limit in the spec.", lambda g: g.limit),
}


def escape_label(value: str) -> str:
    """Backslash → \\\\, double quote → \\", newline → \\n (the exposition format's only escapes)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_value(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{key}="{escape_label(value)}"' for key, value in labels.items()) + "}"


def _family(name: str, help_text: str, samples: list[tuple[dict[str, str], float]]) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
    lines.extend(f"{name}{_labels(labels)} {format_value(value)}" for labels, value in samples)
    return lines


def render(run: RunResult) -> str:
    lines: list[str] = []
    for name, (help_text, value_of) in QUERY_METRICS.items():
        samples = [
            ({"agent": run.agent, "query": r.id}, value) for r in run.results if (value := value_of(r)) is not None
        ]
        lines.extend(_family(name, help_text, samples))
    for name, (help_text, suite_value_of) in SUITE_METRICS.items():
        lines.extend(_family(name, help_text, [({"agent": run.agent}, suite_value_of(run.summary))]))
    for name, (help_text, gate_value_of) in GATE_METRICS.items() if run.gates else ():
        samples = [
            ({"agent": run.agent, "gate": g.name}, value) for g in run.gates if (value := gate_value_of(g)) is not None
        ]
        lines.extend(_family(name, help_text, samples))
    return "\n".join(lines) + "\n"

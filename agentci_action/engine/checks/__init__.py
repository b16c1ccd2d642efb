"""The `checks:` block of a query, evaluated into the three layers.

`evaluate_checks` runs every group the query sets and files each Check under its layer (spec.checks.CHECK_INFO);
the layer evaluators merge them with their own checks. Values found by the leakage check are masked in every
layer's messages and data by `mask_layers`, so no renderer ever sees them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentci_action.engine.checks import agent, answer, performance, rag, safety, validity
from agentci_action.engine.checks.answer import Embedder
from agentci_action.engine.checks.leakage import Leak, redact_data
from agentci_action.engine.correctness import Judge
from agentci_action.engine.results import Check, LayerResult
from agentci_action.spec.check_models import CHECK_INFO
from agentci_action.spec.models import QuerySpec
from agentci_action.trace.canonical import Trace


@dataclass
class QueryChecks:
    """The checks of one run of one query, by layer, and the leaked values to mask."""

    by_layer: dict[str, list[Check]] = field(default_factory=lambda: {"correctness": [], "path": [], "cost": []})
    leaks: list[Leak] = field(default_factory=list)


# What evaluate_checks gives a query without a `checks:` block (most queries): one shared instance, never filled.
NO_CHECKS = QueryChecks()


def evaluate_checks(
    query: QuerySpec, trace: Trace, judge: Judge | None = None, embedder: Embedder | None = None
) -> QueryChecks:
    groups = query.checks
    if groups is None:  # most queries
        return NO_CHECKS
    result = QueryChecks()
    checks: list[Check] = []
    if groups.answer:
        checks += answer.evaluate(groups.answer, trace.final_answer, query.reference_answer, embedder)
    if groups.rag:
        checks += rag.evaluate(groups.rag, trace, query.expected_sources)
    if groups.safety:
        safety_checks, result.leaks = safety.evaluate(groups.safety, query, trace, judge)
        checks += safety_checks
    if groups.agent:
        checks += agent.evaluate(groups.agent, trace)
    if groups.performance:
        checks += performance.evaluate(groups.performance, trace)
    if groups.validity:
        checks += validity.evaluate(groups.validity, trace.final_answer)
    for check in checks:
        result.by_layer[CHECK_INFO[check.name].layer].append(check)
    return result


def mask_layers(layers: dict[str, LayerResult], leaks: list[Leak]) -> dict[str, LayerResult]:
    """Every string in every layer (messages, details, check messages and data) with the leaked values masked."""
    if not leaks:
        return layers
    return {
        name: LayerResult.model_validate(redact_data(layer.model_dump(mode="json"), leaks))
        for name, layer in layers.items()
    }

"""Advice on a valid spec: settings that are allowed but rarely what the author meant.

`agentci validate` prints them as warnings (exit 0) and an evaluation adds them to the run's warnings (`file:line:
message`).
"""

from __future__ import annotations

from agentci_action._util.errors import Problem
from agentci_action.spec.models import AgentCISpec

SUGGESTED_RUNS = "runs: 5, or adaptive runs: {min: 3, max: 20}"


def advice(spec: AgentCISpec) -> list[Problem]:
    """A warning for each simulated user's conversation that runs once.

    An LLM plays the user, so one run is one sample of a stochastic conversation, and its verdict cannot tell a
    regression from noise.
    """
    return [
        Problem(
            query.file,
            query.line,
            f"query {query.key!r} has a simulated user but runs once: its conversation is stochastic, so "
            f"one run is one sample; set {SUGGESTED_RUNS} (docs/guides/conversations.md#simulated-users)",
        )
        for query in spec.queries
        if query.simulated_user is not None and query.max_runs == 1
    ]

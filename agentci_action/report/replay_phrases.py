"""Under runner.replay, how the agent's model calls were answered, as phrases for the console and markdown."""

from __future__ import annotations

from agentci_action._util.text import model_calls_phrase
from agentci_action.engine.results import ModelCalls

# The cost figures price every call's tokens; what was paid is the live calls' alone.
COST_NOTE = "the cost figures price replayed calls too; only live calls are paid"


def model_calls(calls: ModelCalls) -> str:
    """e.g. "12 replayed · 1 live · $0.0021 paid · 1 call with no recorded answer"."""
    return model_calls_phrase(calls.replayed, calls.live, calls.paid_usd, calls.missed)

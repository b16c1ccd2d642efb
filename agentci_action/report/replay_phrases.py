"""Under runner.replay, how the agent's model calls were answered, as phrases for the console and markdown."""

from __future__ import annotations

from agentci_action._util.text import plural, usd
from agentci_action.engine.results import ModelCalls

# The cost figures price every call's tokens; what was paid is the live calls' alone.
COST_NOTE = "the cost figures price replayed calls too; only live calls are paid"


def model_calls(calls: ModelCalls) -> str:
    """e.g. "12 replayed · 1 live · $0.0021 paid · 1 with no recorded answer"."""
    paid = (
        "cost unknown"
        if calls.paid_usd is None
        else f"{usd(calls.paid_usd)} paid"
        if calls.paid_usd
        else "nothing paid"
    )
    missed = f" · {plural(calls.missed, 'call')} with no recorded answer" if calls.missed else ""
    return f"{calls.replayed:,} replayed · {calls.live:,} live · {paid}{missed}"

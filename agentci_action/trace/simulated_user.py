"""What a simulated user said, shared by the stages that play it, run it, and read how it ended.

The stage that plays it (run/user_simulator.py), the stage that runs the conversation and records it (run/), and the
evaluation that reads how it ended from the trace.

A conversation with a simulated user carries `metadata.agentci_user` (USER_KEY): how it ended (`ended`:
goal_reached or gave_up, as the user said; stop_when, the spec's condition held on the agent's reply; max_turns,
the turn budget ran out; spend_cap, the cap on AgentCI's own model calls stopped the simulator), why (`reason`, the
simulator's words or the rule that stopped it), after how many `turns`, the simulator's `model`, and what its calls
took (requests, replayed, input_tokens, output_tokens, cost_usd; cost_usd null when a model has no known price).
Each turn's `query` is the user's message of that turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from agentci_action.spec.models import SimulatedUserSpec

USER_KEY = "agentci_user"


@dataclass(frozen=True)
class UserReply:
    """The simulated user's next move.

    Its message and status (continue, goal_reached, gave_up), why, and what producing it took (HTTP requests, failed
    attempts included; tokens; USD, None when unpriced). `replayed`: read from a recording, not asked of a model.
    """

    message: str
    status: Literal["continue", "goal_reached", "gave_up"]
    reason: str
    model: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    replayed: bool = False


class UserUnavailable(Exception):
    """No message could be had.

    `kind`: no_key, spend_cap, infra (the provider failed after its retries), malformed (twice no valid reply).
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


# The simulated user's next move, given its spec and the conversation so far ({role: user|assistant, content}).
NextUser = Callable[[SimulatedUserSpec, Sequence[Mapping[str, str]]], UserReply]

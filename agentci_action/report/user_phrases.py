"""How reports say what the simulated users did.

How each conversation ended, and what their own model calls took (kept apart from the agent's cost, as the judge's spend
is).
"""

from __future__ import annotations

from collections import Counter

from agentci_action._util.text import plural
from agentci_action.engine.results import QueryResult, RunResult

ENDING_WORDS = {
    "goal_reached": "goal reached",
    "stop_when": "stop_when held",
    "gave_up": "gave up",
    "max_turns": "turn budget ran out",
    "spend_cap": "cut short by the spend cap",
}


def endings(result: QueryResult) -> str | None:
    """'simulated user: goal reached in 2 of 3 runs · gave up in 1' (one run: 'simulated user: goal reached').

    None for a query without a simulated user.
    """
    ended = Counter(
        str(check.data.get("ended"))
        for check in result.correctness.checks
        if check.name == "simulated_user" and "ended" in check.data
    )
    if not ended:
        return None
    runs = sum(ended.values())
    parts = [
        ENDING_WORDS.get(name, name) + (f" in {count} of {runs} runs" if runs > 1 else "")
        for name, count in ended.most_common()
    ]
    return "simulated user: " + " · ".join(parts)


def spend(run: RunResult) -> str | None:
    """The simulated users' own model calls over the run; None when no conversation had one."""
    usage = run.summary.simulated_users
    if usage is None:
        return None
    cost = f"${usage.cost_usd:.4f}" + (
        f" (+{plural(usage.cost_unknown, 'conversation')} of unknown price)" if usage.cost_unknown else ""
    )
    return (
        f"simulated users, not in the agent's cost: {plural(usage.requests, 'request')} · "
        f"{plural(usage.cache_hits, 'message')} replayed from their recordings · "
        f"{plural(usage.input_tokens + usage.output_tokens, 'token')} · {cost}"
    )

"""A conversation with a simulated user, driven turn by turn.

The user's message (the spec's opening, then the simulator's, replayed from its recording while the conversation follows
it), the agent's reply, and again, until the user says the goal is reached or gives up, the spec's `stop_when` holds on
the agent's reply, or the turn budget (QuerySpec.simulated_turns) is spent. After the last turn the user is asked once
more, so a goal reached on the last turn is heard (that message is not sent). The cap on AgentCI's own model calls ends
the conversation where it is reached: its turns so far are kept, marked `spend_cap`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agentci_action._util.patterns import PatternTimeout, found
from agentci_action._util.text import one_line
from agentci_action.run.jobs import Job, RunFailure, new_session_id, take_turn
from agentci_action.run.replay.user_recordings import UserPlayer
from agentci_action.spec.models import UserStopWhen
from agentci_action.trace.canonical import Trace
from agentci_action.trace.simulated_user import USER_KEY, UserReply, UserUnavailable


def stop_when_met(stop: UserStopWhen | None, reply: Trace) -> str | None:
    """Which of `stop`'s conditions the agent's reply meets (a sentence for the trace), or None.

    `answer_matches` is searched as every spec regex on agent output is (_util/patterns.py, bounded in time): a pattern
    that gives up fails the run, naming it.
    """
    if stop is None:
        return None
    if stop.tool_called:
        called = next((name for name in reply.tool_sequence if name in stop.tool_called), None)
        if called is not None:
            return f"stop_when.tool_called: the agent called {called}"
    if stop.answer_matches is None:
        return None
    try:
        matched = found(stop.answer_matches, reply.final_answer)
    except PatternTimeout as exc:
        raise RunFailure(f"stop_when.answer_matches {stop.answer_matches!r} {exc}") from None
    if matched:
        return f"stop_when.answer_matches: the agent's reply matches {stop.answer_matches!r}"
    return None


def converse(job: Job, attempt: Callable[[Job], Trace], player: UserPlayer) -> Trace:
    """The conversation's trace.

    Its turns (each turn's `query` the user's message) and `metadata.agentci_user` (trace/simulated_user.py). A turn
    that fails raises its failure, named by its turn.
    """
    user = job.query.simulated_user
    assert user is not None, "converse with a query without a simulated user"
    budget = job.query.simulated_turns
    session_id = new_session_id(job)
    replies: list[Trace] = []
    history: list[dict[str, str]] = []
    asked: list[UserReply] = []
    ended, reason = "max_turns", f"the turn budget of {budget} turns ran out before the user's goal was reached"
    while True:
        if not replies and user.opening:
            message = player.opening(user.opening)
        else:
            try:
                said = player.next(history)
            except UserUnavailable as exc:  # the spend cap: the conversation ends where it is
                ended, reason = exc.kind, exc.message
                break
            asked.append(said)
            if said.status != "continue":
                ended, reason = said.status, said.reason
                break
            if len(replies) == budget:
                break  # asked after the last turn: the goal was not reached in the budget
            message = said.message
        step = replace(job, turn=len(replies) + 1, history=tuple(history), session_id=session_id, said=message)
        reply = take_turn(attempt, step)
        replies.append(reply)
        history += [{"role": "user", "content": message}, {"role": "assistant", "content": reply.final_answer}]
        met = stop_when_met(user.stop_when, reply)
        if met is not None:
            ended, reason = "stop_when", met
            break
    if not replies:
        raise RunFailure(
            f"the simulated user ended the conversation before its first message ({ended}: {one_line(reason, 200)})"
        )
    player.save()
    conversation = Trace(
        id=job.query.key,
        query=job.query.query,
        run=job.run,
        turns=replies,
        metadata={USER_KEY: _ending(ended, reason, len(replies), asked)},
    ).with_derived_totals()
    conversation._source = replies[0].source
    return conversation


def _ending(ended: str, reason: str, turns: int, asked: list[UserReply]) -> dict[str, Any]:
    """metadata.agentci_user: how the conversation ended, and what the simulator's replies took.

    Summed; the cost unknown when one reply's was.
    """
    costs = [reply.cost_usd for reply in asked if not reply.replayed]
    return {
        "ended": ended,
        "reason": reason,
        "turns": turns,
        "model": next((reply.model for reply in reversed(asked) if reply.model), ""),
        "requests": sum(reply.requests for reply in asked),
        "replayed": sum(reply.replayed for reply in asked),
        "input_tokens": sum(reply.input_tokens for reply in asked),
        "output_tokens": sum(reply.output_tokens for reply in asked),
        "cost_usd": None if None in costs else sum(c or 0.0 for c in costs),
    }

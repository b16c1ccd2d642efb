"""What one run of the agent is given, and how it can fail."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentci_action.spec.models import QuerySpec

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace


@dataclass(frozen=True)
class Job:
    """One run of the agent on one query, or on one turn of a conversation (`turn` from 1; 0 for a single query).

    What it reads on stdin (or as arguments) and in AGENTCI_* variables. A turn carries the conversation so far
    (`history`: the user's and the agent's messages, {role, content}) and the conversation's `session_id`, so an agent
    may either read the history resent on every turn or keep its own state under the session id. A simulated user's turn
    carries what the user `said`.
    """

    query: QuerySpec
    run: int
    metadata: dict[str, Any] = field(default_factory=dict)
    turn: int = 0
    history: tuple[dict[str, str], ...] = ()
    session_id: str = ""
    said: str = ""  # a simulated user's message of this turn

    @property
    def label(self) -> str:
        """How messages name the run: the query's id, the run, and the turn of a conversation."""
        return f"query {self.query.key!r} run {self.run}" + (f" turn {self.turn}" if self.turn else "")

    @property
    def key(self) -> tuple[str, int, int]:
        """(query id, run, turn): how captured spans are attributed to this job."""
        return self.query.key, self.run, self.turn

    @property
    def message(self) -> str:
        """What the agent is asked: the query, or the user's message of this turn (scripted, or simulated)."""
        if self.said:
            return self.said
        return self.query.turns[self.turn - 1].user if self.turn and self.query.turns else self.query.query

    def values(self) -> dict[str, Any]:
        """Everything but the message: id, run, tags, metadata, and a turn's number, history and session id."""
        values: dict[str, Any] = {
            "id": self.query.key,
            "run": self.run,
            "tags": list(self.query.tags),
            "metadata": self.metadata,
        }
        if self.turn:
            values.update(turn=self.turn, history=[dict(m) for m in self.history], session_id=self.session_id)
        return values

    def payload(self) -> dict[str, Any]:
        """The JSON object a command reads on stdin."""
        return {"query": self.message, **self.values()}

    def environment(self) -> dict[str, str]:
        variables = {"AGENTCI_QUERY_ID": self.query.key, "AGENTCI_QUERY": self.message, "AGENTCI_RUN": str(self.run)}
        if self.turn:
            variables.update(AGENTCI_TURN=str(self.turn), AGENTCI_SESSION_ID=self.session_id)
        return variables


@dataclass
class Finished:
    """What a run left behind: a command's output streams and exit code, or a callable's return value."""

    trace_file: Path
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    value: Any = None


class RunFailure(Exception):
    """A run that produced no trace; `infra` failures (timeouts, rate limits, EX_TEMPFAIL) are retried."""

    infra = False

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def new_session_id(job: Job) -> str:
    """A conversation's session id: its query, its run and a random suffix, new for every run."""
    return f"{job.query.key}.run{job.run}.{uuid.uuid4().hex[:8]}"


def take_turn(attempt: Callable[[Job], Trace], step: Job) -> Trace:
    """`attempt` on one turn of a conversation (`step.turn`); a failure is named by its turn."""
    try:
        return attempt(step)
    except RunFailure as failure:
        failure.message = f"turn {step.turn}: {failure.message}"
        raise


class InfraFailure(RunFailure):
    infra = True

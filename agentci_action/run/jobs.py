"""What one run of the agent is given, and how it can fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentci_action.spec.models import QuerySpec


@dataclass(frozen=True)
class Job:
    """One run of the agent on one query: what it reads on stdin (or as arguments) and in AGENTCI_* variables."""

    query: QuerySpec
    run: int
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """How messages name the run: the query's id, and the run when there are several."""
        return f"query {self.query.key!r} run {self.run}"

    def payload(self) -> dict[str, Any]:
        """The JSON object a command reads on stdin."""
        return {
            "id": self.query.key,
            "query": self.query.query,
            "run": self.run,
            "tags": list(self.query.tags),
            "metadata": self.metadata,
        }

    def environment(self) -> dict[str, str]:
        return {"AGENTCI_QUERY_ID": self.query.key, "AGENTCI_QUERY": self.query.query, "AGENTCI_RUN": str(self.run)}


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


class InfraFailure(RunFailure):
    infra = True

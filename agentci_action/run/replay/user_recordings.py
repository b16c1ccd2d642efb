"""Recordings of simulated users.

What the user said at each step of one run of a conversation, beside the model calls' recordings (`<recordings>/<query
id>/run-<n>.user.json`), so a rerun meets the same user without a key.

    {
      "version": 1,
      "query": "refund-chat",
      "run": 0,
      "user": "sha256:…",             the simulated_user block it was recorded for (persona, goal, facts, model...)
      "steps": [
        {"agent": null, "message": "Hi, I'd like a refund.", "status": "continue", "reason": "…", "model": "…"},
        {"agent": "Which order?", "message": "Order 1042.", "status": "continue", "reason": "…", "model": "…"},
        {"agent": "Refunded.", "message": "", "status": "goal_reached", "reason": "…", "model": "…"}
      ]
    }

Step k answers the agent's k-th reply (`agent`, null before the first). A step is replayed only while every agent
reply so far equals the recorded one (runner.replay's volatile_patterns masked out of both): the user answered that
very conversation. The first reply that differs is a divergence, and so is a recording made for another
simulated_user block. Then, by mode (runner.replay.mode, `--replay`; record-missing when neither is set):
  replay           the run fails, saying at which turn and how the reply differs (no model is called);
  record-missing   the simulator is asked from there on (needs its key), and the recording is rewritten;
  record           the simulator is asked at every step and the recording rewritten.
A recording is written only when a step went live, whole or not at all, after the conversation ends.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentci_action._util.errors import InputError
from agentci_action._util.text import one_line
from agentci_action.run.jobs import InfraFailure, Job, RunFailure
from agentci_action.run.replay.recording_set import RecordingSet
from agentci_action.run.replay.recordings import write
from agentci_action.spec.models import SimulatedUserSpec
from agentci_action.spec.replay_modes import ReplayMode
from agentci_action.trace.simulated_user import NextUser, UserReply, UserUnavailable

FORMAT_VERSION = 1
DEFAULT_MODE = ReplayMode.RECORD_MISSING
HINT = "record it with `agentci record` and the simulator's key (the judge's)"


def user_identity(user: SimulatedUserSpec) -> str:
    """'sha256:' + 16 hex digits over the simulated_user block as sorted JSON: a recording answers this user only."""
    text = json.dumps(user.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class UserRecordings:
    """Where a run's simulated users are recorded, and how (`mode`).

    `volatile`: patterns masked out of the agent's replies before they are compared.
    """

    directory: Path
    mode: ReplayMode = DEFAULT_MODE
    volatile: tuple[re.Pattern[str], ...] = ()
    fresh: RecordingSet | None = None  # under `record`: the model calls' new sets (recording_set.py)
    _read: dict[Path, dict[str, Any] | None] = field(default_factory=dict, init=False, repr=False)

    def path(self, job: Job) -> Path:
        """The run's recording: in the query's new set when its model calls are recorded afresh (`fresh`)."""
        name = f"run-{job.run}.user.json"
        return self.fresh.path(job.query.key, name) if self.fresh else self.directory / job.query.key / name

    def check(self, jobs: list[Job]) -> None:
        """Read every recording the runs may replay, so a broken one fails before anything runs.

        It is an InputError at its file and line.
        """
        for job in jobs:
            path = self.path(job)
            if job.query.simulated_user is not None and self.mode != ReplayMode.RECORD:
                self._read[path] = read(path) if path.is_file() else None

    def player(self, job: Job, live: NextUser | None) -> UserPlayer:
        """The user of one run of a conversation.

        Recorded steps while the conversation follows them, then `live` (the simulator; None when none could be made).
        """
        path = self.path(job)
        steps: list[dict[str, Any]] = []
        why = f"the simulated user has no recording ({path})"
        recorded = self._read.get(path)
        if recorded is not None:
            assert job.query.simulated_user is not None, "a player for a query without a simulated user"
            if recorded.get("user") == user_identity(job.query.simulated_user):
                steps = recorded["steps"]
                why = ""
            else:
                why = (
                    "the simulated user's recording was made for another simulated_user block (its persona, goal, "
                    f"facts or model changed; {path})"
                )
        return UserPlayer(job, path, self.mode, self.volatile, live, steps, why)


@dataclass
class UserPlayer:
    """One conversation's simulated user (see the module docstring)."""

    job: Job
    path: Path
    mode: ReplayMode
    volatile: tuple[re.Pattern[str], ...]
    live: NextUser | None
    recorded: list[dict[str, Any]]
    diverged: str  # why the recording cannot be followed any further ("" while it can)
    steps: list[dict[str, Any]] = field(default_factory=list)
    went_live: bool = False

    def opening(self, message: str) -> str:
        """The spec's opening message, taken as the first step (no model is asked)."""
        self.steps.append({"agent": None, "message": message, "status": "continue", "reason": "opening", "model": ""})
        return message

    def next(self, history: Sequence[Mapping[str, str]]) -> UserReply:
        """The user's move after the conversation so far.

        Recorded while it matches, else live (or, under replay, a RunFailure that says where the conversation left the
        recording).
        """
        user = self.job.query.simulated_user
        assert user is not None, "a player for a query without a simulated user"
        index = len(self.steps)
        agent = self._masked(history[-1]["content"]) if history else None
        if not self.diverged:
            if index >= len(self.recorded):
                self.diverged = f"the simulated user's recording ends before this turn ({self.path})"
            elif self.recorded[index].get("agent") != agent:
                before = self.recorded[index].get("agent")
                self.diverged = (
                    f"the agent's reply to turn {index} differs from the one the simulated user's recording answers "
                    f"(recorded {one_line(str(before), 120)!r}, now {one_line(str(agent), 120)!r}; {self.path})"
                )
        if not self.diverged:
            step = self.recorded[index]
            reply = UserReply(
                step["message"], step["status"], step.get("reason", ""), step.get("model", ""), replayed=True
            )
        else:
            reply = self._asked(user, history, index)
        self.steps.append(
            {
                "agent": agent,
                "message": reply.message,
                "status": reply.status,
                "reason": reply.reason,
                "model": reply.model,
            }
        )
        return reply

    def _asked(self, user: SimulatedUserSpec, history: Sequence[Mapping[str, str]], index: int) -> UserReply:
        """The simulator's reply at step `index`.

        RunFailure (InfraFailure when the provider failed) when none can be had. A spend cap reached is raised as it is:
        the conversation ends there.
        """
        where = f"turn {index + 1}: {self.diverged}"
        if self.mode == ReplayMode.REPLAY:
            raise RunFailure(f"{where}; under replay no model is called: {HINT}")
        if self.live is None:
            raise RunFailure(f"{where}, and no simulator was given to play it live")
        try:
            reply = self.live(user, history)
        except UserUnavailable as exc:
            if exc.kind == "spend_cap":
                raise
            failure = InfraFailure if exc.kind in ("infra", "malformed") else RunFailure
            raise failure(f"{where}, and the simulator could not play it live: {exc.message}") from None
        self.went_live = True
        return reply

    def _masked(self, text: str) -> str:
        for pattern in self.volatile:
            text = pattern.sub("…", text)
        return text

    def save(self) -> None:
        """Write the steps taken when one of them went live (whole or not at all)."""
        if not self.went_live:
            return
        user = self.job.query.simulated_user
        assert user is not None, "a player for a query without a simulated user"
        document = {
            "version": FORMAT_VERSION,
            "query": self.job.query.key,
            "run": self.job.run,
            "user": user_identity(user),
            "steps": self.steps,
        }
        write(self.path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def read(path: Path) -> dict[str, Any]:
    """A simulated user's recording; InputError naming the file (and the line of a JSON error) when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError.at(
            str(path), 0, f"cannot read the simulated user's recording: {exc.strerror or exc}"
        ) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.at(str(path), exc.lineno, f"not a simulated user's recording: {exc.msg}") from None
    steps = document.get("steps") if isinstance(document, dict) else None
    valid = isinstance(steps, list) and all(
        isinstance(step, dict)
        and isinstance(step.get("message"), str)
        and step.get("status") in ("continue", "goal_reached", "gave_up")
        and (step.get("agent") is None or isinstance(step.get("agent"), str))
        for step in steps
    )
    if not valid or document.get("version") != FORMAT_VERSION:
        raise InputError.at(
            str(path),
            1,
            f"not a simulated user's recording (version {FORMAT_VERSION}: user, steps of agent, message, status)",
        )
    return dict(document)

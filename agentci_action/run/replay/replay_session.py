"""One run's side of record and replay: its recording, which answers it has used, what went live, what missed.

Modes:
- `replay`: every call is answered from the run's recording; a call with no recorded answer is a miss, answered
  with an error (never a live call), and the run fails with the miss's explanation;
- `record`: every call goes to the provider; the recording is rewritten with this run's calls;
- `record-missing`: recorded answers are replayed, calls without one go to the provider, and the recording is
  rewritten with the calls this run made (replayed and live, in order) when that changes it.

A conversation's turns are attempts of one run: each turn's session continues the previous turn's, so the recording
holds every turn's calls in order and a replayed turn is answered from what the turns before it left.

A request matching no recorded key exactly is answered from the first recorded key it matches with each placeholder
read as any value (request_keys.volatile_match): a secret the agent had while recorded and lacks now. Identical
requests are answered in order: the k-th request with a key gets the k-th answer recorded under that
key in this run's recording (a per-key queue), so an agent that asks the same thing twice gets both answers, in
order, whatever it asks in between. Calls are numbered as they arrive (1, 2, ...), and the recording lists them
in that order. Recorded answers are encoded when the session is made (a stream as its frames' bytes), so answering
a call is one write.
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentci_action.run.replay import misses, recordings
from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest, Recording
from agentci_action.run.replay.request_keys import Volatility, volatile_match
from agentci_action.run.replay.wire_usage import WireUsage, usage_of
from agentci_action.spec.replay_modes import ReplayMode


@dataclass(frozen=True)
class Miss:
    number: int  # the call's number in the run, from 1
    explanation: str
    went_live: bool  # record-missing: the provider answered it instead


@dataclass(frozen=True)
class MadeCall:
    """A call this attempt made, and how long the proxy took to answer it: all of it, and a stream's first bytes."""

    call: RecordedCall
    duration_ms: float | None = None
    ttft_ms: float | None = None


@dataclass
class Figures:
    """What one run's model calls were: replayed from the recording, or live (and what those reported)."""

    replayed: int = 0
    live: int = 0
    misses: list[Miss] = field(default_factory=list)
    live_usage: list[WireUsage] = field(default_factory=list)
    wrote: Path | None = None  # the recording file, when this run rewrote it
    calls: list[RecordedCall] = field(default_factory=list)  # the calls made, replayed and live, in order
    own: list[MadeCall] = field(default_factory=list)  # this attempt's (not a conversation's earlier turns'), timed

    @property
    def failed(self) -> bool:
        """A miss that was not answered live fails the run."""
        return any(not miss.went_live for miss in self.misses)


class ReplaySession:
    """Create for one attempt of one run; `finish` when the run is over.

    RecordingError when the run's recording exists (and the mode reads it) but cannot be read.
    """

    def __init__(
        self,
        *,
        query: str,
        run: int,
        path: Path,
        mode: ReplayMode,
        volatility: Volatility,
        recording: Recording | None = None,
    ):
        """`recording`: the file at `path` already read (else it is read here, unless the mode records everything)."""
        self.query, self.run, self.path, self.volatility = query, run, path, volatility
        self.mode = ReplayMode(mode)  # ValueError for a word that is not a mode
        self._made: dict[int, RecordedCall | Callable[[], RecordedCall]] = {}
        self._answers: dict[str, deque[RecordedCall]] = {}
        self.recording = recording
        if recording is None and mode != ReplayMode.RECORD and path.is_file():
            self.recording = recordings.read(path)
        for call in self.recording.calls if self.recording else []:
            self._answers.setdefault(call.request.key(volatility), deque()).append(call)
            call.response.payload  # noqa: B018  # encoded now, before the agent asks: serving it is one write
        self._first = 1  # this attempt's first call
        self._numbers = itertools.count(self._first)
        self._times: dict[int, tuple[float, float | None]] = {}
        self._lock = threading.Lock()
        self.figures = Figures()

    def next_turn(self) -> ReplaySession:
        """A session for the conversation's next turn, once this one (its previous turn) is finished.

        It goes on from this one's calls (the answers it left, the calls it made, which the recording keeps before the
        next turn's), with figures of its own; the same query, run, recording and mode.
        """
        turn = copy.copy(self)
        turn._answers = {key: deque(queue) for key, queue in self._answers.items()}
        turn._made = {number: self._read(number) for number in self._made}
        turn._first = max(turn._made, default=0) + 1
        turn._numbers = itertools.count(turn._first)
        turn._times = {}
        turn._lock = threading.Lock()
        turn.figures = Figures()
        return turn

    def number(self) -> int:
        """The next call's number, in order of arrival."""
        with self._lock:
            return next(self._numbers)

    def answer(self, key: str, number: int) -> RecordedCall | None:
        """The recorded answer for the next request with `key`, kept as this run's call `number`.

        None when there is none left (or the mode records everything).
        """
        if self.mode == ReplayMode.RECORD:
            return None
        with self._lock:
            queue = self._answers.get(key)
            if not queue:  # a secret the agent was given at recording only, where a placeholder stands
                queue = self._answers.get(volatile_match(key, (k for k, q in self._answers.items() if q)) or "")
            if not queue:
                return None
            call = queue.popleft()
            self._made[number] = call
            self.figures.replayed += 1
            return call

    def miss(self, request: RecordedRequest, number: int) -> Miss:
        """Note a request with no recorded answer; its explanation names the nearest recorded one."""
        explanation = misses.explain(request, number, self.path, self.recording)
        miss = Miss(number, explanation, went_live=self.mode == ReplayMode.RECORD_MISSING)
        with self._lock:
            self.figures.misses.append(miss)
        return miss

    def live(self, call: Callable[[], RecordedCall], number: int) -> None:
        """Keep a call the provider answered as this run's call `number`.

        `call()` reads it (when the run ends: the agent is not kept waiting while its request and answer are parsed).
        """
        with self._lock:
            self._made[number] = call
            self.figures.live += 1

    def timed(self, number: int, duration_ms: float, ttft_ms: float | None = None) -> None:
        """Keep how long call `number` took to answer (ttft_ms: a stream's first bytes), before its last bytes leave."""
        with self._lock:
            self._times[number] = (duration_ms, ttft_ms)

    def _read(self, number: int) -> RecordedCall:
        """Call `number` as recorded; a live one read now, and what its answer reported counted."""
        made = self._made[number]
        if isinstance(made, RecordedCall):
            return made
        call = self._made[number] = made()
        self.figures.live_usage.append(usage_of(call.request.provider, call.response))
        return call

    def finish(self) -> Figures:
        """Rewrite the recording when the mode says so (see the module docstring); the run's figures.

        OutputError when the file cannot be written (LinkedPath: a symbolic link on its way).
        """
        with self._lock:
            numbers = sorted(self._made)
            made = self.figures.calls = [self._read(number) for number in numbers]
            self.figures.own = [
                MadeCall(call, *self._times.get(number, (None, None)))
                for number, call in zip(numbers, made)
                if number >= self._first
            ]
        if self.mode == ReplayMode.REPLAY:
            return self.figures
        text = recordings.render(self.query, self.run, made)
        if self.mode == ReplayMode.RECORD or _differs(self.path, text):
            recordings.write(self.path, text)
            self.figures.wrote = self.path
        return self.figures


def _differs(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") != text
    except (OSError, UnicodeDecodeError):
        return True

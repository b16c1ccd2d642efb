"""Progress on stderr for long work (the agent's runs, judge calls).

A header at once, then a live line on a terminal (rewritten in place and refreshed each second, so the elapsed time
moves while a slow call runs), or a plain line every few seconds otherwise (CI logs); errors as they happen; a last line
when the work is done.

The line: `<label>: <done>/<total> <units> · <counter> <count> … · <elapsed> elapsed · ETA <remaining>`, where the ETA
is elapsed / done × (total − done), shown once something is done and until everything is. Counters read as labels
("failed 2", "cached 6"), so no count disagrees with its noun.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from agentci_action._util.text import plural

PLAIN_INTERVAL_S = 5.0  # seconds between plain lines (not a terminal); AGENTCI_PROGRESS_INTERVAL_S sets another
LIVE_REFRESH_S = 1.0  # seconds between rewrites of the live line while nothing finishes
CLEAR = "\r\033[K"  # carriage return, erase to the end of the line


def duration(seconds: float) -> str:
    """m:ss, or h:mm:ss from an hour on (rounded to the second)."""
    seconds = int(seconds + 0.5)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60}:{seconds % 60:02d}"
    )


def plain_interval() -> float:
    """Seconds between plain lines: $AGENTCI_PROGRESS_INTERVAL_S when it is a number above 0, else 5."""
    try:
        value = float(os.environ.get("AGENTCI_PROGRESS_INTERVAL_S", ""))
    except ValueError:
        return PLAIN_INTERVAL_S
    return value if 0 < value < float("inf") else PLAIN_INTERVAL_S


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class ProgressOutput:
    """Where and how the progress shows.

    `stream` (default stderr), a live line (default: when the stream is a terminal) or plain lines every `interval_s`
    (default plain_interval()), each printed text through `mask` (e.g. the run's secrets masked).
    """

    stream: TextIO | None = None
    live: bool | None = None
    interval_s: float | None = None
    mask: Callable[[str], str] = _same


class Progress:
    """Thread-safe: workers call `advance` as their units end.

    `start` prints the header and starts the clock that refreshes the line; `finish` stops it and prints the last line.
    Counters are shown in the order given.
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str,
        units: str | None = None,
        counters: tuple[str, ...] = (),
        output: ProgressOutput = ProgressOutput(),
    ):
        self.label, self.total, self.unit, self.units = label, total, unit, units
        self.done = 0
        self.counts = dict.fromkeys(counters, 0)
        self.stream = output.stream or sys.stderr
        self.live = _is_terminal(self.stream) if output.live is None else output.live
        self.interval_s = plain_interval() if output.interval_s is None else output.interval_s
        self.mask = output.mask
        self.started = time.monotonic()
        self._last_plain = self.started
        self._shown = False  # the live line is on screen (so a printed line must clear it first)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._clock: threading.Thread | None = None

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        left = self.total - self.done
        eta = f" · ETA {duration(elapsed / self.done * left)}" if self.done and left > 0 else ""
        done = f"{self.done:,}/{plural(self.total, self.unit, self.units)}"
        return f"{self.label}: {done}{self._counts()} · {duration(elapsed)} elapsed{eta}"

    def totals(self, verb: str) -> str:
        """'<label>: 24 queries <verb> in 0:40 · <counter> <count> …': the last line."""
        elapsed = duration(time.monotonic() - self.started)
        return f"{self.label}: {plural(self.done, self.unit, self.units)} {verb} in {elapsed}{self._counts()}"

    def _counts(self) -> str:
        return "".join(f" · {name} {value:,}" for name, value in self.counts.items())

    def start(self, header: str | None = None) -> None:
        """Print `header` (and on a terminal the line) at once.

        Then refresh the line each second on a terminal, each interval in plain lines.
        """
        with self._lock:
            if header:
                self._print(header)
            if self.live:  # the line at once, 0 done: a terminal shows that work has begun
                self._refresh(force=True)
        if self._clock is None and self.interval_s > 0:
            self._clock = threading.Thread(target=self._tick, name="agentci-progress", daemon=True)
            self._clock.start()

    def expect(self, units: int, note: str | None = None) -> None:
        """`units` more to do (e.g. the next side of a diff), with a line saying what they are."""
        with self._lock:
            self.total += units
            if note:
                self._print(note)

    def advance(self, error: str | None = None, **counts: int) -> None:
        """One unit ended; `counts` add to the named counters (`_` for a space; a new name joins at the end); `error` (a failed unit's message) is printed now."""
        with self._lock:
            self.done += 1
            for key, value in counts.items():
                name = key.replace("_", " ")
                self.counts[name] = self.counts.get(name, 0) + value
            if error is not None:
                self._print(f"error: {error}")
            self._refresh(force=self.live)

    def finish(self, summary: str | None = None) -> None:
        """Stop the clock; clear the live line; print `summary` (e.g. the totals), if any."""
        self._stop.set()
        if self._clock is not None:
            self._clock.join()
        with self._lock:
            if summary:
                self._print(summary)
            elif self._shown:
                self.stream.write(CLEAR)
                self.stream.flush()
                self._shown = False

    def _tick(self) -> None:
        while not self._stop.wait(min(LIVE_REFRESH_S, self.interval_s)):
            with self._lock:
                self._refresh(force=self.live)

    def _refresh(self, force: bool) -> None:
        """The live line rewritten (live), or a plain line when the interval has passed since the last one."""
        if self.live:
            self.stream.write(CLEAR + self.mask(self.line()))
            self.stream.flush()
            self._shown = True
            return
        now = time.monotonic()
        if force or now - self._last_plain >= self.interval_s:
            self._last_plain = now
            self._print(self.line())

    def _print(self, text: str) -> None:
        """A whole line (masked), above the live line, which the next refresh redraws."""
        self.stream.write((CLEAR if self._shown else "") + self.mask(text) + "\n")
        self.stream.flush()
        self._shown = False


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False

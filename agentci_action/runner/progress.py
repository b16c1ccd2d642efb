"""Progress on stderr while the agent runs: a live line on a terminal (rewritten in place), a plain line every
few seconds otherwise (CI logs); a failed run's message as it happens; a summary at the end."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import TextIO

from .secrets import Masker

PLAIN_INTERVAL_S = 5.0


@dataclass
class Tally:
    """Counts of the runs so far."""

    total: int
    done: int = 0
    failed: int = 0
    infra: int = 0


def duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60}:{seconds % 60:02d}"
    )


class Progress:
    def __init__(
        self,
        total: int,
        masker: Masker,
        stream: TextIO | None = None,
        live: bool | None = None,
        interval_s: float = PLAIN_INTERVAL_S,
    ):
        self.tally = Tally(total)
        self.masker = masker
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.interval_s = interval_s
        self.started = time.monotonic()
        self._last_plain = self.started
        self._lock = threading.Lock()

    def line(self) -> str:
        t = self.tally
        elapsed = time.monotonic() - self.started
        eta = f" · ETA {duration(elapsed / t.done * (t.total - t.done))}" if t.done and t.done < t.total else ""
        return f"agentci run: {t.done}/{t.total} runs · {t.failed} failed · {t.infra} infra · {duration(elapsed)} elapsed{eta}"

    def ran(self, error: str | None = None, infra: bool = False) -> None:
        """One run ended; `error` is its message when it produced no trace."""
        with self._lock:
            self.tally.done += 1
            self.tally.failed += error is not None and not infra
            self.tally.infra += error is not None and infra
            if error is not None:
                self._print(f"error: {self.masker(error)}")
            now = time.monotonic()
            if self.live:
                self.stream.write(f"\r\033[K{self.line()}")
                self.stream.flush()
            elif now - self._last_plain >= self.interval_s:
                self._last_plain = now
                self._print(self.line())

    def _print(self, text: str) -> None:
        self.stream.write(("\r\033[K" if self.live else "") + text + "\n")
        self.stream.flush()

    def done(self, summary: str) -> None:
        with self._lock:
            self._print(self.masker(summary))

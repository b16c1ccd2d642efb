"""The spend cap on AgentCI's own model calls in one run (the judge's and the simulated users'), one for all of them."""

from __future__ import annotations

import math
import threading

from agentci_action.spec.models import JudgeConfig


def spend_cap_for(config: JudgeConfig | None, max_cost_usd: float | None) -> SpendCap:
    """The cap on AgentCI's own model calls in one run.

    The lower of judge_config.max_cost_usd and `max_cost_usd` (--judge-max-cost-usd), none when neither is set.
    """
    caps = [cap for cap in (config.max_cost_usd if config else None, max_cost_usd) if cap is not None]
    return SpendCap(min(caps, default=None))


class SpendCap:
    """AgentCI's own spend on model calls in one run against the cap (None: no cap). Thread-safe.

    A call starts only while the spend so far, plus the calls in flight and itself each at the dearest call seen
    so far, stays within the cap (with none seen yet, one call at a time): so with concurrent workers the calls
    stop where one worker's would, at the first call that brings the spend to the cap. A call whose price is
    unknown ends the spending: the cap can no longer be checked. Cached verdicts cost nothing and never wait.
    """

    def __init__(self, cap: float | None):
        self.cap = cap
        self.spent = 0.0
        self._in_flight, self._dearest = 0, 0.0
        self._unpriced: str | None = None
        self._changed = threading.Condition()

    def _reached(self) -> bool:
        return self.cap is not None and (
            self._unpriced is not None or self.spent >= self.cap or math.isclose(self.spent, self.cap, rel_tol=1e-9)
        )

    def admit(self) -> bool:
        """Whether a call may start now; waits while calls in flight might bring the spend to the cap."""
        if self.cap is None:
            return True
        with self._changed:
            while True:
                if self._reached():
                    return False
                committed = self.spent + (self._in_flight + 1) * self._dearest
                if not self._in_flight or (self._dearest and committed <= self.cap * (1 + 1e-9)):
                    self._in_flight += 1
                    return True
                self._changed.wait()

    def settle(self, cost: float | None, model: str) -> None:
        """A call admitted by admit() ended, costing `cost` (0 when it failed; None when its price is unknown)."""
        if self.cap is None:
            return
        with self._changed:
            self._in_flight -= 1
            if cost is None:
                self._unpriced = self._unpriced or model
            else:
                self.spent += cost
                self._dearest = max(self._dearest, cost)
            self._changed.notify_all()

    @property
    def unpriced(self) -> str | None:
        """The model whose unknown price ended the spending, None while every call was priced."""
        return self._unpriced

    def reached(self) -> bool:
        """Whether no further call may start: the cap is spent (or can no longer be checked)."""
        with self._changed:
            return self._reached()

    def reason(self) -> str:
        """Why a check was left unjudged: the same words for every such check, so reports count them as one reason."""
        if self._unpriced is not None:
            return (
                f"not judged: the judge spend cap ${self.cap:g} cannot be checked, {self._unpriced} has no known "
                "price (add it under `pricing:`)"
            )
        return f"not judged: judge spend cap ${self.cap:g} reached"

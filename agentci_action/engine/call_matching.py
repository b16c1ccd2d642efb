"""`expected_tool_calls` against a trace's calls under a match mode, by optimal pairing (never first-fit).

compatible(i, j): call j's tool is one of step i's tools and its arguments pass step i's test.

    strict       an order-preserving pairing that covers every call and every required step
    subsequence  an order-preserving pairing that covers every required step; other calls are extras
    subset       a one-to-one pairing, in any order, that covers every required step; extras allowed
    superset     every call is compatible with some step (repeats allowed); steps may be absent
    unordered    subset and superset together

Ordered modes maximise Σ weight over the paired steps by dynamic programming (a weighted longest common
subsequence, one vectorised row at a time); the others by scipy's linear_sum_assignment. A required step
weighs (number of optional steps + 1) and an optional one 1, so one more required step always wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..spec.models import ExpectedToolCall, MatchMode
from ..trace.models import ToolCall
from .arguments import ArgumentMatcher, ArgumentMismatch, as_mapping

EXPLAINED_STEPS = 10  # missing steps whose closest call is examined for argument mismatches


@dataclass(frozen=True)
class Divergence:
    """Where an ordered match first went wrong: at trace position `index`, `step` was wanted and `call` found.

    `step` is None when the expectation had already ended; `call` is None when the trace had.
    """

    index: int
    step: int | None
    call: int | None


@dataclass(frozen=True)
class NearMiss:
    """The unpaired call closest to a missing step (same tool, fewest failing keys) and why it failed."""

    step: int
    call: int
    mismatches: list[ArgumentMismatch]


@dataclass(frozen=True)
class CallMatch:
    matched: bool
    pairs: list[tuple[int, int]]  # (step, call), by step
    missing: list[int]  # required steps left unpaired
    unexpected: list[int]  # calls the mode does not allow
    first_divergence: Divergence | None = None
    near_misses: list[NearMiss] = field(default_factory=list)


def compatibility(steps: list[ExpectedToolCall], calls: list[ToolCall], matchers: list[ArgumentMatcher]) -> np.ndarray:
    """compatible[i, j] for every step i and call j; arguments are tested only where the tool name fits."""
    by_name: dict[str, list[int]] = {}
    for j, call in enumerate(calls):
        by_name.setdefault(call.name, []).append(j)
    mappings: dict[int, dict | None] = {}
    compatible = np.zeros((len(steps), len(calls)), dtype=bool)
    for i, (step, matcher) in enumerate(zip(steps, matchers)):
        for name in step.names:
            candidates = by_name.get(name, [])
            if matcher.accepts_anything:
                compatible[i, candidates] = True
                continue
            for j in candidates:
                if j not in mappings:
                    mappings[j] = as_mapping(calls[j].arguments)
                compatible[i, j] = matcher.matches(mappings[j])
    return compatible


def _weights(steps: list[ExpectedToolCall]) -> np.ndarray:
    required = len([s for s in steps if s.optional]) + 1
    return np.array([1 if s.optional else required for s in steps], dtype=np.int64)


def align(compatible: np.ndarray, weights: np.ndarray) -> list[tuple[int | None, int | None]]:
    """Order-preserving pairing of maximum weight, as operations in trace order:
    (i, j) pairs step i with call j; (i, None) leaves step i unpaired; (None, j) leaves call j unpaired.

    best[i][j] = max(best[i−1][j], best[i][j−1], best[i−1][j−1] + w_i·compatible[i−1][j−1]); ties go to
    pairing the earliest calls, so a surplus call is reported where it appears last.
    """
    n, m = compatible.shape
    best = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        row = best[i - 1].copy()
        np.maximum(row[1:], best[i - 1, :-1] + weights[i - 1] * compatible[i - 1], out=row[1:])
        np.maximum.accumulate(row, out=best[i])
    operations: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i > 0 or j > 0:
        if j > 0 and best[i, j] == best[i, j - 1]:
            operations.append((None, j - 1))
            j -= 1
        elif i > 0 and best[i, j] == best[i - 1, j]:
            operations.append((i - 1, None))
            i -= 1
        else:
            operations.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    operations.reverse()
    return operations


def _first_divergence(operations: list[tuple[int | None, int | None]], steps: list[ExpectedToolCall],
                      calls_are_extras: bool, total_calls: int) -> Divergence | None:
    """The first unpaired required step (or, in strict mode, unpaired call), located in the trace."""
    for k, (i, j) in enumerate(operations):
        if i is not None and j is None and not steps[i].optional:
            here = next((jj for _, jj in operations[k + 1:] if jj is not None), None)
            return Divergence(index=total_calls if here is None else here, step=i, call=here)
        if i is None and not calls_are_extras:
            wanted = next((ii for ii, _ in operations[k + 1:] if ii is not None), None)
            return Divergence(index=j, step=wanted, call=j)
    return None


def _near_misses(missing: list[int], paired_calls: set[int], steps: list[ExpectedToolCall],
                 calls: list[ToolCall], matchers: list[ArgumentMatcher]) -> list[NearMiss]:
    found = []
    for i in missing[:EXPLAINED_STEPS]:
        names = set(steps[i].names)
        candidates = [(len(ms), j, ms) for j, call in enumerate(calls)
                      if j not in paired_calls and call.name in names
                      for ms in [matchers[i].mismatches(call.arguments)]]
        if candidates:
            _, j, mismatches = min(candidates, key=lambda c: (c[0], c[1]))
            found.append(NearMiss(i, j, mismatches))
    return found


def match_calls(steps: list[ExpectedToolCall], calls: list[ToolCall], mode: MatchMode) -> CallMatch:
    """Pair expected steps with the trace's calls under `mode` (see the module docstring)."""
    matchers = [ArgumentMatcher(step) for step in steps]
    compatible = compatibility(steps, calls, matchers)
    weights = _weights(steps)
    divergence = None
    if mode in (MatchMode.STRICT, MatchMode.SUBSEQUENCE):
        operations = align(compatible, weights)
        pairs = [(i, j) for i, j in operations if i is not None and j is not None]
        unexpected = [j for i, j in operations if i is None] if mode is MatchMode.STRICT else []
        divergence = _first_divergence(operations, steps, mode is MatchMode.SUBSEQUENCE, len(calls))
    else:
        pairs = []
        if mode is not MatchMode.SUPERSET and len(steps) and len(calls):
            rows, cols = linear_sum_assignment(compatible * weights[:, None], maximize=True)
            pairs = [(int(i), int(j)) for i, j in zip(rows, cols) if compatible[i, j]]
        unexpected = [] if mode is MatchMode.SUBSET else [int(j) for j in np.flatnonzero(~compatible.any(axis=0))]
    paired_steps = {i for i, _ in pairs}
    needs_all_steps = mode is not MatchMode.SUPERSET
    missing = [i for i, step in enumerate(steps) if needs_all_steps and not step.optional and i not in paired_steps]
    near = _near_misses(missing, {j for _, j in pairs}, steps, calls, matchers)
    return CallMatch(not missing and not unexpected, sorted(pairs), missing, unexpected, divergence, near)

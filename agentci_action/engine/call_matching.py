"""`expected_tool_calls` against a trace's calls under a match mode, by optimal pairing (never first-fit).

compatible(i, j): call j's tool is one of step i's tools and its arguments pass step i's test.

    strict       an order-preserving pairing that covers every call and every required step
    subsequence  an order-preserving pairing that covers every required step; other calls are extras
    subset       a one-to-one pairing, in any order, that covers every required step; extras allowed
    superset     every call is compatible with some step (repeats allowed); steps may be absent
    unordered    subset and superset together

Ordered modes maximise Σ weight over the paired steps by dynamic programming (a weighted longest common
subsequence, one vectorised row at a time); the others by a minimum-cost bipartite matching (scipy's
sparse LAPJV). A required step weighs (number of optional steps + 1) and an optional one 1, so one more
required step always wins. Pairs are never chosen first-fit, which fails when argument rules overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..spec.models import ExpectedToolCall, MatchMode
from ..trace.models import ToolCall
from .arguments import ArgumentMatcher, ArgumentMismatch, as_mapping, canonical

if TYPE_CHECKING:
    import numpy as np

# numpy and scipy are imported by the functions that use them, on the first expected_tool_calls of a run:
# importing them took 0.4 s of every start, most of which never match calls.

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


class _CallIndex:
    """The trace's calls looked up by tool name, and by the (canonical) value of an argument."""

    def __init__(self, calls: list[ToolCall]):
        self.by_name: dict[str, list[int]] = {}
        self.arguments: list[dict | None] = []  # each call's arguments through as_mapping
        for j, call in enumerate(calls):
            self.by_name.setdefault(call.name, []).append(j)
            self.arguments.append(as_mapping(call.arguments))
        self._by_value: dict[str, dict[Any, list[int]]] = {}

    def with_value(self, key: str, value: Any) -> list[int]:
        """Calls whose argument `key` may equal `value` (a superset of those that do)."""
        if key not in self._by_value:
            index: dict[Any, list[int]] = {}
            for j, arguments in enumerate(self.arguments):
                if arguments is not None and key in arguments:
                    index.setdefault(canonical(arguments[key]), []).append(j)
            self._by_value[key] = index
        return self._by_value[key].get(canonical(value), [])


def compatibility(steps: list[ExpectedToolCall], calls: list[ToolCall], matchers: list[ArgumentMatcher], index: _CallIndex) -> np.ndarray:
    """compatible[i, j] for every step i and call j. Arguments are tested only on calls with a fitting tool
    name and, when the step expects some key to equal a value, only on calls holding that value."""
    import numpy as np
    compatible = np.zeros((len(steps), len(calls)), dtype=bool)
    for i, (step, matcher) in enumerate(zip(steps, matchers)):
        names = step.names
        if matcher.accepts_anything:
            for name in names:
                compatible[i, index.by_name.get(name, [])] = True
            continue
        if matcher.anchor is not None:
            candidates = [j for j in index.with_value(*matcher.anchor) if calls[j].name in names]
        else:
            candidates = [j for name in names for j in index.by_name.get(name, [])]
        for j in candidates:
            compatible[i, j] = matcher.matches(index.arguments[j])
    return compatible


def _weights(steps: list[ExpectedToolCall]) -> np.ndarray:
    import numpy as np
    required = len([s for s in steps if s.optional]) + 1
    return np.array([1 if s.optional else required for s in steps], dtype=np.int64)


def _shared_run(diagonal: np.ndarray) -> int:
    """Length of the leading run of True in `diagonal`."""
    return len(diagonal) if diagonal.all() else int(diagonal.argmin())


def align(compatible: np.ndarray, weights: np.ndarray) -> list[tuple[int | None, int | None]]:
    """Order-preserving pairing of maximum weight, as operations in trace order:
    (i, j) pairs step i with call j; (i, None) leaves step i unpaired; (None, j) leaves call j unpaired.

    A leading step of the largest weight that is compatible with the leading call is paired with it
    (some best pairing does so: it can only displace one pair of no greater weight), and likewise at the
    end; a trace that follows its expectation is therefore aligned in linear time. The rest by _best_alignment.
    """
    import numpy as np
    n, m = compatible.shape
    k = min(n, m)
    top = weights == weights.max() if n else np.zeros(0, dtype=bool)
    head = _shared_run(compatible.diagonal()[:k] & top[:k])
    k -= head
    tail = _shared_run((compatible[::-1, ::-1].diagonal()[:k] & top[::-1][:k]))
    middle = _best_alignment(compatible[head:n - tail, head:m - tail], weights[head:n - tail])
    shifted = [(None if i is None else i + head, None if j is None else j + head) for i, j in middle]
    return [(x, x) for x in range(head)] + shifted + [(n - tail + x, m - tail + x) for x in range(tail)]


def _best_alignment(compatible: np.ndarray, weights: np.ndarray) -> list[tuple[int | None, int | None]]:
    """best[i][j] = max(best[i−1][j], best[i][j−1], best[i−1][j−1] + w_i·compatible[i−1][j−1]), then
    traced back; ties go to pairing the earliest calls, so a surplus call is reported where it appears last."""
    import numpy as np
    n, m = compatible.shape
    gain = compatible * weights[:, None]
    best = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        row = best[i]
        np.add(best[i - 1, :-1], gain[i - 1], out=row[1:])
        np.maximum(row, best[i - 1], out=row)
        np.maximum.accumulate(row, out=row)
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


def assign(compatible: np.ndarray, weights: np.ndarray) -> list[tuple[int, int]]:
    """One-to-one pairing of maximum weight, in any order: (step, call) pairs.

    A minimum-cost full matching on the sparse graph of compatible pairs (cost 1 each) plus one private
    stand-in call per step (cost 1 + w_i, meaning "left unpaired"): the stand-ins make a full matching
    always exist, and minimising the cost maximises Σ w_i over the steps paired with real calls.
    """
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    n, m = compatible.shape
    if n == 0 or m == 0:
        return []
    steps, calls = np.nonzero(compatible)
    stand_ins = np.arange(n)
    graph = csr_matrix((np.concatenate([np.ones(len(steps)), 1.0 + weights]),
                        (np.concatenate([steps, stand_ins]), np.concatenate([calls, m + stand_ins]))), shape=(n, m + n))
    rows, cols = min_weight_full_bipartite_matching(graph)
    return [(i, j) for i, j in zip(rows.tolist(), cols.tolist()) if j < m]


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
                 calls: list[ToolCall], matchers: list[ArgumentMatcher], index: _CallIndex) -> list[NearMiss]:
    """For each of the first EXPLAINED_STEPS missing steps: the unpaired call of a fitting tool with the
    fewest failing keys (the earliest on ties), and its mismatches."""
    found = []
    for i in missing[:EXPLAINED_STEPS]:
        names = set(steps[i].names)
        candidates = [(len(matchers[i].failing_keys(index.arguments[j])), j)
                      for name in names for j in index.by_name.get(name, []) if j not in paired_calls]
        if candidates:
            _, j = min(candidates)
            found.append(NearMiss(i, j, matchers[i].mismatches(calls[j].arguments)))
    return found


def match_calls(steps: list[ExpectedToolCall], calls: list[ToolCall], mode: MatchMode) -> CallMatch:
    """Pair expected steps with the trace's calls under `mode` (see the module docstring)."""
    matchers = [ArgumentMatcher(step) for step in steps]
    index = _CallIndex(calls)
    compatible = compatibility(steps, calls, matchers, index)
    weights = _weights(steps)
    divergence = None
    if mode in (MatchMode.STRICT, MatchMode.SUBSEQUENCE):
        operations = align(compatible, weights)
        pairs = [(i, j) for i, j in operations if i is not None and j is not None]
        unexpected = [j for i, j in operations if i is None] if mode is MatchMode.STRICT else []
        divergence = _first_divergence(operations, steps, mode is MatchMode.SUBSEQUENCE, len(calls))
    else:
        pairs = assign(compatible, weights) if mode is not MatchMode.SUPERSET else []
        unexpected = [] if mode is MatchMode.SUBSET else (~compatible.any(axis=0)).nonzero()[0].tolist()
    paired_steps = {i for i, _ in pairs}
    needs_all_steps = mode is not MatchMode.SUPERSET
    missing = [i for i, step in enumerate(steps) if needs_all_steps and not step.optional and i not in paired_steps]
    near = _near_misses(missing, {j for _, j in pairs}, steps, calls, matchers, index)
    return CallMatch(not missing and not unexpected, sorted(pairs), missing, unexpected, divergence, near)

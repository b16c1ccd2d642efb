"""`expected_tool_calls` against a trace's calls under a match mode, by optimal pairing (never first-fit).

compatible(i, j): call j's tool is one of step i's tools and its arguments pass step i's test.

    strict       an order-preserving pairing that covers every call and every required step
    subsequence  an order-preserving pairing that covers every required step; other calls are extras
    subset       a one-to-one pairing, in any order, that covers every required step; extras allowed
    superset     a one-to-one pairing, in any order, that covers every call; steps may be absent
    unordered    subset and superset together

Every mode pairs each call with at most one step, so a call repeated where one is expected is left over (in
strict, superset and unordered it fails the match). With `repeated_calls: ignore`, superset and unordered accept a
call compatible with any step instead, repeats included.

A pairing weighs Σ w_i over its paired steps, where a required step weighs (number of optional steps + 1) and
an optional one 1, so one more required step always wins; the best pairing weighs the most. Pairs are never
chosen first-fit, which fails when argument rules overlap.

A trace mostly follows its expectation, so every mode starts from the diagonals: the leading steps compatible
with the leading calls, and the trailing with the trailing, are paired directly. Between them, ordered modes
use Myers' diff when all steps weigh alike (the most pairs = the fewest unpaired; O((n + m)·D) for D unpaired),
else a dynamic programme (a weighted longest common subsequence, one vectorised row at a time). Unordered
modes keep that order-preserving pairing, plus an assignment of what it leaves, when every step still unpaired
fits no call at all (no pairing can weigh more); else a maximum-weight pairing of everything (augmenting paths,
heaviest steps first: where steps compete for too few calls, the heavier and then the earlier is paired).
compatible(i, j) is computed only where asked, through indexes: the trace's calls by tool and by argument value,
the steps (compiled once per expectation) by tool and by the value they expect.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from agentci_action.engine.arguments import ArgumentMatcher, ArgumentMismatch, as_mapping, canonical
from agentci_action.spec.models import ExpectedToolCall, MatchMode
from agentci_action.trace.canonical import ToolCall

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the functions that use it, on the first search between the diagonals: importing it (then
# with scipy) took 0.4 s of every start, most of which never match calls.

EXPLAINED_STEPS = 10  # missing steps whose closest call is examined for argument mismatches
COMPILED_KEPT = 64  # expectations kept compiled: the queries evaluated last (a query's runs come together)
UNPAIRED_SEARCHED = 32  # beyond this many unpaired steps and calls, order-preserving pairings are searched by DP


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
    # (step, call): a missing step that an unpaired call fits, called where the order does not allow it (ordered modes)
    out_of_order: list[tuple[int, int]] = field(default_factory=list)
    # (call, step): an unexpected call that fits a step another call already paired with, a repeat
    repeated: list[tuple[int, int]] = field(default_factory=list)


def _anchor(matcher: ArgumentMatcher) -> tuple[str, Any] | None:
    """(key, canonical value) that every call passing `matcher` holds, or None."""
    anchor = None if matcher.accepts_anything else matcher.anchor
    return None if anchor is None else (anchor[0], canonical(anchor[1]))


class Expectation:
    """The steps of `expected_tool_calls` prepared for matching: each step's tools, argument test and weight.

    The steps are also indexed, on first need, by the (key, canonical value) their test requires, or else by tool.
    """

    def __init__(self, steps: list[ExpectedToolCall]):
        self.steps = steps
        # a step names exactly one of `name` and `any_of` (the spec model checks it)
        self.tools: list[tuple[str, ...]] = [
            (step.name,) if step.name is not None else tuple(dict.fromkeys(step.any_of or ())) for step in steps
        ]
        self.matchers = [ArgumentMatcher(step) for step in steps]
        optional = [step.optional for step in steps]
        required = sum(optional) + 1
        self.weights = [1 if o else required for o in optional] if required > 1 else [1] * len(steps)
        self.top = max(self.weights, default=0)
        self.uniform = required == 1 or required == len(steps) + 1  # no optional step, or no required one

    @cached_property
    def anchors(self) -> list[tuple[str, Any] | None]:
        """Each step's (key, canonical value) that a compatible call must hold, or None."""
        return [_anchor(matcher) for matcher in self.matchers]

    @cached_property
    def anchored(self) -> dict[tuple[str, Any], list[int]]:
        """The steps with an anchor, by anchor."""
        index: dict[tuple[str, Any], list[int]] = {}
        for i, anchor in enumerate(self.anchors):
            if anchor is not None:
                index.setdefault(anchor, []).append(i)
        return index

    @cached_property
    def named_tools(self) -> set[str]:
        return {tool for tools in self.tools for tool in tools}

    @cached_property
    def anchor_keys(self) -> list[str]:
        return list(dict.fromkeys(key for key, _ in self.anchored))

    @cached_property
    def unanchored(self) -> dict[str, list[int]]:
        """The steps without an anchor, under each of their tools."""
        index: dict[str, list[int]] = {}
        for i, anchor in enumerate(self.anchors):
            if anchor is None:
                for tool in self.tools[i]:
                    index.setdefault(tool, []).append(i)
        return index


_compiled: dict[tuple[int, ...], Expectation] = {}
_compiling = threading.Lock()


def compiled(steps: list[ExpectedToolCall]) -> Expectation:
    """`steps` compiled, once while they are among the COMPILED_KEPT expectations matched last.

    They are known by their objects' ids, in order: a kept Expectation holds its steps, so their ids are not reused.
    """
    key = tuple(map(id, steps))
    expectation = _compiled.get(key)
    if expectation is None:
        expectation = Expectation(steps)
        with _compiling:  # queries are evaluated on several threads when a judge is used
            _compiled[key] = expectation
            if len(_compiled) > COMPILED_KEPT:
                del _compiled[next(iter(_compiled))]  # the oldest
    return expectation


class _Table:
    """compatible(i, j) for an expectation and a trace's calls, computed where it is asked for."""

    def __init__(self, expectation: Expectation, calls: list[ToolCall]):
        self.expectation = expectation
        self.calls = calls
        self.tools = [call.name for call in calls]
        self.arguments = [a if type(a) is dict else as_mapping(a) for a in [call.arguments for call in calls]]
        self._by_tool: dict[str, list[int]] | None = None
        self._by_value: dict[str, dict[Any, list[int]]] = {}

    def compatible(self, i: int, j: int) -> bool:
        e = self.expectation
        return self.tools[j] in e.tools[i] and e.matchers[i].matches(self.arguments[j])

    def run(self, forward: bool, weight: int | None = None) -> int:
        """How many steps in a row, from the first (or the last), match the call in the same position from that end.

        Match: are compatible with. With `weight`, only steps of that weight count.
        """
        e = self.expectation
        columns: list[Sequence[Any]] = [
            e.tools,
            e.matchers,
            e.weights if weight is not None else [None] * len(e.steps),
            self.tools,
            self.arguments,
        ]
        count = 0
        for tools, matcher, w, tool, arguments in zip(*(columns if forward else map(reversed, columns))):
            if w != weight or tool not in tools or not matcher.matches(arguments):
                break
            count += 1
        return count

    @property
    def by_tool(self) -> dict[str, list[int]]:
        """The calls of each tool, in trace order."""
        if self._by_tool is None:
            self._by_tool = {}
            for j, tool in enumerate(self.tools):
                self._by_tool.setdefault(tool, []).append(j)
        return self._by_tool

    def _with_value(self, key: str, value: Any) -> list[int]:
        """Calls whose argument `key` has the canonical value `value`, in trace order."""
        index = self._by_value.get(key)
        if index is None:
            index = self._by_value[key] = {}
            for j, arguments in enumerate(self.arguments):
                if arguments is not None and key in arguments:
                    held = arguments[key]
                    index.setdefault(held if type(held) is str else canonical(held), []).append(
                        j
                    )  # a string is its own
        return index.get(value, [])

    def candidates(self, i: int) -> list[int]:
        """The calls compatible with step i, in trace order.

        Looked up by the value its test requires when there is one, else by tool.
        """
        e = self.expectation
        tools, matcher, arguments = e.tools[i], e.matchers[i], self.arguments
        anchor = _anchor(matcher)
        if anchor is not None:
            return [j for j in self._with_value(*anchor) if self.tools[j] in tools and matcher.matches(arguments[j])]
        pool = [j for tool in tools for j in self.by_tool.get(tool, [])]
        if len(tools) > 1:
            pool.sort()
        return pool if matcher.accepts_anything else [j for j in pool if matcher.matches(arguments[j])]

    def unexplained(self, calls: list[int]) -> list[int]:
        """The calls among `calls` compatible with no step.

        Each call's steps looked up, or, when there are more calls to examine than steps, every step's calls.
        """
        if len(calls) <= len(self.expectation.steps):
            return [j for j in calls if not self._explained(j)]
        explained = {j for i in range(len(self.expectation.steps)) for j in self.candidates(i)}
        return [j for j in calls if j not in explained]

    def _explained(self, j: int) -> bool:
        """Whether some step is compatible with call j: the steps are looked up by the call's tool and values."""
        e, tool, arguments = self.expectation, self.tools[j], self.arguments[j]
        if tool not in e.named_tools:
            return False
        if any(e.matchers[i].matches(arguments) for i in e.unanchored.get(tool, [])):
            return True
        if arguments is None:
            return False
        return any(
            key in arguments
            and any(
                tool in e.tools[i] and e.matchers[i].matches(arguments)
                for i in e.anchored.get((key, canonical(arguments[key])), [])
            )
            for key in e.anchor_keys
        )

    def block(self, steps: range, calls: range) -> np.ndarray:
        """compatible[i, j] for the steps and calls in these ranges, as a dense boolean array."""
        import numpy as np

        compatible = np.zeros((len(steps), len(calls)), dtype=bool)
        for row, i in enumerate(steps):
            compatible[row, [j - calls.start for j in self.candidates(i) if j in calls]] = True
        return compatible

    def edges(self, steps: Sequence[int], calls: Sequence[int]) -> tuple[list[int], list[int]]:
        """The compatible pairs of these steps and calls, as (positions in `steps`, positions in `calls`)."""
        return _edges([self.candidates(i) for i in steps], calls)


def _edges(candidates: list[list[int]], calls: Sequence[int]) -> tuple[list[int], list[int]]:
    """(row, position in `calls`) for every call of `calls` in each row's candidates, as two lists."""
    position = {j: c for c, j in enumerate(calls)}
    rows, cols = [], []
    for row, found in enumerate(candidates):
        found = [position[j] for j in found if j in position]
        rows += [row] * len(found)
        cols += found
    return rows, cols


def _diagonals(table: _Table, n: int, m: int, top: int | None) -> tuple[int, int]:
    """(head, tail): steps paired with the leading calls and with the trailing calls along the diagonals.

    Each step with the call in its own position from that end (steps of weight `top` only, when given).
    """
    head = table.run(True, top)
    return head, 0 if head == min(n, m) else min(table.run(False, top), min(n, m) - head)


Operations = list[tuple[int | None, int | None]]


def align(table: _Table, n: int, m: int) -> Operations:
    """Order-preserving pairing of maximum weight, as operations in trace order.

    (i, j) pairs step i with call j; (i, None) leaves step i unpaired; (None, j) leaves call j unpaired.

    When every step weighs the same, that is the pairing with the fewest unpaired steps and calls
    (_fewest_unpaired_alignment). Otherwise a leading step of the largest weight that is compatible with the
    leading call is paired with it (some best pairing does so: it can only displace one pair of no greater
    weight), likewise at the end, and the rest by _best_alignment.
    """
    e = table.expectation
    operations = _fewest_unpaired_alignment(table, n, m) if e.uniform else None
    if operations is None:
        head, tail = _diagonals(table, n, m, e.top)
        steps, calls = range(head, n - tail), range(head, m - tail)
        middle = (
            _best_alignment(table.block(steps, calls), e.weights[steps.start : steps.stop]) if steps or calls else []
        )
        operations = _joined(head, middle, tail, n, m)
    return operations


def _joined(head: int, middle: Operations, tail: int, n: int, m: int) -> Operations:
    """The operations of the head's pairs, the middle's (numbered from the head) and the tail's pairs."""
    shifted = [(None if i is None else i + head, None if j is None else j + head) for i, j in middle]
    return [(x, x) for x in range(head)] + shifted + [(n - tail + x, m - tail + x) for x in range(tail)]


def _fewest_unpaired_alignment(table: _Table, n: int, m: int) -> Operations | None:
    """The order-preserving pairing with the fewest unpaired steps and calls, as operations.

    None when that is more than UNPAIRED_SEARCHED. The diagonals are paired first (a trace that follows its expectation
    is aligned in linear time), then _fewest_unpaired searches between them; ties are settled as _best_alignment does.
    """
    head, tail = _diagonals(table, n, m, None)
    steps, calls = range(head, n - tail), range(head, m - tail)
    if not steps or not calls:
        middle: Operations | None = [(i - head, None) for i in steps] + [(None, j - head) for j in calls]
    else:
        middle = _fewest_unpaired(lambda i, j: table.compatible(head + i, head + j), len(steps), len(calls))
    return None if middle is None else _joined(head, middle, tail, n, m)


def _fewest_unpaired(compatible: Callable[[int, int], bool], n: int, m: int) -> Operations | None:
    """The order-preserving pairing that leaves the fewest steps and calls unpaired, as operations.

    None when that is more than UNPAIRED_SEARCHED. Myers' diff, O((n + m)·D) for D unpaired, with compatible(i, j) for
    equality: for d = 0, 1, … the furthest point of each diagonal k = i − j reachable with d unpaired, moving on along
    the diagonal while step i and call j are compatible, until (n, m) is reached.
    """
    limit = UNPAIRED_SEARCHED
    if abs(n - m) > limit:
        return None  # at least |n − m| are left unpaired
    history: list[dict[int, tuple[int, int]]] = []  # for each d: diagonal → (furthest i, the diagonal it came from)
    previous: dict[int, tuple[int, int]] = {}
    for d in range(min(limit, n + m) + 1):
        reached: dict[int, tuple[int, int]] = {}
        for k in range(-d, d + 1, 2):
            if d == 0:
                i, came = 0, 0
            else:
                down = previous.get(k + 1)  # from (i, j − 1): call j − 1 unpaired
                right = previous.get(k - 1)  # from (i − 1, j): step i − 1 unpaired
                if down is not None and down[0] - k > m:
                    down = None
                if right is not None and right[0] >= n:
                    right = None
                if down is not None and (right is None or down[0] >= right[0] + 1):  # leaving a call, on ties
                    i, came = down[0], k + 1
                elif right is not None:
                    i, came = right[0] + 1, k - 1
                else:
                    continue
            j = i - k
            while i < n and j < m and compatible(i, j):
                i, j = i + 1, j + 1
            reached[k] = (i, came)
            if i == n and j == m:
                history.append(reached)
                return _traced_back(history, n, m)
        history.append(reached)
        previous = reached
    return None


def _traced_back(history: list[dict[int, tuple[int, int]]], n: int, m: int) -> Operations:
    """The operations of _fewest_unpaired's path to (n, m), from the diagonals each point came from."""
    operations: Operations = []
    i, j = n, m
    for d in range(len(history) - 1, -1, -1):
        k = i - j
        _, came = history[d][k]
        # where the pairs along diagonal k began: after the move that left a call (down) or a step (right) unpaired
        start_i = 0 if d == 0 else history[d - 1][came][0] + (0 if came == k + 1 else 1)
        while i > start_i:
            i, j = i - 1, j - 1
            operations.append((i, j))
        if d > 0:
            operations.append((None, j - 1) if came == k + 1 else (i - 1, None))
            i, j = (i, j - 1) if came == k + 1 else (i - 1, j)
    operations.reverse()
    return operations


def _best_alignment(compatible: np.ndarray, weights: list[int]) -> list[tuple[int | None, int | None]]:
    """best[i][j] = max(best[i−1][j], best[i][j−1], best[i−1][j−1] + w_i·compatible[i−1][j−1]), then traced back.

    Ties go to pairing the earliest calls, so a surplus call is reported where it appears last.
    """
    import numpy as np

    n, m = compatible.shape
    gain = compatible * np.array(weights, dtype=np.int64)[:, None]
    best = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        row = best[i]
        np.add(best[i - 1, :-1], gain[i - 1], out=row[1:])
        np.maximum(row, best[i - 1], out=row)
        np.maximum.accumulate(row, out=row)
    operations: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i > 0 or j > 0:
        # the calls before j that add nothing to best[i] are left unpaired: back to the first column of equal value
        first = int(np.searchsorted(best[i, : j + 1], best[i, j])) if j > 0 else 0
        operations += [(None, c) for c in range(j - 1, first - 1, -1)]
        j = first
        if i > 0 and best[i, j] == best[i - 1, j]:
            operations.append((i - 1, None))
            i -= 1
        elif i > 0:
            operations.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    operations.reverse()
    return operations


def pair(table: _Table, n: int, m: int) -> list[tuple[int, int]]:
    """One-to-one pairing of maximum weight, in any order: (step, call) pairs.

    First the order-preserving pairing with the fewest unpaired (_fewest_unpaired_alignment), then an
    assignment of the steps it leaves unpaired that are compatible with some call to the calls it leaves
    unpaired. When that pairs them all, no pairing weighs more: each step that can count does. Otherwise (or
    when the first search gave up) an assignment of all steps to all calls.
    """
    operations = _fewest_unpaired_alignment(table, n, m)
    if operations is not None:
        pairs = [(i, j) for i, j in operations if i is not None and j is not None]
        lone_calls = [j for i, j in operations if i is None and j is not None]
        hopeful = [(i, found) for i, j in operations if j is None and i is not None and (found := table.candidates(i))]
        weights = table.expectation.weights
        inner = assign(
            *_edges([found for _, found in hopeful], lone_calls),
            len(hopeful),
            len(lone_calls),
            [weights[i] for i, _ in hopeful],
        )
        if len(inner) == len(hopeful):
            return pairs + [(hopeful[r][0], lone_calls[c]) for r, c in inner]
    return assign(*table.edges(range(n), range(m)), n, m, table.expectation.weights)


def assign(steps: list[int], calls: list[int], n: int, m: int, weights: list[int]) -> list[tuple[int, int]]:
    """One-to-one pairing of maximum weight Σ w_i (over the paired steps) between n steps and m calls.

    Given the compatible (step, call) pairs as two lists; the pairs come back sorted.

    The sets of steps that can be paired at once form a matroid (a transversal one), so the greedy rule is exact:
    steps are taken heaviest first (the earlier first among equals) and each joins when an augmenting path pairs
    it. A path only moves paired steps to other calls, so a step once paired stays paired: where steps compete for
    too few calls, the heavier and then the earlier are paired. When no step and no call has two compatible
    partners, the compatible pairs themselves are that pairing.
    """
    if n == 0 or m == 0 or not steps:
        return []
    if len(set(steps)) == len(steps) and len(set(calls)) == len(calls):
        return sorted(zip(steps, calls))
    partners: list[list[int]] = [[] for _ in range(n)]
    for i, j in zip(steps, calls):
        partners[i].append(j)
    for found in partners:
        found.sort()
    search = _Augmenting(partners)
    for root in sorted(range(n), key=lambda i: -weights[i]):
        if partners[root]:
            search.pair(root)
    return sorted((i, j) for j, i in search.step_of.items())


class _Augmenting:
    """A pairing grown one step at a time by augmenting paths (Kuhn's algorithm).

    A paired call never becomes free again, so each step's search for a free partner resumes where it last stopped.
    """

    def __init__(self, partners: list[list[int]]) -> None:
        self.partners = partners
        self.step_of: dict[int, int] = {}  # call → its step
        self.scanned = [0] * len(partners)  # partners[i][: scanned[i]] are paired calls
        self.visited: set[int] = set()  # calls from which no path reaches a free call, since the pairing changed

    def free_partner(self, step: int) -> int | None:
        found, k = self.partners[step], self.scanned[step]
        while k < len(found) and found[k] in self.step_of:
            k += 1
        self.scanned[step] = k
        return found[k] if k < len(found) else None

    def pair(self, root: int) -> bool:
        """Pair `root` by an augmenting path, depth first.

        The step at hand takes its earliest free partner if it has one, else the path goes on through its next partner
        not yet visited, whose step must then move to another call. On success each step on the path takes the call the
        path left it by.
        """
        path: list[int] = []  # the steps above the one at hand; path[k] was left by through[k]
        through: list[int] = []
        untried: list[Iterator[int]] = []
        step = root
        while (free := self.free_partner(step)) is None:
            path.append(step)
            untried.append(iter(self.partners[step]))
            while path and (call := next((j for j in untried[-1] if j not in self.visited), None)) is None:
                path.pop()
                untried.pop()
                if through:
                    through.pop()
            if call is None:  # the path ran out: no augmenting path from root
                return False
            self.visited.add(call)
            through.append(call)
            step = self.step_of[call]
        for s, j in zip([*path, step], [*through, free]):
            self.step_of[j] = s
        self.visited.clear()
        return True


def _first_divergence(
    operations: Operations, steps: list[ExpectedToolCall], calls_are_extras: bool, total_calls: int
) -> Divergence | None:
    """The first unpaired required step (or, in strict mode, unpaired call), located in the trace."""
    for k, (i, j) in enumerate(operations):
        if i is not None and j is None and not steps[i].optional:
            here = next((jj for _, jj in operations[k + 1 :] if jj is not None), None)
            return Divergence(index=total_calls if here is None else here, step=i, call=here)
        if i is None and j is not None and not calls_are_extras:
            wanted = next((ii for ii, _ in operations[k + 1 :] if ii is not None), None)
            return Divergence(index=j, step=wanted, call=j)
    return None


def _near_misses(missing: list[int], paired_calls: set[int], table: _Table) -> list[NearMiss]:
    """For each of the first EXPLAINED_STEPS missing steps, the closest unpaired call and its mismatches.

    The closest: the unpaired call of a fitting tool with the fewest failing keys (the earliest on ties).
    """
    found = []
    e = table.expectation
    for i in missing[:EXPLAINED_STEPS]:
        matcher = e.matchers[i]
        candidates = [
            (len(matcher.failing_keys(table.arguments[j])), j)
            for tool in e.tools[i]
            for j in table.by_tool.get(tool, [])
            if j not in paired_calls
        ]
        if candidates:
            _, j = min(candidates)
            found.append(NearMiss(i, j, matcher.mismatches(table.calls[j].arguments)))
    return found


def _strangers(table: _Table, n: int, m: int) -> list[int]:
    """The calls compatible with no step.

    Calls an order-preserving pairing pairs are compatible with some step, so only the others are examined (when that
    search gives up, those not compatible with their diagonal step).
    """
    operations = _fewest_unpaired_alignment(table, n, m)
    if operations is None:
        return table.unexplained([j for j in range(m) if not (j < n and table.compatible(j, j))])
    return table.unexplained([j for i, j in operations if i is None and j is not None])


def match_calls(
    steps: list[ExpectedToolCall], calls: list[ToolCall], mode: MatchMode, repeats_allowed: bool = False
) -> CallMatch:
    """Pair expected steps with the trace's calls under `mode` (see the module docstring).

    `repeats_allowed` is `repeated_calls: ignore`.
    """
    table = _Table(compiled(steps), calls)
    n, m = len(steps), len(calls)
    ordered = mode in (MatchMode.STRICT, MatchMode.SUBSEQUENCE)
    operations: Operations = []
    pairs: list[tuple[int, int]]
    unexpected: list[int]
    if ordered:
        operations = align(table, n, m)
        all_paired = len(operations) == n == m  # each operation pairs, or leaves one step or one call unpaired
        pairs = (
            operations  # type: ignore[assignment]  # all paired: no operation holds a None
            if all_paired
            else [(i, j) for i, j in operations if i is not None and j is not None]
        )
        unexpected = (
            [j for i, j in operations if i is None and j is not None]
            if mode is MatchMode.STRICT and len(pairs) < m
            else []
        )
    elif mode is MatchMode.SUPERSET and repeats_allowed:
        pairs, unexpected = [], _strangers(table, n, m)
    else:
        pairs = sorted(pair(table, n, m))
        lone_calls = [] if len(pairs) == m else sorted(set(range(m)) - {j for _, j in pairs})
        if mode is MatchMode.SUBSET:
            unexpected = []
        else:  # unordered, superset: every call left over is unexpected, unless repeats are allowed
            unexpected = table.unexplained(lone_calls) if repeats_allowed else lone_calls
    missing: list[int] = []
    if mode is not MatchMode.SUPERSET and len(pairs) < n:
        paired = {i for i, _ in pairs}
        missing = [i for i, step in enumerate(steps) if not step.optional and i not in paired]
    divergence = (
        _first_divergence(operations, steps, mode is MatchMode.SUBSEQUENCE, m)
        if ordered and (missing or unexpected)
        else None
    )
    paired_calls = {j for _, j in pairs}
    near = _near_misses(missing, paired_calls, table) if missing else []
    out_of_order = _out_of_order(missing, paired_calls, table) if ordered and missing else []
    repeated = _repeated(unexpected, pairs, table) if unexpected and pairs else []
    return CallMatch(
        not missing and not unexpected, pairs, missing, unexpected, divergence, near, out_of_order, repeated
    )


def _out_of_order(missing: list[int], paired_calls: set[int], table: _Table) -> list[tuple[int, int]]:
    """(step, call) for each missing step that an unpaired call fits.

    The call was made, in another place than the order allows. Each call is named for one step at most, the earliest
    fitting one.
    """
    found, taken = [], set()
    for i in missing[:EXPLAINED_STEPS]:
        call = next((j for j in table.candidates(i) if j not in paired_calls and j not in taken), None)
        if call is not None:
            found.append((i, call))
            taken.add(call)
    return found


def _repeated(unexpected: list[int], pairs: list[tuple[int, int]], table: _Table) -> list[tuple[int, int]]:
    """(call, step) for each unexpected call that fits a step already paired with another call: a repeat."""
    found = []
    for j in unexpected[:EXPLAINED_STEPS]:
        step = next((i for i, _ in pairs if table.compatible(i, j)), None)
        if step is not None:
            found.append((j, step))
    return found

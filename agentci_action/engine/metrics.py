"""Pure path-layer formulas, exactly as in the metrics reference.

Recall, precision and the match modes work on *sets* of tool names; sequence similarity,
strict equality and loops on the *ordered list*. Sequence metrics use rapidfuzz (C++), which
stays fast on traces with thousands of calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import NamedTuple

from rapidfuzz.distance import Indel, Levenshtein

from agentci_action._util.limits import MAX_SEQUENCE_CELLS
from agentci_action.spec.models import MatchMode, SequenceMetric

CACHED_FROM_CELLS = 1_000_000  # pairs smaller than this are computed afresh: faster than hashing them
Similarity = Callable[[Sequence[str], Sequence[str]], float]


def tool_recall(expected: set[str], used: set[str]) -> float:
    """|E ∩ U| / |E|; 1.0 when E is empty (no expectations to violate)."""
    if not expected:
        return 1.0
    return len(expected & used) / len(expected)


def tool_precision(expected: set[str], used: set[str]) -> float:
    """|E ∩ U| / |U|; 1.0 when both are empty, 0.0 when nothing was used but something was expected.

    With U empty and E empty: 1.0. With U empty and E non-empty: 0.0.
    """
    if not used:
        return 0.0 if expected else 1.0
    return len(expected & used) / len(used)


def tool_f1(precision: float, recall: float) -> float:
    """2·P·R / (P + R); 0.0 when P + R is 0."""
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def lcs_similarity(predicted: Sequence[str], reference: Sequence[str]) -> float:
    """2·|LCS(P, R)| / (|P| + |R|); 1.0 when both are empty, 0.0 when exactly one is.

    [search, rerank, generate] vs [search, generate] → 2·2 / 5 = 0.80. Past MAX_SEQUENCE_CELLS (|P|·|R|), a lower
    bound (_pairwise): P and R cut into k aligned blocks, 2·Σ|LCS(P_i, R_i)| / (|P| + |R|).
    """
    return sequence_similarity(predicted, reference, SequenceMetric.LCS)


def edit_similarity(predicted: Sequence[str], reference: Sequence[str]) -> float:
    """1 − ED(P, R) / max(|P|, |R|) with ED the Levenshtein distance; 1.0 when both are empty.

    Past MAX_SEQUENCE_CELLS, a lower bound: 1 − Σ ED(P_i, R_i) / max(|P|, |R|) over k aligned blocks.
    """
    return sequence_similarity(predicted, reference, _EDIT_DISTANCE)


def sequence_similarity_is_approximate(predicted: Sequence[str], reference: Sequence[str]) -> bool:
    """Whether the sequence metrics of this pair are the block-wise lower bound, not the exact value."""
    return len(predicted) * len(reference) > MAX_SEQUENCE_CELLS


def _blocks(predicted: Sequence[str], reference: Sequence[str]) -> list[tuple[Sequence[str], Sequence[str]]]:
    """P and R cut into k aligned blocks (block i: the i-th k-th of each), k = ⌈|P|·|R| / MAX_SEQUENCE_CELLS⌉.

    So the blocks' exact metrics together cost |P|·|R| / k ≤ MAX_SEQUENCE_CELLS cells. Common subsequences (edit
    scripts) of the blocks joined are one of the whole lists: the result bounds the exact metric from below.
    """
    k = -(-len(predicted) * len(reference) // MAX_SEQUENCE_CELLS)
    return [(_cut(predicted, i, k), _cut(reference, i, k)) for i in range(k)]


def _cut(items: Sequence[str], i: int, k: int) -> Sequence[str]:
    """The i-th of k aligned blocks of `items`."""
    return items[len(items) * i // k : len(items) * (i + 1) // k]


def _pairwise(exact: Similarity, bound: Similarity) -> Similarity:
    """`exact` computed once per pair of lists, and `bound` instead past MAX_SEQUENCE_CELLS.

    For pairs past CACHED_FROM_CELLS: `exact` computed once per pair of lists (a path check, the closest variant and the
    diff ask for the same pair: on 100,000-call traces each costs seconds), and `bound` instead past MAX_SEQUENCE_CELLS
    |P|·|R| (the bit-parallel exact metric costs |P|·|R|/64 steps: minutes for a million calls on each side).
    """
    known: dict[tuple[int, int, int, int], float] = {}

    def similarity(predicted: Sequence[str], reference: Sequence[str]) -> float:
        cells = len(predicted) * len(reference)
        key = (hash(tuple(predicted)), len(predicted), hash(tuple(reference)), len(reference))
        if key not in known:
            if len(known) >= 256:
                known.clear()
            known[key] = exact(predicted, reference) if cells <= MAX_SEQUENCE_CELLS else bound(predicted, reference)
        return known[key]

    return similarity


_lcs = _pairwise(
    Indel.normalized_similarity,  # Indel.similarity = 2·|LCS|
    lambda p, r: sum(Indel.similarity(a, b) for a, b in _blocks(p, r)) / (len(p) + len(r)),
)
_edit = _pairwise(
    Levenshtein.normalized_similarity,
    lambda p, r: 1 - sum(Levenshtein.distance(a, b) for a, b in _blocks(p, r)) / max(len(p), len(r)),
)


def sequence_similarity(predicted: Sequence[str], reference: Sequence[str], metric: SequenceMetric) -> float:
    """The chosen sequence metric: lcs_similarity or edit_similarity."""
    edit = metric is _EDIT_DISTANCE
    if len(predicted) * len(reference) <= CACHED_FROM_CELLS:  # computed afresh: cheaper than the memo's key
        similarity: float = (Levenshtein if edit else Indel).normalized_similarity(predicted, reference)
        return similarity
    return (_edit if edit else _lcs)(predicted, reference)


_EDIT_DISTANCE = SequenceMetric.EDIT_DISTANCE


class Loop(NamedTuple):
    """A run of `count` consecutive calls to `tool` starting at 0-based `start` (a tuple: traces have many)."""

    tool: str
    start: int
    count: int  # type: ignore[assignment]  # shadows tuple.count on purpose: the results JSON calls it count

    @property
    def repeats(self) -> int:
        return self.count - 1


def find_loops(sequence: Sequence[str]) -> list[Loop]:
    """Runs of the same tool called two or more times in a row."""
    loops: list[Loop] = []
    previous = None  # the tool of the call before
    for i, name in enumerate(sequence):
        if name == previous:  # a repeat, rarer than a change: only a repeat does more than this test
            if loops and (last := loops[-1]).start + last.count == i:  # the last loop goes on
                loops[-1] = _new_tuple(Loop, (name, last.start, last.count + 1))
            else:  # each Loop made as Loop._make does, without the Python-level __new__ of a NamedTuple
                loops.append(_new_tuple(Loop, (name, i - 1, 2)))
        previous = name
    return loops


_new_tuple = tuple.__new__


def loop_count(sequence: Sequence[str]) -> int:
    """Number of i ≥ 1 with P[i] == P[i−1]. [search, search, grade, grade, grade] → 3."""
    return sum(loop.repeats for loop in find_loops(sequence))


_SEPARATORS = re.compile(r"[\s_\-]+")


@lru_cache(maxsize=4096)  # a suite calls a few dozen distinct tools, thousands of times
def normalize_tool_name(name: str) -> str:
    """Case- and separator-insensitive key: EditFile, edit_file, edit-file and 'Edit File' are one tool.

    Separators (underscore, hyphen, white space) are dropped and the rest lower-cased.
    """
    return _SEPARATORS.sub("", name).lower()


def tool_key(name: str, normalize: bool = True) -> str:
    """The name used to compare against allow and deny lists: normalize_tool_name(name), or name itself."""
    return normalize_tool_name(name) if normalize else name


def _positions(used: Sequence[str], keys: AbstractSet[str], normalize: bool) -> dict[str, list[int]]:
    """{key: 0-based positions of the calls whose tool has that key}, for the keys in `keys` only."""
    key_of = {name: normalize_tool_name(name) for name in set(used)} if normalize else {name: name for name in used}
    found: dict[str, list[int]] = {}
    if not keys.isdisjoint(key_of.values()):
        for position, name in enumerate(used):
            if key_of[name] in keys:
                found.setdefault(key_of[name], []).append(position)
    return found


def forbidden_calls(
    used: Sequence[str], forbidden: Sequence[str], normalize: bool = True, distinct: AbstractSet[str] | None = None
) -> dict[str, list[int]]:
    """Each forbidden tool that was used, as the spec names it, with the 0-based positions of its calls.

    Once per tool, in spec order. `distinct`: set(used), when the caller has it.
    """
    deny = _deny_list(tuple(forbidden), normalize)
    # the common case: every tool called was seen allowed by this list before (each tool tested once, not each call)
    if deny.allowed.issuperset(used if distinct is None else distinct):
        return {}
    positions = _positions(used, deny.keys, normalize)
    if not positions and len(deny.allowed) < MAX_ALLOWED_SEEN:
        deny.allowed.update(used)
    return {name: positions[key] for key, name in deny.spec_names.items() if key in positions} if positions else {}


MAX_ALLOWED_SEEN = 4096  # tool names remembered as allowed, per deny-list


class _DenyList(NamedTuple):
    spec_names: dict[str, str]  # key → the first spec name with that key
    keys: frozenset[str]
    allowed: set[str]  # tool names (as called) seen not to be on the list: a memo forbidden_calls grows


@lru_cache(maxsize=1024)  # a suite's queries share a few deny-lists
def _deny_list(names: tuple[str, ...], normalize: bool) -> _DenyList:
    """A deny-list keyed for matching, and its memo of allowed names. Read only but for that memo."""
    spec_names: dict[str, str] = {}
    for name in names:
        spec_names.setdefault(tool_key(name, normalize), name)
    return _DenyList(spec_names, frozenset(spec_names), set())


def forbidden_violations(used: Sequence[str], forbidden: Sequence[str], normalize: bool = True) -> list[str]:
    """The forbidden tools (as the spec names them) that were used, each once, in spec order."""
    return list(forbidden_calls(used, forbidden, normalize))


def disallowed_calls(used: Sequence[str], allowed: Sequence[str], normalize: bool = True) -> dict[str, list[int]]:
    """Each tool called that is not on the allow-list, with the 0-based positions of its calls.

    As the trace first names it, in order of first use.
    """
    allowed_keys = {tool_key(name, normalize) for name in allowed}
    outside = {tool_key(name, normalize) for name in set(used)} - allowed_keys
    positions = _positions(used, outside, normalize)
    return dict(sorted(((used[calls[0]], calls) for calls in positions.values()), key=lambda item: item[1][0]))


class MatchOutcome(NamedTuple):
    """Whether P matches R under a mode, and where it diverged (a tuple: one is made per run and reference)."""

    matched: bool
    missing: list[str]  # reference tools not used
    unexpected: list[str]  # used tools not in the reference
    first_divergence: tuple[int, str | None, str | None] | None = None  # (index, expected, actual)


def _first_divergence(predicted: Sequence[str], reference: Sequence[str]) -> tuple[int, str | None, str | None] | None:
    for i in range(max(len(predicted), len(reference))):
        expected = reference[i] if i < len(reference) else None
        actual = predicted[i] if i < len(predicted) else None
        if expected != actual:
            return (i, expected, actual)
    return None


_STRICT, _UNORDERED, _SUBSET, _SUPERSET = MatchMode.STRICT, MatchMode.UNORDERED, MatchMode.SUBSET, MatchMode.SUPERSET


def _ordered_unique(items: Sequence[str], keep: set[str]) -> list[str]:
    """The items in `keep` (a subset of them), each once, in order of first occurrence."""
    if len(keep) < 2:  # nothing to order: a failed match usually misses (or adds) one tool
        return list(keep)
    return list(dict.fromkeys(x for x in items if x in keep))


def match(
    predicted: Sequence[str], reference: Sequence[str], mode: MatchMode, distinct: set[str] | None = None
) -> MatchOutcome:
    """Compare P with R; `distinct` is set(P), when the caller has it.

    strict: P == R · unordered: set(P) == set(R) · subset: set(R) ⊆ set(P) ·
    superset: set(P) ⊆ set(R) · subsequence: R is a subsequence of P (in order, extras allowed).

    first_divergence is (index into P, expected, actual or None at the end of P). strict: the first i with
    P[i] ≠ R[i]. subsequence: a greedy walk matches R's first j tools as early as possible, so R[j] occurs
    nowhere after the last matched call and the walk runs off the end: (len(P), R[j], None).
    """
    # Each mode works out only the lists it reports. Each outcome is made as MatchOutcome._make does, without the
    # Python-level __new__ of a NamedTuple: one is made per run, and that __new__ cost more than the subset test.
    used = set(predicted) if distinct is None else distinct
    if mode is _SUBSET:
        if used.issuperset(reference):  # the common case: no list to build
            return _new_tuple(MatchOutcome, (True, [], [], None))
        return _new_tuple(MatchOutcome, (False, _ordered_unique(reference, set(reference) - used), [], None))
    if mode is _SUPERSET:
        unexpected = _ordered_unique(predicted, used.difference(reference))
        return _new_tuple(MatchOutcome, (not unexpected, [], unexpected, None))
    ref = set(reference)
    missing = _ordered_unique(reference, ref - used)
    if mode is _STRICT:
        divergence = _first_divergence(predicted, reference)
        return _new_tuple(
            MatchOutcome, (divergence is None, missing, _ordered_unique(predicted, used - ref), divergence)
        )
    if mode is _UNORDERED:
        unexpected = _ordered_unique(predicted, used - ref)
        return _new_tuple(MatchOutcome, (not missing and not unexpected, missing, unexpected, None))
    # subsequence: walk P once, advancing through R
    j = 0
    for name in predicted:
        if j < len(reference) and name == reference[j]:
            j += 1
    if j == len(reference):
        return _new_tuple(MatchOutcome, (True, [], [], None))
    return _new_tuple(MatchOutcome, (False, missing, [], (len(predicted), reference[j], None)))

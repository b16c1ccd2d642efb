"""Near-duplicate texts among thousands, without comparing every pair: word sets, Jaccard, a prefix-filtered index.

Two texts are near-duplicates when the Jaccard similarity of their word sets, |A ∩ B| / |A ∪ B|, is at least the
threshold t (words: runs of letters and digits, lower-cased). Comparing each new text with every kept one is quadratic
(10,000 traces: 50 million set comparisons). The index finds the same pairs by prefix filtering (Bayardo et al., "Scaling
up all pairs similarity search", 2007): order every word by how few texts hold it, rarest first; a text's prefix is its
first |A| − ⌈t·|A|⌉ + 1 words in that order. If J(A, B) ≥ t the two sets share at least ⌈t·max(|A|, |B|)⌉ words, so
the rarest word they share lies in both prefixes: looking up only the prefix words of a text finds every near-duplicate,
and the rare words that make up prefixes are held by few texts. Each candidate found is then measured exactly.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    """The lower-cased words of `text` (runs of letters, digits and underscores)."""
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|A ∩ B| / |A ∪ B|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


class NearDuplicates:
    """Texts kept so far, each under a key; `find` names the most similar one at or above the threshold.

    Built knowing every text it will see (`vocabulary`: the word sets of the kept and the candidates alike), so that the
    rarest-first order is one order for all of them.
    """

    def __init__(self, threshold: float, vocabulary: Iterable[frozenset[str]]):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"the similarity threshold is a fraction above 0 and at most 1, got {threshold}")
        self.threshold = threshold
        self._rank = {word: n for n, (word, _) in enumerate(sorted(_counts(vocabulary).items(), key=_rarest))}
        self._index: dict[str, list[tuple[str, frozenset[str]]]] = {}

    def _prefix(self, found: frozenset[str]) -> list[str]:
        ordered = sorted(found, key=lambda word: self._rank.get(word, -1))  # a word never seen is the rarest
        return ordered[: len(found) - math.ceil(self.threshold * len(found) - 1e-9) + 1]

    def add(self, key: str, found: frozenset[str]) -> None:
        for word in self._prefix(found):
            self._index.setdefault(word, []).append((key, found))

    def find(self, found: frozenset[str]) -> tuple[str, float] | None:
        """The kept key most similar to `found` (ties: the first kept) and the similarity; None below the threshold.

        A kept set of fewer than t·|A| or more than |A|/t words cannot reach t: skipped unmeasured (the hot loop of a
        promotion of 10,000 traces, so the measure is written out here rather than called).
        """
        best: tuple[str, float] | None = None
        seen: set[str] = set()
        size = len(found)
        low, high = self.threshold * size, size / self.threshold
        for word in self._prefix(found):
            for key, other in self._index.get(word, ()):
                if key in seen:
                    continue
                seen.add(key)
                length = len(other)
                if length < low or length > high:
                    continue
                shared = len(found & other)
                similarity = shared / (size + length - shared)
                if similarity >= self.threshold and (best is None or similarity > best[1]):
                    best = (key, similarity)
        return best


def _counts(vocabulary: Iterable[frozenset[str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for found in vocabulary:
        counts.update(found)
    return counts


def _rarest(item: tuple[str, int]) -> tuple[int, str]:
    word, count = item
    return count, word

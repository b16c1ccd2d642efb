"""Longest common substring for context intrusion: cydifflib against difflib and the textbook programme.

Cydifflib (what the engine uses: difflib's algorithm in C++) against the standard library's difflib and the textbook
dynamic programme of the metrics reference, side by side on the same texts in one run.

    python benchmarks/bench_context_intrusion.py [--pairs 20] [--answer 800] [--document 2000]

Texts are English-like (words drawn from a small vocabulary, so matches are frequent), each answer copying one
sentence-length span of its document. Prints milliseconds per (document, answer) pair for each and the
ratios, after checking all three give the same lengths.
"""

from __future__ import annotations

import argparse
import random
import time
from difflib import SequenceMatcher

from agentci_action.engine.checks.rag import longest_common_substring, normalize_for_lcs

WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "that",
    "by",
    "this",
    "as",
    "refund",
    "order",
    "account",
    "password",
    "reset",
    "settings",
    "billing",
]


def text(rng: random.Random, length: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < length:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:length]


def dynamic_programme(a: str, b: str) -> int:
    """The metrics reference's O(|a|·|b|) table, one row at a time."""
    best, previous = 0, [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                current[j] = previous[j - 1] + 1
                if current[j] > best:
                    best = current[j]
        previous = current
    return best


def standard_difflib(a: str, b: str) -> int:
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b)).size


def timed(function, pairs) -> tuple[float, list[int]]:
    start = time.perf_counter()
    lengths = [function(doc, answer) for doc, answer in pairs]
    return time.perf_counter() - start, lengths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--answer", type=int, default=800, help="answer length in characters")
    parser.add_argument("--document", type=int, default=2000, help="document length in characters")
    args = parser.parse_args()
    rng = random.Random(8)
    pairs = []
    for _ in range(args.pairs):
        document = text(rng, args.document)
        start = rng.randrange(0, args.document - 150)
        answer = (
            text(rng, args.answer // 2) + " " + document[start : start + 150] + " " + text(rng, args.answer // 2 - 152)
        )
        pairs.append((normalize_for_lcs(document), normalize_for_lcs(answer)))
    engine, engine_lengths = timed(longest_common_substring, pairs)
    stdlib, stdlib_lengths = timed(standard_difflib, pairs)
    table, table_lengths = timed(dynamic_programme, pairs)
    assert engine_lengths == stdlib_lengths == table_lengths, "the three disagree"
    print(
        f"{args.pairs} pairs, answer {args.answer} chars, document {args.document} chars, same lengths from all three"
    )
    for name, seconds in (("cydifflib (engine)", engine), ("difflib (stdlib)", stdlib), ("dynamic programme", table)):
        print(f"{name:<22} {seconds / args.pairs * 1000:9.2f} ms per pair   {seconds / engine:7.1f}x the engine's time")


if __name__ == "__main__":
    main()

"""Retrieval quality against labelled sources, verbatim copying from the context, and citations.

Retrieved documents are ranked in the order the trace lists them; a document is relevant when its `id` is
one of the query's `expected_sources`. Without labels the retrieval metrics are None (N/A), never 0.
"""

from __future__ import annotations

import re

from cydifflib import SequenceMatcher

from agentci_action.engine.checks._measured import bounded, skipped, verdict
from agentci_action.engine.results import Check
from agentci_action.spec.check_models import RagChecks
from agentci_action.trace.canonical import Trace


def recall_at_k(expected: list[str] | None, retrieved: list[str | None], k: int) -> float | None:
    """|expected ∩ top-k ids| / |expected|; None without expected sources."""
    if not expected:
        return None
    top = set(retrieved[:k])
    return sum(source in top for source in set(expected)) / len(set(expected))


def precision_at_k(expected: list[str] | None, retrieved: list[str | None], k: int) -> float | None:
    """Relevant documents in the top k / min(k, |retrieved|); None without expected sources or retrieved documents."""
    if not expected or not retrieved:
        return None
    labels = set(expected)
    return sum(doc in labels for doc in retrieved[:k]) / min(k, len(retrieved))


def normalize_for_lcs(text: str) -> str:
    """Lower-case, white space collapsed to single spaces, trimmed."""
    return " ".join(text.lower().split())


def longest_common_substring(a: str, b: str) -> int:
    """Length of the longest contiguous string that a and b share (cydifflib, difflib's algorithm in C++; junk heuristic off: exact)."""
    if not a or not b:
        return 0
    return int(SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b)).size)


def intrusion_ratio(documents: list[str], answer: str) -> float | None:
    """(Σ LCS(normalised doc, normalised answer) / |documents|) / len(answer), as the metrics reference has it.

    The LCS compares normalised texts, but the divisor is the length of the answer as given (not normalised),
    so white space the normalisation removes lowers the ratio. 0.0 for an empty answer; None without documents.
    """
    if not documents:
        return None
    if not answer:
        return 0.0
    normalised = normalize_for_lcs(answer)
    total = sum(longest_common_substring(normalize_for_lcs(doc), normalised) for doc in documents)
    return total / len(documents) / len(answer)


def intrusion_score(ratio: float) -> float:
    """The ratio mapped piecewise to 0-100.

    ≤ 0.15 → 0 · 0.15-0.30 → 0-20 · 0.30-0.50 → 20-60 · 0.50-0.70 → 60-90 · above → 90 + min(10, (r − 0.70) / 0.30 · 10),
    linear inside each piece, clamped to [0, 100].
    """
    if ratio <= 0.15:
        score = 0.0
    elif ratio <= 0.30:
        score = (ratio - 0.15) / 0.15 * 20
    elif ratio <= 0.50:
        score = 20 + (ratio - 0.30) / 0.20 * 40
    elif ratio <= 0.70:
        score = 60 + (ratio - 0.50) / 0.20 * 30
    else:
        score = 90 + min(10.0, (ratio - 0.70) / 0.30 * 10)
    return max(0.0, min(100.0, score))


CITATION_PATTERNS = {  # kind → (pattern, weight in the citation score)
    "numbered": (re.compile(r"\[\d+(?:\s*[,–-]\s*\d+)*\]"), 1.0),
    "named": (re.compile(r"\[(?!\d+(?:\s*[,–-]\s*\d+)*\])[^\[\]\n]{2,80}\]"), 0.8),
    "source": (re.compile(r"\b(?:source|sources)\s*:\s*\S", re.IGNORECASE), 0.7),
    "according_to": (re.compile(r"\baccording to\s+\S", re.IGNORECASE), 0.5),
}


def find_citations(answer: str) -> dict[str, int]:
    """How many citations of each kind the answer holds: [1] or [1, 2]; [Source name]; 'Source: …'; 'according to …'."""
    counts = {kind: len(pattern.findall(answer)) for kind, (pattern, _) in CITATION_PATTERNS.items()}
    return {kind: count for kind, count in counts.items() if count}


def citation_score(found: dict[str, int]) -> float:
    """max(weight of the kinds found) × 100, × (1 + 0.1 × (citations − 1)) for several, capped at 100; 0 with none."""
    if not found:
        return 0.0
    score = max(CITATION_PATTERNS[kind][1] for kind in found) * 100
    citations = sum(found.values())
    return min(100.0, score * (1.0 + 0.1 * (citations - 1)))


def evaluate(group: RagChecks, trace: Trace, expected_sources: list[str] | None) -> list[Check]:
    ids = [doc.id for doc in trace.retrieved_context]
    no_labels = "the query has no expected_sources"
    recall = recall_at_k(expected_sources, ids, group.k)
    precision = precision_at_k(expected_sources, ids, group.k)
    checks = [
        bounded(group, "min_recall_at_k", recall, group.min_recall_at_k, f"recall@{group.k}", missing=no_labels),
        bounded(
            group,
            "min_precision_at_k",
            precision,
            group.min_precision_at_k,
            f"precision@{group.k}",
            missing=no_labels if not expected_sources else "the trace has no retrieved_context",
        ),
    ]
    for check in checks[:2]:
        if check is not None:
            check.data["k"] = group.k
    if group.max_context_intrusion is not None:
        ratio = intrusion_ratio([doc.text for doc in trace.retrieved_context], trace.final_answer)
        if ratio is None:
            checks.append(skipped("max_context_intrusion", "the trace has no retrieved_context"))
        else:
            check = bounded(
                group,
                "max_context_intrusion",
                intrusion_score(ratio),
                group.max_context_intrusion,
                "context intrusion (verbatim copying from retrieved documents)",
            )
            assert check is not None  # the limit is set
            check.data["lcs_ratio"] = ratio
            checks.append(check)
    if group.require_citations:
        found = find_citations(trace.final_answer)
        checks.append(
            verdict(
                group,
                "require_citations",
                bool(found),
                "the answer cites no source ([1], [Source], 'according to …')",
                {"citations": found, "citation_score": citation_score(found)},
            )
        )
    return [c for c in checks if c is not None]

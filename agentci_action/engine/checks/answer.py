"""The answer against the query's reference answer: normalised exact match, ROUGE, BLEU, semantic similarity.

ROUGE uses Google's `rouge-score` (Porter stemmer; its tokenizer keeps only ASCII letters and digits, so it
suits English text); BLEU uses `sacrebleu`'s sentence BLEU (exponential smoothing), divided by 100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from agentci_action._util.extras import require
from agentci_action.engine.checks._measured import bounded, skipped, verdict
from agentci_action.engine.results import Check, Status
from agentci_action.spec.check_models import AnswerChecks

ROUGE_KEYS = {"min_rouge_1": "rouge1", "min_rouge_2": "rouge2", "min_rouge_l": "rougeL"}


class EmbeddingUnavailable(Exception):
    """No embedding provider can be used (no key, no endpoint): the check is skipped with this reason."""


class EmbeddingError(Exception):
    """The provider did not answer after every retry: an infrastructure error."""


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order. Raises EmbeddingUnavailable or EmbeddingError."""
        ...


class NoEmbedder:
    """Stands in when no provider can be used: every request says why, and the check is skipped."""

    def __init__(self, reason: str):
        self.reason = reason

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise EmbeddingUnavailable(self.reason)


def normalized_exact_match(answer: str, reference: str) -> bool:
    """answer.strip().lower() == reference.strip().lower()."""
    return answer.strip().lower() == reference.strip().lower()


def rouge_f1(answer: str, reference: str) -> dict[str, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F1 of the answer against the reference (rouge-score, use_stemmer=True).

    F1 = 2·P·R / (P + R) with P = overlap / answer n-grams, R = overlap / reference n-grams (LCS for ROUGE-L).
    """
    # imported here: it pulls in nltk (~0.2 s), paid only by specs that use ROUGE
    rouge_scorer = require("rouge_score.rouge_scorer", "ROUGE (min_rouge)")

    scores = rouge_scorer.RougeScorer(list(ROUGE_KEYS.values()), use_stemmer=True).score(reference, answer)
    return {key: scores[key].fmeasure for key in ROUGE_KEYS.values()}


def bleu(answer: str, reference: str) -> float:
    """sacrebleu sentence BLEU / 100, in [0, 1]: BP · exp(Σ¼ log pₙ) over 1- to 4-gram precisions pₙ."""
    sacrebleu = require("sacrebleu", "BLEU (min_bleu)")  # imported here, like rouge_score

    return min(1.0, float(sacrebleu.sentence_bleu(answer, [reference]).score) / 100)


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """a·b / (|a|·|b|) clamped to [0, 1]; 0.0 when either vector is all zeros."""
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0:
        return 0.0
    return max(0.0, min(1.0, sum(x * y for x, y in zip(a, b, strict=True)) / norm))


def evaluate(group: AnswerChecks, answer: str, reference: str | None, embedder: Embedder | None) -> list[Check]:
    """Each answer check the group sets; all skip (N/A) when the query has no reference_answer."""
    wanted = [name for name in group.CHECKS if getattr(group, name) is not None and getattr(group, name) is not False]
    if reference is None:
        return [skipped(name, "the query has no reference_answer") for name in wanted]
    checks: list[Check | None] = []
    if group.normalized_exact_match:
        checks.append(
            verdict(
                group,
                "normalized_exact_match",
                normalized_exact_match(answer, reference),
                "answer differs from reference_answer (after trimming and lower-casing)",
            )
        )
    if any(getattr(group, name) is not None for name in ROUGE_KEYS):
        scores = rouge_f1(answer, reference)
        for name, key in ROUGE_KEYS.items():
            checks.append(bounded(group, name, scores[key], getattr(group, name), f"{key} F1"))
    if group.min_bleu is not None:
        checks.append(bounded(group, "min_bleu", bleu(answer, reference), group.min_bleu, "BLEU"))
    if group.min_semantic_similarity is not None:
        checks.append(_semantic_similarity(group, answer, reference, embedder))
    return [c for c in checks if c is not None]


def _semantic_similarity(group: AnswerChecks, answer: str, reference: str, embedder: Embedder | None) -> Check | None:
    name = "min_semantic_similarity"
    if not answer.strip():
        similarity = 0.0
    else:
        try:
            if embedder is None:
                raise EmbeddingUnavailable("no embedding provider is configured")
            answer_vector, reference_vector = embedder.embed([answer, reference])
        except EmbeddingUnavailable as exc:
            return skipped(name, str(exc))
        except EmbeddingError as exc:
            return Check(
                name=name, status=Status.ERROR, message=f"[INFRA] semantic similarity: {exc}", data={"value": None}
            )
        similarity = cosine_similarity(answer_vector, reference_vector)
    return bounded(group, name, similarity, group.min_semantic_similarity, "semantic similarity")

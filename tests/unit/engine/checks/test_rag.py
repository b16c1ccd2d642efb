"""RAG: recall@k and precision@k, context intrusion by longest common substring, citations.

recall@k and precision@k are N/A without labels; context intrusion is tested with every boundary of the piecewise
mapping.
"""

import random

import pytest

from agentci_action.engine.checks.rag import (
    citation_score,
    evaluate,
    find_citations,
    intrusion_ratio,
    intrusion_score,
    longest_common_substring,
    precision_at_k,
    recall_at_k,
)
from agentci_action.engine.results import Status
from agentci_action.spec.check_models import RagChecks
from agentci_action.trace.canonical import Trace

RETRIEVED = ["a", "x", "b", "y", "z", "c"]


def test_recall_and_precision_at_k_by_hand():
    assert recall_at_k(["a", "b", "c"], RETRIEVED, 5) == pytest.approx(2 / 3)  # c is sixth
    assert precision_at_k(["a", "b", "c"], RETRIEVED, 5) == pytest.approx(2 / 5)
    assert recall_at_k(["a", "b", "c"], RETRIEVED, 2) == pytest.approx(1 / 3)
    assert precision_at_k(["a", "b", "c"], RETRIEVED, 2) == pytest.approx(1 / 2)
    assert precision_at_k(["a"], ["a"], 5) == 1.0  # divides by min(k, retrieved) = 1
    assert recall_at_k(["a", "a", "q"], ["a"], 5) == pytest.approx(1 / 2)  # expected sources count once


def test_without_labels_the_metrics_are_none_not_zero():
    assert recall_at_k(None, RETRIEVED, 5) is None and recall_at_k([], RETRIEVED, 5) is None
    assert precision_at_k(None, RETRIEVED, 5) is None
    assert precision_at_k(["a"], [], 5) is None
    assert recall_at_k(["a"], [], 5) == 0.0  # labelled, nothing found: a real zero


def naive_lcs(a: str, b: str) -> int:
    best, previous = 0, [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def test_longest_common_substring_matches_the_dynamic_programme():
    assert longest_common_substring("abcde", "xbcdy") == 3
    assert longest_common_substring("", "abc") == 0
    rng = random.Random(8)
    for _ in range(300):
        a = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 60)))
        b = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 60)))
        assert longest_common_substring(a, b) == naive_lcs(a, b)


def test_intrusion_ratio_by_hand():
    # normalised answer "the sky is blue today" has 21 characters; LCS with doc 1 "the sky is blue" = 15, doc 2 = 0
    ratio = intrusion_ratio(["The  sky is\nBLUE.", "QQQQ"], "The sky is blue today")
    assert ratio == pytest.approx((15 + 0) / 2 / 21)
    assert intrusion_score(ratio) == pytest.approx(20 + (15 / 42 - 0.30) / 0.20 * 40)
    assert intrusion_ratio([], "answer") is None
    assert intrusion_ratio(["doc"], "   ") == 0.0


def test_intrusion_ratio_divides_by_the_answer_as_given_like_the_reference():
    """The reference: LCS of normalised texts / len(response), the raw answer.

    A verbatim copy padded with triple spaces: LCS 44 (the normalised texts are equal), raw answer 44 + 6 gaps × 2 extra
    spaces = 56 characters.
    """
    doc = "refunds are issued within five business days"
    answer = "Refunds   are   issued   within   five   business   days"
    assert len(doc) == 44 and len(answer) == 56
    ratio = intrusion_ratio([doc], answer)
    assert ratio == pytest.approx(44 / 56)
    assert intrusion_score(ratio) == pytest.approx(90 + (44 / 56 - 0.70) / 0.30 * 10) == pytest.approx(92.857, abs=1e-3)
    assert intrusion_score(intrusion_ratio([doc], " ".join(answer.split()))) == 100.0  # the same copy, single-spaced


@pytest.mark.parametrize(
    "ratio, score",
    [
        (0.0, 0.0),
        (0.15, 0.0),
        (0.225, 10.0),
        (0.30, 20.0),
        (0.40, 40.0),
        (0.50, 60.0),
        (0.60, 75.0),
        (0.70, 90.0),
        (0.85, 95.0),
        (1.0, 100.0),
        (1.5, 100.0),
    ],
)
def test_intrusion_mapping_at_and_between_every_boundary(ratio, score):
    assert intrusion_score(ratio) == pytest.approx(score)


@pytest.mark.parametrize("boundary", [0.15, 0.30, 0.50, 0.70, 1.0])
def test_intrusion_mapping_is_continuous_at_each_boundary(boundary):
    assert intrusion_score(boundary + 1e-9) == pytest.approx(intrusion_score(boundary), abs=1e-5)
    assert intrusion_score(boundary - 1e-9) == pytest.approx(intrusion_score(boundary), abs=1e-5)


def test_citation_patterns_and_score():
    assert find_citations("Rates rose [1] and fell [2, 3].") == {"numbered": 2}
    assert find_citations("See [World Bank report].") == {"named": 1}
    assert find_citations("According to the WHO, yes. Source: the 2024 survey") == {"source": 1, "according_to": 1}
    assert find_citations("No citation here, just an array a[i].") == {}
    assert citation_score({}) == 0.0
    assert citation_score({"named": 1}) == 80.0
    assert citation_score({"named": 2}) == pytest.approx(88.0)  # 80 × (1 + 0.1)
    assert citation_score({"according_to": 1}) == 50.0
    assert citation_score({"numbered": 1, "named": 1}) == 100.0  # 100 × 1.1, capped


def trace(answer: str, docs: list[tuple[str | None, str]]) -> Trace:
    return Trace(id="q", final_answer=answer, retrieved_context=[{"id": i, "text": t} for i, t in docs])


def test_checks_report_values_and_say_heuristic():
    group = RagChecks(
        k=2, min_recall_at_k=0.5, min_precision_at_k=0.5, max_context_intrusion=10, require_citations=True
    )
    checks = {
        c.name: c
        for c in evaluate(
            group, trace("The sky is blue today", [("d1", "the sky is blue"), ("d2", "grass")]), ["d1", "d3"]
        )
    }
    assert checks["min_recall_at_k"].status is Status.PASS and checks["min_recall_at_k"].data == {
        "value": 0.5,
        "min": 0.5,
        "severity": "warn",
        "k": 2,
    }
    assert checks["min_precision_at_k"].status is Status.PASS
    intrusion = checks["max_context_intrusion"]
    assert intrusion.status is Status.WARN and intrusion.message.startswith("heuristic: context intrusion")
    assert intrusion.data["lcs_ratio"] == pytest.approx((15 + 1) / 2 / 21)  # "grass" shares one letter, "s"
    citations = checks["require_citations"]
    assert citations.status is Status.WARN and citations.message.startswith("heuristic: the answer cites no source")


def test_checks_without_labels_or_context_skip_with_the_reason():
    group = RagChecks(min_recall_at_k=0.5, min_precision_at_k=0.5, max_context_intrusion=50)
    checks = evaluate(group, trace("answer", []), None)
    assert [(c.name, c.status, c.data["value"]) for c in checks] == [
        ("min_recall_at_k", Status.SKIP, None),
        ("min_precision_at_k", Status.SKIP, None),
        ("max_context_intrusion", Status.SKIP, None),
    ]
    assert checks[0].message == "min_recall_at_k skipped: the query has no expected_sources"
    assert checks[2].message == "max_context_intrusion skipped: the trace has no retrieved_context"
    labelled = evaluate(group, trace("answer", []), ["d1"])
    assert labelled[0].status is Status.WARN and labelled[0].data["value"] == 0.0  # recall 0 is a real zero
    assert labelled[1].message == "min_precision_at_k skipped: the trace has no retrieved_context"

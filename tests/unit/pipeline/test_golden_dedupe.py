"""The near-duplicate index finds exactly the pairs a comparison of every pair finds, without comparing every pair."""

from __future__ import annotations

import random

import pytest

from agentci_action.pipeline.golden_dedupe import NearDuplicates, jaccard, words


def test_jaccard_of_word_sets():
    assert jaccard(words("Cancel my flight, please"), words("please cancel MY flight")) == 1.0
    assert jaccard(words("a b c d"), words("a b c e")) == pytest.approx(3 / 5)
    assert jaccard(frozenset(), frozenset()) == 1.0


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8, 1.0])
def test_the_index_agrees_with_every_pair_compared(threshold):
    rng = random.Random(threshold)
    vocabulary = [f"w{n}" for n in range(60)]
    texts = [frozenset(rng.sample(vocabulary[: rng.randrange(12, 60)], rng.randrange(1, 12))) for _ in range(400)]
    texts += [frozenset(list(t)[:-1]) for t in texts[:50] if len(t) > 1]  # near copies
    index = NearDuplicates(threshold, texts)
    kept: list[tuple[str, frozenset[str]]] = []
    for n, found in enumerate(texts):
        expected = [(key, jaccard(found, other)) for key, other in kept if jaccard(found, other) >= threshold]
        best = index.find(found)
        if not expected:
            assert best is None
        else:
            assert best is not None and best[1] == max(similarity for _, similarity in expected)
            continue
        kept.append((str(n), found))
        index.add(str(n), found)


def test_a_threshold_outside_the_fractions_above_zero_is_refused():
    with pytest.raises(ValueError, match="above 0"):
        NearDuplicates(0.0, [])

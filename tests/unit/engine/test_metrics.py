"""The path formulas against the metrics reference's examples and an independent dynamic-programming oracle."""

import random

import pytest

from agentci_action.engine import metrics
from agentci_action.spec.models import MatchMode, SequenceMetric


def lcs_length(a, b):
    """Textbook O(n·m) LCS, the oracle for rapidfuzz."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def test_recall_precision_f1_reference_edge_cases():
    assert metrics.tool_recall(set(), {"a"}) == 1.0
    assert metrics.tool_recall(set(), set()) == 1.0
    assert metrics.tool_precision(set(), set()) == 1.0
    assert metrics.tool_precision({"a"}, set()) == 0.0
    assert metrics.tool_recall({"a", "b"}, {"a", "c", "d"}) == 0.5
    assert metrics.tool_precision({"a", "b"}, {"a", "c", "d"}) == pytest.approx(1 / 3)
    assert metrics.tool_f1(0.0, 0.0) == 0.0
    assert metrics.tool_f1(0.5, 1 / 3) == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))


def test_lcs_reference_example_and_empty_sequences():
    assert metrics.lcs_similarity(["search", "rerank", "generate"], ["search", "generate"]) == pytest.approx(0.80)
    assert metrics.lcs_similarity([], []) == 1.0
    assert metrics.lcs_similarity(["a"], []) == 0.0
    assert metrics.edit_similarity([], []) == 1.0
    assert metrics.edit_similarity(["a", "b", "c"], ["a", "c"]) == pytest.approx(1 - 1 / 3)
    assert metrics.sequence_similarity(["a", "b"], ["b"], SequenceMetric.EDIT_DISTANCE) == 0.5
    assert metrics.sequence_similarity(["a", "b"], ["b"], SequenceMetric.LCS) == pytest.approx(2 / 3)


def test_sequence_metrics_agree_with_dynamic_programming_oracle():
    rng = random.Random(7)
    tools = ["search", "rerank", "generate", "grade", "fetch"]
    for _ in range(2000):
        p = [rng.choice(tools) for _ in range(rng.randint(0, 12))]
        r = [rng.choice(tools) for _ in range(rng.randint(0, 12))]
        expected_lcs = 1.0 if not p and not r else 2 * lcs_length(p, r) / (len(p) + len(r))
        expected_ed = 1.0 if not p and not r else 1 - levenshtein(p, r) / max(len(p), len(r))
        assert metrics.lcs_similarity(p, r) == pytest.approx(expected_lcs)
        assert metrics.edit_similarity(p, r) == pytest.approx(expected_ed)


def test_loops_reference_example_with_positions():
    sequence = ["search", "search", "grade", "grade", "grade"]
    assert metrics.loop_count(sequence) == 3
    assert metrics.find_loops(sequence) == [metrics.Loop("search", 0, 2), metrics.Loop("grade", 2, 3)]
    assert metrics.loop_count([]) == 0
    assert metrics.loop_count(["a", "b", "a"]) == 0


def test_loops_against_a_run_length_oracle():
    """find_loops equals the runs of itertools.groupby longer than one, on random sequences with long runs."""
    from itertools import groupby

    rng = random.Random(3)
    for _ in range(500):
        sequence = [rng.choice("aab") for _ in range(rng.randrange(0, 30))]
        expected, start = [], 0
        for tool, group in groupby(sequence):
            count = len(list(group))
            if count > 1:
                expected.append((tool, start, count))
            start += count
        found = metrics.find_loops(sequence)
        assert found == expected and all(type(loop) is metrics.Loop for loop in found)
        assert [(loop.tool, loop.start, loop.count, loop.repeats) for loop in found] == [
            (*loop, loop[2] - 1) for loop in expected
        ]


def test_forbidden_names_are_case_and_separator_insensitive_and_counted_once():
    used = ["EditFile", "edit-file", "read_file", "edit_file"]
    assert metrics.forbidden_violations(used, ["edit_file", "bash"]) == ["edit_file"]
    assert metrics.forbidden_violations(["Web Search"], ["web_search"]) == ["web_search"]
    assert metrics.forbidden_violations(["websearch2"], ["web_search"]) == []


def test_a_deny_list_remembering_allowed_names_still_catches_every_forbidden_call():
    """forbidden_calls remembers the names it saw allowed, and still finds a forbidden call under any spelling.

    Per deny-list, it answers from that memo when a trace calls nothing else: a forbidden call after thousands of clean
    traces, under any spelling, is still found.
    """
    rng = random.Random(7)
    clean = ["search", "fetch", "Summarize", "grade"]
    deny = ["Delete-File", "shell"]
    for _ in range(2000):
        assert metrics.forbidden_calls(rng.choices(clean, k=20), deny) == {}
    assert metrics.forbidden_calls(["search", "delete_file", "fetch", "DeleteFile"], deny) == {"Delete-File": [1, 3]}
    assert metrics.forbidden_calls(["Shell"], deny, normalize=False) == {}  # exact names: Shell is not shell
    assert metrics.forbidden_calls(["Shell"], deny) == {"shell": [0]}  # nor does that memo leak into this list
    many = [f"tool_{i}" for i in range(metrics.MAX_ALLOWED_SEEN + 10)]
    assert metrics.forbidden_calls(many, ["other"]) == {} and metrics.forbidden_calls([*many, "other"], ["other"]) == {
        "other": [len(many)]
    }


@pytest.mark.parametrize(
    ("mode", "predicted", "reference", "matched"),
    [
        (MatchMode.STRICT, ["a", "b"], ["a", "b"], True),
        (MatchMode.STRICT, ["a", "b", "c"], ["a", "b"], False),
        (MatchMode.UNORDERED, ["b", "a", "a"], ["a", "b"], True),
        (MatchMode.UNORDERED, ["a"], ["a", "b"], False),
        (MatchMode.SUBSET, ["a", "x", "b"], ["a", "b"], True),
        (MatchMode.SUBSET, ["a"], ["a", "b"], False),
        (MatchMode.SUPERSET, ["a"], ["a", "b"], True),
        (MatchMode.SUPERSET, ["a", "x"], ["a", "b"], False),
        (MatchMode.SUBSEQUENCE, ["search", "think", "analyze", "verify"], ["search", "analyze"], True),
        (MatchMode.SUBSEQUENCE, ["analyze", "search"], ["search", "analyze"], False),
        (MatchMode.SUBSEQUENCE, [], [], True),
    ],
)
def test_match_modes(mode, predicted, reference, matched):
    assert metrics.match(predicted, reference, mode).matched is matched


def test_match_explains_where_it_diverged():
    strict = metrics.match(["a", "x", "b"], ["a", "b"], MatchMode.STRICT)
    assert strict.first_divergence == (1, "b", "x")
    assert strict.unexpected == ["x"] and strict.missing == []
    subset = metrics.match(["a"], ["a", "b", "c", "b"], MatchMode.SUBSET)
    assert subset.missing == ["b", "c"]
    # subsequence: the expected tool never comes after the last matched call, so the trace ends first
    subsequence = metrics.match(["analyze", "search"], ["search", "analyze"], MatchMode.SUBSEQUENCE)
    assert subsequence.first_divergence == (2, "analyze", None) and subsequence.missing == []
    extras = metrics.match(["x", "y", "z", "search", "q", "r"], ["search", "analyze"], MatchMode.SUBSEQUENCE)
    assert extras.first_divergence == (6, "analyze", None) and extras.missing == ["analyze"]


def test_long_traces_are_fast():
    import time

    p = [f"tool{i % 37}" for i in range(5000)]
    r = [f"tool{i % 41}" for i in range(5000)]
    start = time.perf_counter()
    metrics.lcs_similarity(p, r)
    metrics.edit_similarity(p, r)
    metrics.match(p, r, MatchMode.STRICT)
    assert time.perf_counter() - start < 2.0

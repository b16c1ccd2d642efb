"""expected_tool_calls pairing under each match mode: optimal, not first-fit, checked against brute force."""

import itertools
import random

import pytest

from agentci_action.engine.call_matching import Divergence, match_calls
from agentci_action.spec.models import ExpectedToolCall, MatchMode
from agentci_action.trace.canonical import ToolCall

ORDERED = (MatchMode.STRICT, MatchMode.SUBSEQUENCE)


def step(name=None, **fields) -> ExpectedToolCall:
    return ExpectedToolCall(name=name, **fields) if name else ExpectedToolCall(**fields)


def calls(*specs) -> list[ToolCall]:
    """calls("a", ("search", {"q": 1})) → tool calls with optional arguments."""
    return [ToolCall(name=s) if isinstance(s, str) else ToolCall(name=s[0], arguments=s[1]) for s in specs]


# Two steps whose argument rules overlap: step 0 accepts any query mentioning weather, step 1 only Paris.
OVERLAPPING = [
    step("search", argument_rules={"q": {"regex": "weather"}}),
    step("search", arguments={"q": "weather paris"}),
]


@pytest.mark.parametrize("mode", [MatchMode.SUBSET, MatchMode.UNORDERED])
def test_assignment_succeeds_where_first_fit_fails(mode):
    # first-fit gives call 0 to step 0 and then finds nothing for step 1
    trace = calls(("search", {"q": "weather paris"}), ("search", {"q": "weather london"}))
    outcome = match_calls(OVERLAPPING, trace, mode)
    assert outcome.matched
    assert outcome.pairs == [(0, 1), (1, 0)]


def test_alignment_succeeds_where_first_fit_fails():
    # in order: the optional lookup must not swallow the only call the required step can take
    steps = [step("search", optional=True), step("search", arguments={"q": "paris"}), step("answer")]
    trace = calls(("search", {"q": "paris"}), "answer")
    for mode in ORDERED:
        outcome = match_calls(steps, trace, mode)
        assert outcome.matched, mode
        assert outcome.pairs == [(1, 0), (2, 1)]


def test_order_matters_only_in_ordered_modes():
    trace = calls(("search", {"q": "weather london"}), ("search", {"q": "weather paris"}))
    steps = list(reversed(OVERLAPPING))  # Paris first, then any weather query
    assert not match_calls(steps, trace, MatchMode.SUBSEQUENCE).matched
    assert match_calls(steps, trace, MatchMode.SUBSET).matched


def test_strict_needs_every_call_paired():
    steps = [step("search"), step("answer")]
    assert match_calls(steps, calls("search", "answer"), MatchMode.STRICT).matched
    outcome = match_calls(steps, calls("search", "search", "answer"), MatchMode.STRICT)
    assert not outcome.matched
    assert outcome.unexpected == [1]
    assert outcome.first_divergence == Divergence(index=1, step=1, call=1)
    assert match_calls(steps, calls("search", "search", "answer"), MatchMode.SUBSEQUENCE).matched


def test_strict_reports_a_surplus_call_at_the_end():
    outcome = match_calls([step("search")], calls("search", "search"), MatchMode.STRICT)
    assert outcome.pairs == [(0, 0)]
    assert outcome.first_divergence == Divergence(index=1, step=None, call=1)


def test_missing_step_diverges_where_it_was_wanted():
    steps = [step("a"), step("b"), step("c")]
    outcome = match_calls(steps, calls("a", "c"), MatchMode.SUBSEQUENCE)
    assert outcome.missing == [1]
    assert outcome.first_divergence == Divergence(index=1, step=1, call=1)
    at_end = match_calls(steps, calls("a", "b"), MatchMode.STRICT)
    assert at_end.first_divergence == Divergence(index=2, step=2, call=None)


def test_optional_steps_may_be_absent_in_every_mode():
    steps = [step("search"), step("rerank", optional=True), step("answer")]
    for mode in MatchMode:
        assert match_calls(steps, calls("search", "answer"), mode).matched, mode
        assert match_calls(steps, calls("search", "rerank", "answer"), mode).matched, mode


def test_any_of_accepts_either_tool_with_the_steps_arguments():
    steps = [step(any_of=["web_search", "kb_lookup"], arguments={"q": "paris"}), step("answer")]
    for tool in ("web_search", "kb_lookup"):
        assert match_calls(steps, calls((tool, {"q": "paris"}), "answer"), MatchMode.STRICT).matched
    assert not match_calls(steps, calls(("kb_lookup", {"q": "rome"}), "answer"), MatchMode.STRICT).matched
    assert not match_calls(steps, calls(("fetch", {"q": "paris"}), "answer"), MatchMode.STRICT).matched


def test_superset_allows_absent_steps_but_neither_strangers_nor_repeats():
    steps = [step("search"), step("answer")]
    assert match_calls(steps, calls("search"), MatchMode.SUPERSET).matched
    outcome = match_calls(steps, calls("search", "shell", "answer"), MatchMode.SUPERSET)
    assert (outcome.matched, outcome.unexpected, outcome.missing, outcome.repeated) == (False, [1], [], [])
    twice = match_calls(steps, calls("search", "search"), MatchMode.SUPERSET)
    assert (twice.matched, twice.unexpected, twice.repeated) == (False, [1], [(1, 0)])


@pytest.mark.parametrize("mode", [MatchMode.UNORDERED, MatchMode.SUPERSET])
def test_a_double_refund_fails_the_unordered_modes_unless_repeats_are_allowed(mode):
    """agentevals (0.0.9) fails a trajectory calling refund twice where the reference calls it once, in both modes."""
    steps = [step("lookup_order"), step("refund")]
    twice = calls("lookup_order", "refund", "refund")
    outcome = match_calls(steps, twice, mode)
    assert (outcome.matched, outcome.unexpected, outcome.repeated) == (False, [2], [(2, 1)])
    assert match_calls(steps, twice, mode, repeats_allowed=True).matched
    assert match_calls(steps, calls("refund", "lookup_order"), mode).matched  # any order, each once


def test_unordered_needs_each_required_step_on_its_own_call():
    steps = [step("search"), step("search")]
    assert not match_calls(steps, calls("search"), MatchMode.UNORDERED).matched
    assert match_calls(steps, calls("search", "search"), MatchMode.UNORDERED).matched
    assert not match_calls(steps, calls("search", "search", "search"), MatchMode.UNORDERED).matched  # one too many
    assert match_calls(steps, calls("search", "search", "search"), MatchMode.UNORDERED, repeats_allowed=True).matched


def test_near_miss_names_the_closest_unpaired_call_and_its_failing_keys():
    steps = [step("search", arguments={"q": "paris", "limit": 3})]
    trace = calls(("search", {"q": "rome", "limit": 9}), ("search", {"q": "paris", "limit": 5}))
    outcome = match_calls(steps, trace, MatchMode.SUBSET)
    (near,) = outcome.near_misses
    assert (near.step, near.call) == (0, 1)
    assert [str(m) for m in near.mismatches] == ["limit expected 3, got 5"]


def test_empty_expectation_and_empty_trace():
    for mode in MatchMode:
        assert match_calls([], [], mode).matched
        assert match_calls([step("a", optional=True)], [], mode).matched
    assert match_calls([], calls("a"), MatchMode.SUBSET).matched
    assert not match_calls([], calls("a"), MatchMode.STRICT).matched
    assert not match_calls([step("a")], [], MatchMode.SUBSET).matched


# --- brute force oracle --------------------------------------------------------------------------


def _compatible(s: ExpectedToolCall, c: ToolCall) -> bool:
    """The test's own reading of the random steps below: tool name, and `x` equal when the step names it."""
    return c.name in s.names and (not s.arguments or c.arguments.get("x") == s.arguments["x"])


def _brute_force(steps, trace, mode, repeats_allowed: bool = False) -> bool:
    required = [s for s in steps if not s.optional]
    ok = lambda pairing: all(_compatible(s, trace[j]) for s, j in pairing)  # noqa: E731
    covers = any(ok(zip(required, js)) for js in itertools.permutations(range(len(trace)), len(required)))
    in_order = any(ok(zip(required, js)) for js in itertools.combinations(range(len(trace)), len(required)))
    # each call on a step of its own (one-to-one), every call; for unordered, every required step too
    injections = [
        chosen
        for chosen in itertools.permutations(range(len(steps)), len(trace))
        if all(_compatible(steps[i], trace[j]) for j, i in enumerate(chosen))
    ]
    all_calls = bool(injections)
    all_calls_and_steps = any(all(i in chosen for i, s in enumerate(steps) if not s.optional) for chosen in injections)
    if repeats_allowed:  # a call may fit a step another call already took
        all_calls = all(any(_compatible(s, c) for s in steps) for c in trace)
        all_calls_and_steps = covers and all_calls
    if mode is MatchMode.STRICT:
        optional = [i for i, s in enumerate(steps) if s.optional]
        for k in range(len(optional) + 1):
            for chosen in itertools.combinations(optional, k):
                kept = [s for i, s in enumerate(steps) if not s.optional or i in chosen]
                if len(kept) == len(trace) and ok(zip(kept, range(len(trace)))):
                    return True
        return False
    return {
        MatchMode.SUBSEQUENCE: in_order,
        MatchMode.SUBSET: covers,
        MatchMode.SUPERSET: all_calls,
        MatchMode.UNORDERED: all_calls_and_steps,
    }[mode]


def _random_case(rng: random.Random):
    steps = []
    for _ in range(rng.randint(0, 4)):
        names = {"name": rng.choice("ab")} if rng.random() < 0.7 else {"any_of": ["a", "b"]}
        arguments = {"x": rng.randint(0, 1)} if rng.random() < 0.6 else None
        steps.append(ExpectedToolCall(**names, arguments=arguments, optional=rng.random() < 0.3))
    trace = [ToolCall(name=rng.choice("abc"), arguments={"x": rng.randint(0, 1)}) for _ in range(rng.randint(0, 5))]
    return steps, trace


@pytest.mark.parametrize("repeats_allowed", [False, True])
@pytest.mark.parametrize("mode", list(MatchMode))
def test_matches_brute_force_on_random_cases(mode, repeats_allowed):
    rng = random.Random(20261122)
    for _ in range(1500):
        steps, trace = _random_case(rng)
        outcome = match_calls(steps, trace, mode, repeats_allowed)
        assert outcome.matched == _brute_force(steps, trace, mode, repeats_allowed), (steps, trace)
        assert all(_compatible(steps[i], trace[j]) for i, j in outcome.pairs)
        assert len({j for _, j in outcome.pairs}) == len(outcome.pairs)
        if mode in ORDERED:
            by_call = sorted(outcome.pairs, key=lambda p: p[1])
            assert [i for i, _ in by_call] == sorted(i for i, _ in by_call)
        if outcome.matched:
            assert outcome.first_divergence is None and not outcome.missing and not outcome.unexpected


def test_the_action_and_the_engine_import_without_numpy_or_jsonschema():
    """numpy and jsonschema are imported on first use, not at start: a spec without them never pays for them.

    numpy on the first expected_tool_calls match and jsonschema on the first json_schema check (scipy is no dependency
    at all).
    """
    import subprocess
    import sys

    code = (
        "import sys, agentci_action.engine.evaluate_spec, agentci_action.cli.main, agentci_action.github.action; "
        "print(sorted(n for n in ('numpy', 'scipy', 'jsonschema', 'referencing') if n in sys.modules))"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )
    assert match_calls([step("a")], calls("a"), MatchMode.SUBSET).matched  # and they load when needed


# --- long traces: the searches that start from the diagonals against exhaustive ones ---------------


def _perturbed_case(rng: random.Random):
    """A recorded run as the expectation, and the run with a few calls dropped, inserted, swapped or shuffled.

    The expectation: steps with its arguments, rules, any_of, optional steps; sometimes all the calls are shuffled.
    """
    tools = "abcd"[: rng.randint(1, 4)]
    recorded = [
        ToolCall(name=rng.choice(tools), arguments={"x": rng.randint(0, 3), "y": rng.choice("pq")})
        for _ in range(rng.randint(0, 40))
    ]
    steps = []
    for call in recorded:
        shape = rng.random()
        arguments = {"x": call.arguments["x"]} if shape < 0.5 else None
        rules = {"y": {"regex": "^p"}} if 0.5 <= shape < 0.7 else None
        names = {"name": call.name} if rng.random() < 0.8 else {"any_of": [call.name, rng.choice(tools)]}  # may repeat
        steps.append(ExpectedToolCall(**names, arguments=arguments, argument_rules=rules, optional=rng.random() < 0.1))
    trace = list(recorded)
    for _ in range(rng.randint(0, 4)):
        change = rng.random()
        if change < 0.3 and trace:
            trace.pop(rng.randrange(len(trace)))
        elif change < 0.6:
            trace.insert(rng.randint(0, len(trace)), ToolCall(name=rng.choice(tools), arguments={"x": 9}))
        elif change < 0.9 and len(trace) > 1:
            i = rng.randrange(len(trace) - 1)
            trace[i], trace[i + 1] = trace[i + 1], trace[i]
        else:
            rng.shuffle(trace)
    return steps, trace


def _best_weight(steps, trace, ordered: bool) -> int:
    """The test's own optimum: Σ step weights over a best pairing (a DP in order, scipy's dense assignment otherwise)."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    from agentci_action.engine.arguments import ArgumentMatcher, as_mapping

    required = sum(s.optional for s in steps) + 1
    weight = [1 if s.optional else required for s in steps]
    fits = [[c.name in s.names and ArgumentMatcher(s).matches(as_mapping(c.arguments)) for c in trace] for s in steps]
    if not ordered:
        gain = np.array([[weight[i] * f for f in row] for i, row in enumerate(fits)], dtype=float).reshape(
            len(steps), len(trace)
        )
        rows, cols = linear_sum_assignment(gain, maximize=True)
        return int(gain[rows, cols].sum())
    best = [[0] * (len(trace) + 1) for _ in range(len(steps) + 1)]
    for i in range(1, len(steps) + 1):
        for j in range(1, len(trace) + 1):
            best[i][j] = max(best[i - 1][j], best[i][j - 1], best[i - 1][j - 1] + weight[i - 1] * fits[i - 1][j - 1])
    return best[-1][-1]


@pytest.mark.parametrize("mode", list(MatchMode))
def test_searches_from_the_diagonals_agree_with_exhaustive_ones_on_long_traces(mode, monkeypatch):
    """Every case twice.

    As shipped (diagonals, Myers' diff, assignment of what is left) and with no unpaired step or call searched that way
    (the DP over the whole middle, the assignment over the whole graph).
    """
    from agentci_action.engine import call_matching

    rng = random.Random(20261123)
    cases = [_perturbed_case(rng) for _ in range(400)]
    shipped = [match_calls(steps, trace, mode) for steps, trace in cases]
    monkeypatch.setattr(call_matching, "UNPAIRED_SEARCHED", 0)
    exhaustive = [match_calls(list(steps), trace, mode) for steps, trace in cases]
    for (steps, trace), fast, slow in zip(cases, shipped, exhaustive):
        if mode in ORDERED or mode is MatchMode.SUBSET:
            assert (fast.matched, fast.missing, fast.unexpected) == (slow.matched, slow.missing, slow.unexpected), (
                steps,
                trace,
            )
        else:  # two best pairings may leave different calls of one tool over: as many, and none of them paired
            assert (fast.matched, fast.missing, len(fast.unexpected)) == (
                slow.matched,
                slow.missing,
                len(slow.unexpected),
            ), (steps, trace)
            assert not set(fast.unexpected) & {j for _, j in fast.pairs}
        if True:  # every mode pairs one-to-one, superset too
            required = sum(s.optional for s in steps) + 1
            weight = sum(1 if steps[i].optional else required for i, _ in fast.pairs)
            assert weight == _best_weight(steps, trace, mode in ORDERED), (steps, trace)
        if mode in ORDERED:
            assert (fast.pairs, fast.first_divergence) == (slow.pairs, slow.first_divergence), (steps, trace)


def test_an_expectation_is_compiled_once_for_the_same_steps():
    from agentci_action.engine.call_matching import compiled

    steps = [step("search", arguments={"q": "paris"}), step("answer")]
    assert compiled(steps) is compiled(list(steps))  # a query's runs and variants share it
    steps.append(step("cite"))
    assert len(compiled(steps).steps) == 3  # a changed list is compiled anew
    assert not match_calls(steps, calls(("search", {"q": "paris"}), "answer"), MatchMode.STRICT).matched


# --- the assignment against scipy's --------------------------------------------------------------


def _scipy_assignment(steps, calls, n, m, weights):
    """The previous release's assignment.

    scipy's sparse LAPJV, a min-cost full matching on the compatible pairs (cost 1) plus a stand-in call per step (cost
    1 + w_i, "unpaired").
    """
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    if not steps:
        return []
    stand_ins = np.arange(n)
    costs = np.concatenate([np.ones(len(steps)), 1.0 + np.array(weights, dtype=float)])
    rows = np.concatenate([steps, stand_ins])
    graph = csr_matrix((costs, (rows, np.concatenate([calls, m + stand_ins]))), shape=(n, m + n))
    paired_rows, paired_cols = min_weight_full_bipartite_matching(graph)
    return [(i, j) for i, j in zip(paired_rows.tolist(), paired_cols.tolist()) if j < m]


def test_the_assignment_weighs_what_scipys_does_and_pairs_the_earlier_of_competing_steps():
    """Pairings of maximum weight, as scipy's min-cost matching finds, on 20,000 random graphs and a few large ones.

    Random graphs up to 12 × 12, any density, required steps weighing more than optional ones: a one-to-one pairing of
    compatible pairs, of the weight scipy's min-cost matching finds. Among pairings of equal weight ours pairs the
    heavier and then the earlier step (scipy's choice is LAPJV's).
    """
    from agentci_action.engine.call_matching import assign

    rng = random.Random(20261125)
    sizes = [(rng.randint(0, 12), rng.randint(0, 12), rng.random()) for _ in range(20000)]
    sizes += [(500, 500, 0.02), (500, 250, 0.3), (300, 600, 1.0)]
    for n, m, density in sizes:
        edges = [(i, j) for i in range(n) for j in range(m) if rng.random() < density]
        steps, calls = [i for i, _ in edges], [j for _, j in edges]
        required = sum(rng.random() < 0.3 for _ in range(n)) + 1
        weights = [rng.choice([1, required]) for _ in range(n)]
        ours = assign(steps, calls, n, m, weights)
        assert set(ours) <= set(edges) and ours == sorted(ours)
        assert len({i for i, _ in ours}) == len({j for _, j in ours}) == len(ours)
        weight = sum(weights[i] for i, _ in ours)
        assert weight == sum(weights[i] for i, _ in _scipy_assignment(steps, calls, n, m, weights)), edges
    # two steps of equal weight compete for one call: the earlier is paired, whichever way the input is ordered
    assert assign([1, 0], [0, 0], 2, 1, [2, 2]) == [(0, 0)]
    assert assign([0, 1], [0, 0], 2, 1, [1, 2]) == [(1, 0)]  # unless the later weighs more
    # a paired step moves to make room for a later one (an augmenting path), and stays paired
    assert assign([0, 0, 1], [0, 1, 0], 2, 2, [1, 1]) == [(0, 1), (1, 0)]

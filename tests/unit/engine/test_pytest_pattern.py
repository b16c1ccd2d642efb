"""Evaluating a spec one query at a time (the pytest pattern) gives each query the result of the whole run.

What evaluate_spec keeps between calls (the spec's hash, the traces by query) is never served for another input.
"""

from __future__ import annotations

import sys

import pytest
from helpers import ROOT

from agentci_action._util.errors import TraceError
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import spec_hash
from agentci_action.trace.canonical import Trace
from agentci_action.trace.load import load_traces

EXAMPLE = ROOT / "examples" / "support-router"


def test_one_query_at_a_time_gives_the_whole_runs_results():
    spec = load_spec(EXAMPLE / "agentci_spec.yaml")
    traces = load_traces([str(EXAMPLE / "traces")])
    whole = evaluate_spec(spec, traces)
    for query, expected in zip(spec.queries, whole.results, strict=True):
        one = evaluate_spec(spec, traces, queries=[query])
        assert one.results[0].model_dump() == expected.model_dump()
        assert (one.spec_hash, one.warnings) == (whole.spec_hash, whole.warnings)


def _spec_and_traces(write, write_traces, answer="4"):
    spec = load_spec(
        write("s.yaml", "agent: demo\nqueries:\n  - id: a\n    query: a\n    correctness: {exact_match: '4'}\n")
    )
    return spec, load_traces([str(write_traces("t.jsonl", [{"id": "a", "final_answer": answer}]))])


def test_only_a_query_at_a_time_keeps_the_trace_list_indexed(write, write_traces):
    """The whole suite is evaluated once.

    The spec must not keep that trace list (and every trace in it) alive after the caller drops it, which also made the
    next run free the last one's traces. Evaluating one query per call keeps the list's index, and the list, for the
    calls to come.
    """
    spec, traces = _spec_and_traces(write, write_traces)
    held = sys.getrefcount(traces)
    evaluate_spec(spec, traces)
    assert sys.getrefcount(traces) == held
    evaluate_spec(spec, traces, queries=spec.queries)
    assert sys.getrefcount(traces) > held


def test_another_trace_list_is_indexed_anew(write, write_traces):
    spec, passing = _spec_and_traces(write, write_traces)
    assert evaluate_spec(spec, passing).summary.passed == 1
    failing = [Trace.model_validate({"id": "a", "final_answer": "5"})]
    assert evaluate_spec(spec, failing).summary.failed == 1
    passing.append(Trace.model_validate({"id": "stray", "final_answer": "4"}))  # the same list, grown
    assert evaluate_spec(spec, passing).warnings == [": trace with id 'stray' matches no query in the spec"]
    with pytest.raises(TraceError, match="no trace for query 'a'"):
        evaluate_spec(spec, [])


def test_a_changed_spec_is_hashed_anew(write, write_traces):
    spec, traces = _spec_and_traces(write, write_traces)
    first = evaluate_spec(spec, traces).spec_hash
    renamed = spec.model_copy(update={"agent": "other"})
    assert evaluate_spec(renamed, traces).spec_hash == spec_hash(renamed) != first
    grown = spec.model_copy(update={"queries": list(spec.queries)})
    assert spec_hash(grown) == first
    grown.queries.append(spec.queries[0].model_copy(update={"id": "b", "query": "b"}))  # the same list, grown
    assert spec_hash(grown) not in (first, spec_hash(renamed))
    assert evaluate_spec(spec, traces).spec_hash == first

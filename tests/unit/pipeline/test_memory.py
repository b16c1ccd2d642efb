"""What keeps a large run's memory down, without changing a byte of what it writes.

The results file is written a query at a time (the same text as the run dumped whole), and a run's traces are dropped
query by query once no diff against a baseline needs them (benchmarks/bench_memory.py measures the peak).
"""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from helpers import ROOT

from agentci_action._util import output
from agentci_action.cli.main import main
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.pipeline.evaluation import Evaluation, evaluate
from agentci_action.report import results_json
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace

EXAMPLES = ["rag", "support-router", "dev-agent", "repeated-runs"]  # three with a baseline diff, one without


def dumped_whole(run, diff) -> str:
    """The results JSON as it was written before it was streamed: the run in one dump, the diff spliced in last."""
    text = results_json.dumps(run)
    if diff is not None:
        text = text.removesuffix("\n}") + ',\n  "diff": ' + results_json.dumps(diff).replace("\n", "\n  ") + "\n}"
    return text + "\n"


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_results_json_written_a_query_at_a_time_is_the_run_dumped_whole(example):
    folder = ROOT / "examples" / example
    outcome = evaluate(Evaluation(spec=str(folder / "agentci_spec.yaml"), traces=[str(folder / "traces")]))
    run, diff = outcome.run, outcome.diff
    pieces = list(results_json.chunks(run, diff))
    assert len(pieces) == len(run.results) + 2  # the run's fields around its results, one piece per query
    assert "".join(pieces) == dumped_whole(run, diff)
    empty = run.model_copy(update={"results": []})
    assert "".join(results_json.chunks(empty, diff)) == dumped_whole(empty, diff)


def test_the_cli_writes_the_results_file_a_piece_at_a_time(tmp_path, monkeypatch):
    written: list[int] = []
    real_write_text = output.write_text
    monkeypatch.setattr(output, "write_text", lambda fd, text: written.append(len(text)) or real_write_text(fd, text))
    folder = ROOT / "examples" / "support-router"
    target = tmp_path / "results.json"
    main(["test", str(folder / "agentci_spec.yaml"), "--traces", str(folder / "traces")])  # warm, to stdout
    written.clear()
    main(
        [
            "test",
            str(folder / "agentci_spec.yaml"),
            "--traces",
            str(folder / "traces"),
            "--format",
            "json",
            "--output",
            str(target),
        ]
    )
    results = json.loads(target.read_text(encoding="utf-8"))["results"]
    assert len(written) == len(results) + 2
    assert max(written[:-1]) < sum(written) / 20  # the last piece closes the run and holds its diff


class Counted(Trace):
    """A trace that counts its own end: traces are pydantic models, which take no weak reference."""

    dropped: ClassVar[int] = 0

    def __del__(self) -> None:
        Counted.dropped += 1


@pytest.mark.parametrize("release", [True, False])
def test_a_run_that_releases_its_traces_drops_each_querys_runs_once_it_is_evaluated(release):
    spec = load_spec(ROOT / "examples" / "repeated-runs" / "agentci_spec.yaml")
    traces = [
        Counted.model_validate({"id": q.id, "run": r, "final_answer": "x"}).with_derived_totals()
        for q in spec.queries
        for r in range(q.min_runs)
    ]
    kept_traces = None if release else traces
    Counted.dropped, dropped_at_each_result = 0, []
    run = evaluate_spec(
        spec, traces, release_traces=release, on_result=lambda result: dropped_at_each_result.append(Counted.dropped)
    )
    assert len(run.results) == len(spec.queries)
    if release:  # a query's runs are gone by the time its result is reported
        assert dropped_at_each_result == [
            sum(q.min_runs for q in spec.queries[: i + 1]) for i in range(len(spec.queries))
        ]
        assert traces == []
    else:
        assert dropped_at_each_result == [0] * len(spec.queries)
        assert kept_traces is traces and len(traces) == sum(q.min_runs for q in spec.queries)


def test_releasing_the_traces_changes_no_result():
    folder = ROOT / "examples" / "repeated-runs"
    spec = load_spec(folder / "agentci_spec.yaml")
    from agentci_action.trace.load import load_traces

    kept = evaluate_spec(spec, load_traces([str(folder / "traces")]))
    released = evaluate_spec(spec, load_traces([str(folder / "traces")]), release_traces=True)
    assert results_json.render(released) == results_json.render(kept)

"""report/baseline_phrases.py: the command a first run names to save a baseline points where its traces came from."""

from __future__ import annotations

import pytest
from helpers.results_builder import layer, query, run

from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import NO_BASELINE, Check, Status
from agentci_action.report.baseline_phrases import no_baseline_note, save_command
from agentci_action.spec.loader import select_tags
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.canonical import Trace


def read_from(*sources: str, spec: str = "agentci_spec.yaml") -> str:
    results = [query(f"q{i}", 4, "pass") for i, _ in enumerate(sources)]
    for result, source in zip(results, sources):
        result.trace_source = source
    found = run(*results)
    found.spec = spec
    return save_command(found)


@pytest.mark.parametrize(
    "sources, option",
    [
        (["traces/a.jsonl:1", "traces/a.jsonl:2"], " --traces traces/a.jsonl"),  # one file
        (["traces/a.jsonl:1", "traces/b/c.json:1"], " --traces traces"),  # the folder holding them all
        (["/tmp/agentci-traces-x1/q0.jsonl:1", "/tmp/agentci-traces-x1/q1.jsonl:1"], ""),  # `agentci test`'s runner
        (["agentci-traces/q0.jsonl:1"], ""),  # the run action's output
        (["/abs/a.jsonl:1", "rel/b.jsonl:1"], " --traces /abs --traces rel"),  # no folder holds both: each one's
        (["a.jsonl:1", "b.jsonl:1"], " --traces a.jsonl --traces b.jsonl"),  # the working directory: not every file
        # in it is a trace (the spec, baselines/), so its files by name
        (["more/x.jsonl:1", "traces/y.jsonl:1", "z.jsonl:4"], " --traces more --traces traces --traces z.jsonl"),
        (["/tmp/a/x.jsonl:1", "/work/y.jsonl:1"], " --traces /tmp/a --traces /work"),  # never the root, /
        ([""], ""),  # traces handed over in memory (the Python API)
    ],
)
def test_the_command_names_the_traces_a_run_read_and_not_a_runner_s_output(sources, option):
    assert read_from(*sources) == f"agentci save --spec agentci_spec.yaml{option} --version v1"


def test_paths_are_quoted_for_the_shell():
    found = read_from("my traces/a b.jsonl:3", spec="specs/it's.yaml")
    assert found == "agentci save --spec 'specs/it'\"'\"'s.yaml' --traces 'my traces/a b.jsonl' --version v1"


def test_a_query_new_since_the_baseline_gets_no_command():
    """Saving a version replaces what every query is compared with: the note says what happened, not what to run."""
    compared = query("old", 4, "pass", path=layer("pass", baseline_variants=1))
    new = query("new", 9, "pass")
    new.cost.checks = [Check("max_cost_multiplier", Status.SKIP, "", {"reason": NO_BASELINE})]
    assert no_baseline_note(run(compared, new)) == (
        "1 query had no baseline trace to compare with, so max_cost_multiplier was not checked (not in the baseline: "
        "a version saved later holds it)"
    )
    first = no_baseline_note(run(new))  # nothing was compared: a first run
    assert first.endswith(
        "`agentci save --spec agentci_spec.yaml --version v1` saves these runs as the baseline (once "
        "they pass), and later runs compare with it"
    )
    in_code = run(new)
    in_code.spec = ""  # a spec made in code (the Python API): no command that would read `--spec ''`
    assert no_baseline_note(in_code).endswith(
        "not checked: `agentci save` keeps a baseline of a spec file's runs, and later runs compare with it"
    )


def test_a_run_selected_by_tags_names_them_so_the_queries_without_traces_there_are_left_out():
    """`agentci test --tags promoted --traces T` on a spec whose other queries have no trace in T: save keeps the same."""
    whole = AgentCISpec.model_validate(
        {
            "agent": "a",
            "queries": [
                {"id": "example", "query": "hi?", "tags": ["smoke"]},
                {"id": "weather", "query": "rain?", "tags": ["promoted", "new day"]},
            ],
        }
    )
    whole.__pydantic_private__["_path"] = "agentci_spec.yaml"  # as load_spec sets it
    trace = Trace.model_validate({"id": "weather", "final_answer": "yes"})
    trace.__pydantic_private__["_source"] = "traces/w.jsonl:1"
    selected = select_tags(whole, ["promoted", "new day"])
    assert selected.selected_tags == ("promoted", "new day") and whole.selected_tags == ()
    assert save_command(evaluate_spec(selected, [trace])) == (
        "agentci save --spec agentci_spec.yaml --traces traces/w.jsonl --tags 'promoted,new day' --version v1"
    )
    assert "--tags" not in save_command(evaluate_spec(whole.model_copy(update={"queries": selected.queries}), [trace]))

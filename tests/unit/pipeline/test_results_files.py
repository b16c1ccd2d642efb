"""A results file read back: the run, and what the PR changed (recordings, golden queries), validated as input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentci_action._util.errors import InputError
from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.compare.recording_changes import RecordingChange
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.pipeline.results_files import read_results
from agentci_action.report import results_json
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import Provenance
from agentci_action.trace.canonical import Trace

SPEC = "version: 1\nagent: a\nqueries:\n  - id: q\n    query: hi\n    correctness: {expected_in_answer: [hello]}\n"


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, list[RecordingChange], list[GoldenChange]]:
    (tmp_path / "spec.yaml").write_text(SPEC)
    run = evaluate_spec(load_spec(tmp_path / "spec.yaml"), [Trace.model_validate({"id": "q", "final_answer": "hello"})])
    recordings = [RecordingChange("q", "run-1", "changed", "call 1: system prompt line 3")]
    goldens = [
        GoldenChange("q", "added", "spec.yaml:4", provenance=Provenance(source="t.json", incident=True)),
        GoldenChange("old", "removed", "spec.yaml:9"),
    ]
    path = tmp_path / "results.json"
    path.write_text("".join(results_json.chunks(run, None, recordings, goldens)))
    return path, recordings, goldens


def test_what_the_pr_changed_reads_back_as_it_was_written(written):
    path, recordings, goldens = written
    outcome = read_results(str(path))
    assert outcome.recordings == recordings and outcome.goldens == goldens


def test_a_file_without_the_lists_reads_as_no_change(written):
    path, _, _ = written
    document = json.loads(path.read_text())
    del document["recordings_changed"], document["goldens_changed"]
    path.write_text(json.dumps(document))
    outcome = read_results(str(path))
    assert outcome.recordings == [] and outcome.goldens == []


@pytest.mark.parametrize(
    ("key", "forged"),
    [("recordings_changed", {"query": "q", "run": 3, "change": "changed"}), ("goldens_changed", {"query": "q"})],
)
def test_a_forged_entry_is_refused_naming_the_file_and_the_key(written, key, forged):
    path, _, _ = written
    document = json.loads(path.read_text())
    document[key] = [forged]
    path.write_text(json.dumps(document))
    with pytest.raises(InputError) as refused:
        read_results(str(path))
    assert str(path) in str(refused.value) and f"{key}.0" in str(refused.value)

"""compare/golden_changes.py: the golden queries a PR added, changed or removed, read against a base commit.

The base commit is a snapshot in memory (the Snapshot protocol git and the contents API both implement).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentci_action._util.errors import InputError
from agentci_action.compare import golden_changes as module
from agentci_action.compare.base_ref import BaseRef
from agentci_action.compare.golden_changes import GoldenChange, golden_changes, what_changed
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import AgentCISpec, Provenance, QuerySpec

BASE = """\
version: 1
agent: support
queries:
  - id: order-status
    query: "Where is my order?"
    correctness:
      expected_in_answer: ["shipped"]
  - id: gone
    query: "An old case"
  - !include shared/more.yaml
"""
MORE = 'id: included\nquery: "An included query"\ncost:\n  max_cost_usd: 0.02\n'
PROMOTED = """\
  - id: refund-window
    query: "Can I get a refund after 40 days?"
    provenance:
      source: traces/prod-1.json
      trace_id: run-7f3a
      framework: langgraph
      promoted_commit: 1a2b3c4d5e6f7
      incident: true
"""


class MemorySnapshot:
    """The base commit's files by repository path."""

    sha = "b" * 40

    def __init__(self, files: dict[str, str]):
        self.stored = {path: text.encode() for path, text in files.items()}

    def files(self, prefix: str) -> list[str]:
        return sorted(p for p in self.stored if not prefix or p == prefix or p.startswith(prefix.rstrip("/") + "/"))

    def read(self, path: str) -> bytes:
        return self.stored[path]


@pytest.fixture
def at_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Sets the base commit's files; the working tree is tmp_path, the repository root."""
    monkeypatch.chdir(tmp_path)

    def base(files: dict[str, str]) -> None:
        monkeypatch.setattr(module, "open_snapshot", lambda ref, directory: (MemorySnapshot(files), tmp_path))

    return base


def head(tmp_path: Path, spec: str, more: str = MORE):
    (tmp_path / "shared").mkdir(exist_ok=True)
    (tmp_path / "shared" / "more.yaml").write_text(more)
    (tmp_path / "agentci_spec.yaml").write_text(spec)
    return load_spec("agentci_spec.yaml")


def test_an_added_a_changed_and_a_removed_query_each_with_its_line(tmp_path, at_base):
    at_base({"agentci_spec.yaml": BASE, "shared/more.yaml": MORE})
    spec = head(
        tmp_path,
        BASE.replace('["shipped"]', '["shipped", "refund"]').replace('  - id: gone\n    query: "An old case"\n', "")
        + PROMOTED,
        MORE.replace("0.02", "0.05"),
    )
    changes = golden_changes(spec, BaseRef("HEAD"))
    assert [(c.query, c.change, c.line, c.detail) for c in changes] == [
        ("refund-window", "added", "agentci_spec.yaml:9", ""),
        ("order-status", "changed", "agentci_spec.yaml:4", "correctness.expected_in_answer: +'refund'"),
        ("included", "changed", "agentci_spec.yaml:8", "cost.max_cost_usd: 0.02 → 0.05"),
        ("gone", "removed", "agentci_spec.yaml:8", ""),
    ]
    assert changes[0].provenance == Provenance(
        source="traces/prod-1.json",
        trace_id="run-7f3a",
        framework="langgraph",
        promoted_commit="1a2b3c4d5e6f7",
        incident=True,
    )
    assert changes[0].as_json()["provenance"]["incident"] is True
    assert changes[3].as_json() == {
        "query": "gone",
        "change": "removed",
        "line": "agentci_spec.yaml:8",
        "detail": "",
        "provenance": None,
    }


def test_a_query_moved_or_reformatted_is_no_change(tmp_path, at_base):
    at_base({"agentci_spec.yaml": BASE, "shared/more.yaml": MORE})
    moved = BASE.replace("queries:\n", "queries:\n  # reordered\n  - id: gone\n    query: 'An old case'\n", 1)
    spec = head(tmp_path, moved.replace('  - id: gone\n    query: "An old case"\n', ""))
    assert golden_changes(spec, BaseRef("HEAD")) == []


def test_a_provenance_alone_changed_says_so(tmp_path, at_base):
    at_base({"agentci_spec.yaml": BASE + PROMOTED, "shared/more.yaml": MORE})
    spec = head(tmp_path, BASE + PROMOTED.replace("run-7f3a", "run-8e2b"))
    [change] = golden_changes(spec, BaseRef("HEAD"))
    assert (change.query, change.change, change.detail) == ("refund-window", "changed", "provenance only")
    assert change.provenance is not None and change.provenance.trace_id == "run-8e2b"


def test_a_new_spec_adds_every_query(tmp_path, at_base):
    at_base({})
    spec = head(tmp_path, BASE)
    changes = golden_changes(spec, BaseRef("HEAD"))
    assert [(c.query, c.change) for c in changes] == [
        ("order-status", "added"),
        ("gone", "added"),
        ("included", "added"),
    ]


def test_a_base_spec_that_does_not_load_is_said_in_one_line(tmp_path, at_base):
    at_base({"agentci_spec.yaml": BASE.replace("queries:", "queries: [", 1), "shared/more.yaml": MORE})
    spec = head(tmp_path, BASE)
    with pytest.raises(InputError) as raised:
        golden_changes(spec, BaseRef("HEAD"))
    said = str(raised.value.problems[0])
    assert said.startswith("agentci_spec.yaml: the spec at the base commit bbbbbbb does not load: agentci_spec.yaml:")
    assert "\n" not in said and str(tmp_path) not in said


def test_an_include_missing_at_the_base_is_the_loader_s_problem(tmp_path, at_base):
    at_base({"agentci_spec.yaml": BASE})
    spec = head(tmp_path, BASE)
    with pytest.raises(InputError, match=r"!include 'shared/more\.yaml': file not found"):
        golden_changes(spec, BaseRef("HEAD"))


def test_an_include_outside_the_spec_s_directory_is_never_read(tmp_path, at_base):
    nested = {"specs/agentci_spec.yaml": BASE.replace("shared/more.yaml", "../secret.yaml"), "secret.yaml": MORE}
    at_base(nested)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "agentci_spec.yaml").write_text(BASE.replace("  - !include shared/more.yaml\n", ""))
    spec = load_spec("specs/agentci_spec.yaml")
    with pytest.raises(InputError, match="points outside the spec's directory"):
        golden_changes(spec, BaseRef("HEAD"))


def query(**fields) -> QuerySpec:
    return QuerySpec.model_validate({"id": "q", "query": "Where is my order?", **fields})


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ({}, {"query": "Where is my parcel?"}, "query text"),
        ({}, {"path": {"expected_tool_calls": [{"name": "lookup"}]}}, "path"),
        (
            {"path": {"expected_tool_calls": [{"name": "lookup"}]}},
            {"path": {"expected_tool_calls": [{"name": "lookup_order"}]}},
            "path.expected_tool_calls",
        ),
        (
            {"correctness": {"expected_in_answer": ["a", "b"]}},
            {"correctness": {"expected_in_answer": ["b", "a"]}},
            "correctness.expected_in_answer: order",
        ),
        ({"tags": ["smoke"]}, {"tags": []}, "tags: -'smoke'"),
        (
            {},
            {"description": "x", "tags": ["a"], "reference_answer": "y", "expected_sources": ["d"]},
            "description; tags: +'a'; reference_answer; 1 more",
        ),
        (
            {"provenance": {"source": "a.json"}},
            {"provenance": {"source": "b.json"}, "tags": ["a"]},
            "tags: +'a'; provenance",
        ),
        ({}, {}, ""),
    ],
)
def test_what_changed_says_it_in_a_line(before, after, said):
    assert what_changed(query(**before), query(**after)) == said


def test_a_long_list_item_is_cut():
    said = what_changed(query(), query(tags=["x" * 100]))
    assert said == "tags: +'" + "x" * 39 + "…'"


def test_a_spec_built_in_memory_has_nothing_to_compare(at_base):
    at_base({})
    built = AgentCISpec.model_validate({"version": 1, "agent": "a", "queries": [{"id": "q", "query": "hi"}]})
    assert golden_changes(built, BaseRef("HEAD")) == []
    assert GoldenChange("q", "added", "a.yaml:1").as_json()["provenance"] is None

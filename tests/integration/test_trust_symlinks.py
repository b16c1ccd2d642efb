"""No file is written through a symbolic link below the working directory.

Every writer (reports, results, history exports, traces, the judge and embedding caches, recordings, simulated users'
recordings, baselines, starter files) goes through _util/output.py, and a linked directory on the way is a LinkedPath
error naming it (exit 2), with nothing written where the link points. WRITERS walks them, each as its command calls
it; tests/integration/test_trust_writers_guard.py fails when a module writes a file any other way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agentci_action._util.errors import EXIT_ERROR
from agentci_action._util.output import LinkedPath, make_directory, replace_file, write_file
from agentci_action.cli._reporting import write_output
from agentci_action.cli.cmd_init import init_project
from agentci_action.compare.baselines import write_atomic
from agentci_action.model_access.json_store import JsonStore
from agentci_action.run.capture import collect
from agentci_action.run.replay import recordings
from agentci_action.run.replay.replay_session import ReplaySession
from agentci_action.run.replay.request_keys import Volatility
from agentci_action.run.secrets import Masker
from agentci_action.run.trace_store import TraceStore
from agentci_action.trace.canonical import Trace


def judge_cache(path: Path) -> None:
    store = JsonStore(path, what="judge cache", field="verdicts", valid=lambda entry: True, shape="a verdict")
    store.put_entry("k", {"verdict": "pass"})
    store.save()


def recorded_run(path: Path) -> None:
    ReplaySession(query="q", run=0, path=path, mode="record", volatility=Volatility.declared()).finish()


def run_traces(path: Path) -> None:
    """As `agentci run` writes its traces: the output directory made, then one query's file."""
    directory = make_directory(path.parent, "the trace directory")
    TraceStore(directory, Masker([])).add(Trace(id=path.stem, final_answer="a"))


def collected_traces(path: Path) -> None:
    """As `agentci collect` writes the traces it received."""
    collect.write(path.parent, [Trace(id=path.stem, final_answer="a")], refuse=pytest.fail)


WRITERS: dict[str, Callable[[Path], object]] = {
    "a report or results to --output, a history export (agentci test, diff, history)": lambda path: write_output(
        "text", str(path)
    ),
    "the action's results file and HTML report, the runner's files (write_file)": lambda path: write_file(path, "t"),
    "any whole-or-nothing file (replace_file)": lambda path: replace_file(path, "text", "the file"),
    "the judge and embedding caches": judge_cache,
    "a recording": recorded_run,
    "a simulated user's recording": lambda path: recordings.write(path, "{}\n", "the simulated user's recording"),
    "a baseline": lambda path: write_atomic(path, "{}\n", overwrite=True),
    "the traces of agentci run": run_traces,
    "the traces of agentci collect": collected_traces,
    "the starter files (agentci init)": lambda path: init_project(path.parent),
}


@pytest.fixture
def linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A working directory holding `.agentci`, a symbolic link to a directory outside it; (link, its target)."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    (elsewhere / "recordings" / "q").mkdir(parents=True)
    (work / ".agentci").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.chdir(work)
    return Path(".agentci"), elsewhere


def files_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", list(WRITERS))
@pytest.mark.parametrize("where", ["file.json", "recordings/q/q.jsonl"])
def test_no_writer_writes_through_a_linked_directory(linked, name, where):
    link, target = linked
    with pytest.raises(LinkedPath) as caught:
        WRITERS[name](link / where)
    assert caught.value.exit_code == EXIT_ERROR
    assert ".agentci is a symbolic link" in str(caught.value)
    assert files_in(target) == []


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_link_deeper_on_the_way_is_refused_too(tmp_path, monkeypatch, name):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "work" / "recordings").mkdir(parents=True)
    (tmp_path / "work" / "recordings" / "q").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(tmp_path / "work")
    with pytest.raises(LinkedPath, match=f"{os.path.join('recordings', 'q')} is a symbolic link"):
        WRITERS[name](Path("recordings") / "q" / "q.jsonl")
    assert files_in(outside) == []


@pytest.mark.parametrize("name", list(WRITERS))
def test_every_writer_still_writes_where_no_link_is(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    WRITERS[name](Path("a") / "b" / "q.jsonl")
    written = files_in(tmp_path)
    assert written and all(p.is_relative_to(tmp_path / "a" / "b") for p in written)
    assert not any(p.name.startswith(".") for p in written)  # no temporary file left

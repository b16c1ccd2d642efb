"""ReplayRun.close: a symbolic link on a recording's way stops the whole run (exit 2), not just the run of one query.

Any other failure to write a recording is that run's failure (RunFailure), as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentci_action._util.errors import EXIT_ERROR
from agentci_action._util.output import LinkedPath
from agentci_action.run.jobs import RunFailure
from agentci_action.run.replay.replay_run import ReplayRun
from agentci_action.run.replay.replay_session import ReplaySession
from agentci_action.spec.runner_config import ReplaySpec


@pytest.fixture
def replay_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReplayRun:
    monkeypatch.chdir(tmp_path)
    # record-missing: its recordings are written in place (record's go through a fresh set, tests/integration/
    # tests/e2e/test_recordings_replaced.py); each session below records everything all the same
    return ReplayRun(ReplaySpec(mode="record-missing"), "record-missing", Path("."), {})


def session_of(run: ReplayRun) -> ReplaySession:
    """An attempt of query `q` that made no call: record mode still writes its recording."""
    return ReplaySession(query="q", run=0, path=run.path("q", 0), mode="record", volatility=run.volatility)


def test_a_link_on_the_recordings_way_is_let_through_as_exit_2(replay_run, tmp_path):
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    Path("recordings").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LinkedPath, match="recordings is a symbolic link") as caught:
        replay_run.close(session_of(replay_run))
    assert caught.value.exit_code == EXIT_ERROR
    assert list(elsewhere.iterdir()) == []


def test_any_other_write_failure_fails_that_run_only(replay_run):
    Path("recordings").write_text("a file where the recordings' folder should be")
    with pytest.raises(RunFailure, match="could not write"):
        replay_run.close(session_of(replay_run))

"""The output helper's directories made by several writers at once: each gets the directory, none an error."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentci_action._util.output import open_directory, publish


@pytest.mark.parametrize("inside", [True, False], ids=["below the working directory", "outside it"])
def test_writers_racing_to_make_one_folder_all_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inside: bool):
    """Parallel runs of one query write its recordings at once: each makes `recordings/<query>` if it is missing."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work if inside else elsewhere)
    failures: list[BaseException] = []
    for attempt in range(40):
        target = work / f"recordings-{attempt}" / "refund-chat"
        start = threading.Barrier(6)

        def write(run: int, target: Path = target, start: threading.Barrier = start) -> None:
            try:
                start.wait()
                os.close(open_directory(target, make=True))
                publish(target / f"run-{run}.user.json", b"{}")
            except BaseException as exc:  # every failure is the finding
                failures.append(exc)

        threads = [threading.Thread(target=write, args=(run,)) for run in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(path.name for path in target.iterdir()) == [f"run-{run}.user.json" for run in range(6)]
    assert failures == []

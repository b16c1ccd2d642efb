"""Where things are: the repository, and the shared fixtures recorded by other projects beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def real_traces_dir() -> Path | None:
    """shared/fixtures/real-traces (recordings made by other projects, never copied into the repository).

    $AGENTCI_REAL_TRACES, else beside the clone (CI lays shared/ next to it), else the development machine's
    /work/shared; None when none exists.
    """
    override = os.environ.get("AGENTCI_REAL_TRACES")
    if override:
        return Path(override) if Path(override).is_dir() else None
    for shared in (ROOT.parent / "shared", Path("/work/shared")):
        if (shared / "fixtures" / "real-traces").is_dir():
            return shared / "fixtures" / "real-traces"
    return None


def shared_fixture(found: Path | None, reason: str) -> Path:
    """`found` (a shared fixture's path).

    Without it the test is skipped for `reason`, or fails where end-to-end tests may not skip (CI).
    """
    if found is None:
        if os.environ.get("AGENTCI_REQUIRE_E2E"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def tau_bench_file() -> Path | None:
    """τ-bench's 200 airline conversations (shared/fixtures/tau-bench), or None when there are none.

    $AGENTCI_TAU_BENCH, else beside the clone, else the development machine's /work/shared.
    """
    override = os.environ.get("AGENTCI_TAU_BENCH")
    candidates = [Path(override)] if override else [ROOT.parent / "shared", Path("/work/shared")]
    for place in candidates:
        found = place if place.suffix == ".json" else place / "fixtures" / "tau-bench" / "gpt-4o-airline.json"
        if found.is_file():
            return found
    return None

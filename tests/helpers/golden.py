"""Golden files: a report's text against tests/golden/NAME, rewritten on request for review."""

from __future__ import annotations

import os

from helpers.paths import ROOT

GOLDEN = ROOT / "tests" / "golden"


def check_golden(name: str, text: str) -> None:
    """`text` equals tests/golden/NAME.

    AGENTCI_UPDATE_GOLDEN=1 rewrites the file instead: then review the change by reading `git diff tests/golden`
    (docs/CONTRIBUTING.md).
    """
    path = GOLDEN / name
    if os.environ.get("AGENTCI_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {name}: run with AGENTCI_UPDATE_GOLDEN=1, then read it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; review it and rerun with AGENTCI_UPDATE_GOLDEN=1"

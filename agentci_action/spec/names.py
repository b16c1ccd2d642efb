"""The spec's file name.

`agentci_spec.yaml` is the name `agentci init`, the examples, the CLI's default and the action's default use;
`agentci.yaml`, the action's earlier default, is still read where the name was left to the default, with a deprecation
notice.
"""

from __future__ import annotations

from pathlib import Path

SPEC_FILE = "agentci_spec.yaml"
DEPRECATED_SPEC_FILE = "agentci.yaml"
DEPRECATION = (
    f"{DEPRECATED_SPEC_FILE} is read because there is no {SPEC_FILE}: the spec's default name is now {SPEC_FILE}; "
    "rename the file (the old name will not be found by default in the next major version)"
)


def default_spec(directory: Path) -> tuple[Path | None, str | None]:
    """The spec in `directory` when none is named: (its path, a deprecation notice or None), or (None, None)."""
    if (directory / SPEC_FILE).is_file():
        return directory / SPEC_FILE, None
    if (directory / DEPRECATED_SPEC_FILE).is_file():
        return directory / DEPRECATED_SPEC_FILE, DEPRECATION
    return None, None

"""The generated reference of docs/reference/ is what the code says today.

As the spec's JSON Schema is (test_cli.py): regenerate every page and compare. On a difference, run
`python -m agentci_action.cli.reference_docs docs/reference` and commit the pages.
"""

import pytest
from helpers import ROOT

from agentci_action.cli import reference_docs

REFERENCE = ROOT / "docs" / "reference"


@pytest.mark.parametrize("name", sorted(reference_docs.PAGES))
def test_the_checked_in_reference_page_is_regenerated_unchanged(name: str):
    expected = reference_docs.PAGES[name]()
    assert (REFERENCE / name).read_text(encoding="utf-8") == expected, f"run `{reference_docs.COMMAND}`"


def test_the_command_writes_every_page(tmp_path):
    written = reference_docs.write(tmp_path / "reference")
    assert sorted(path.name for path in written) == sorted(reference_docs.PAGES)
    assert all(path.read_text(encoding="utf-8") == (REFERENCE / path.name).read_text("utf-8") for path in written)


def test_every_spec_key_every_flag_and_every_input_is_listed():
    spec, cli, action = (reference_docs.PAGES[name]() for name in ("spec.md", "cli.md", "action.md"))
    assert "| `runner` |" in spec and "| `volatile_paths` |" in spec
    assert "## agentci record" in cli and "| `--trust-caches-at` |" in cli and "| 2 |" in cli
    assert "| `comment-header` |" in action and "| `traces` |" in action  # the action and the run action

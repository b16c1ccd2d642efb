"""The documentation holds together.

A short README, every page of docs/ in its index, no dangling link or anchor, and the README's test command the one
.ci/run calls.
"""

import json
import re
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(`{3,}).*?^\1\s*$", re.M | re.S)


def prose(text: str) -> str:
    """The page without its fenced code blocks and inline code (links there are examples, not links)."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors.

    lower-cased, punctuation dropped (hyphens and underscores kept), spaces → hyphens, a repeated heading suffixed -1,
    -2, …
    """
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024


def test_the_readme_test_command_is_the_one_ci_runs():
    """.ci/run runs the README's command in two parts: its install, then (after the lint) `python -m pytest`."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    install = next(line for line in lines if line.startswith("python -m venv"))
    assert "python -m pytest" in lines[lines.index(install) :]
    assert f"{install} && python -m pytest\n" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_docs_index_lists_every_page():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    linked = {target.split("#", 1)[0] for target in LINK.findall(prose(index))}
    pages = {page.name for page in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages <= linked, f"docs/README.md does not link {sorted(pages - linked)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path):
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target} does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked.read_text(encoding="utf-8")), f"{page.name}: no heading for #{anchor}"


def test_anchors_follow_github():
    text = "# Path (soft warning; a forbidden tool fails)\n## OpenAI — `openai-chat`\n## 1. Install\n## 1. Install\n"
    assert anchors(text) == {
        "path-soft-warning-a-forbidden-tool-fails",
        "openai--openai-chat",
        "1-install",
        "1-install-1",
    }


SCHEMA = json.loads((ROOT / "agentci_action" / "spec" / "agentci_spec.schema.json").read_text(encoding="utf-8"))


def schema_keys() -> dict[str, set[str]]:
    """Every property name of the spec's JSON Schema → the definitions that have it ("" for the top level)."""
    keys: dict[str, set[str]] = {}

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            for name in node.get("properties", {}):
                keys.setdefault(name, set()).add(where)
            for value in node.values():
                walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    walk({k: v for k, v in SCHEMA.items() if k != "$defs"}, "")
    for name, definition in SCHEMA.get("$defs", {}).items():
        walk(definition, name)
    return keys


def names_in(text: str) -> set[str]:
    """The words of a page, dotted names split (`checks.answer.min_bleu` gives each part)."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def test_every_spec_key_is_documented():
    """Keys of the `checks:` groups in docs/checks.md, every other key in docs/spec.md."""
    spec, checks = (names_in((ROOT / "docs" / page).read_text(encoding="utf-8")) for page in ("spec.md", "checks.md"))
    undocumented = []
    for key, where in sorted(schema_keys().items()):
        in_checks = all(name.endswith("Checks") for name in where)
        if key not in (checks if in_checks else spec):
            undocumented.append(f"{key} ({', '.join(sorted(where)) or 'top level'})")
    assert not undocumented, f"keys of the JSON Schema the docs do not name: {undocumented}"


def key_rows(text: str) -> list[str]:
    """The first cells of the tables whose header's first cell is `key` or `group · key`."""
    cells, in_keys = [], False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_keys = False
            continue
        first = line.split("|")[1].strip()
        if first in ("key", "group · key"):
            in_keys = True
        elif in_keys and not set(first) <= set("-: "):
            cells.append(first)
    return cells


def test_every_documented_key_is_in_the_schema():
    keys = set(schema_keys())
    for page in ("spec.md", "checks.md"):
        rows = key_rows((ROOT / "docs" / page).read_text(encoding="utf-8"))
        assert len(rows) > 10, page
        for cell in rows:
            for code in re.findall(r"`([^`]+)`", cell):
                name = re.match(r"[a-z_][a-z0-9_.]*", code)
                assert name, (page, cell)
                assert set(name[0].split(".")) <= keys, f"{page}: `{code}` is not a key of the spec's schema"


def table(text: str, heading: str) -> dict[str, list[str]]:
    """The table under a heading: first cell's code → the other cells."""
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_the_action_docs_tables_are_action_yml():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    docs = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    inputs, outputs = table(docs, "## Inputs"), table(docs, "## Outputs")
    assert set(inputs) == set(action["inputs"]) and set(outputs) == set(action["outputs"])
    for name, declared in action["inputs"].items():
        default = str(declared.get("default", ""))
        if default:
            assert inputs[name][0] == f"`{default}`", (name, inputs[name][0], default)
        else:
            assert not re.fullmatch(r"`[^`]*`", inputs[name][0]) or inputs[name][0].strip("`").isupper(), name

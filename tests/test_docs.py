"""The documentation holds together: a short README, every page of docs/ in its index, no dangling link or anchor,
and the README's test command the one .ci/run calls."""

import re
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(`{3,}).*?^\1\s*$", re.M | re.S)


def prose(text: str) -> str:
    """The page without its fenced code blocks and inline code (links there are examples, not links)."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower-cased, punctuation dropped (hyphens and underscores kept), spaces → hyphens,
    a repeated heading suffixed -1, -2, …"""
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
    command = next(
        line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python -m venv")
    )
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")


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

"""An opt-in check run carrying every annotation: the API takes 50 per request, so the rest follow in updates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from github import Github

ANNOTATIONS_PER_REQUEST = 50


def batches(items: list[dict[str, Any]], size: int = ANNOTATIONS_PER_REQUEST) -> list[list[dict[str, Any]]]:
    """items cut into consecutive lists of at most `size` (one empty list when there are none)."""
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


@dataclass(frozen=True)
class CheckRun:
    """A completed check run to post: its name and conclusion on `head_sha`, and its output (every annotation)."""

    head_sha: str
    name: str
    conclusion: str
    title: str
    summary: str
    annotations: list[dict[str, Any]]


def post_check_run(gh: Github, repository: str, check: CheckRun) -> str:
    """Create `check` with its first 50 annotations, add the rest 50 at a time; its URL."""
    repo = gh.get_repo(repository)
    first, *rest = batches(check.annotations)
    title, summary = check.title, check.summary
    run = repo.create_check_run(
        name=check.name,
        head_sha=check.head_sha,
        status="completed",
        conclusion=check.conclusion,
        output={"title": title, "summary": summary, "annotations": first},
    )
    for batch in rest:
        run.edit(output={"title": title, "summary": summary, "annotations": batch})
    return run.html_url

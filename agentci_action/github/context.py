"""Where the run happens.

The event, the pull request (if any), whether it comes from a fork, and the commit to annotate and link.

For `pull_request`, GITHUB_SHA is the merge commit, so the head comes from the payload's `pull_request.head.sha`;
for `push`, from `after`; for `merge_group`, from `merge_group.head_sha`. The base commit (for `baseline: base`) is
`pull_request.base.sha` or `merge_group.base_sha`; other events have none. `merge_group`, `workflow_dispatch` and `schedule` have no pull
request: summary and outputs only. `workflow_run` (the action's publish-only mode) takes the pull request and
head commit of the run that triggered it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from agentci_action._util.errors import InputError

if TYPE_CHECKING:  # PyGithub is imported only when a pull request is looked up
    from github import Github

PR_EVENTS = ("pull_request", "pull_request_target")


@dataclass(frozen=True)
class RunContext:
    event_name: str
    repository: str  # "owner/name"
    head_sha: str
    pr_number: int | None = None
    is_fork: bool = False  # the PR's head repository is not the base's: on `pull_request` the token is read-only
    server_url: str = "https://github.com"
    run_url: str | None = None
    head_label: str | None = None  # "owner:branch" of a workflow_run's pull request head, to find a fork's PR by
    base_sha: str | None = None  # the commit the change is compared with: pull_request.base.sha, merge_group.base_sha

    @property
    def blob_url(self) -> str | None:
        """Prefix for links to the spec's lines at the evaluated commit."""
        return (
            f"{self.server_url}/{self.repository}/blob/{self.head_sha}" if self.repository and self.head_sha else None
        )


class _Common(TypedDict):
    """The RunContext fields every event shares, taken from GITHUB_* variables."""

    event_name: str
    repository: str
    server_url: str
    run_url: str | None


def load_event(path: str | None) -> dict[str, Any]:
    """The event payload at GITHUB_EVENT_PATH ({} when there is none, as for a local run)."""
    if not path or not Path(path).is_file():
        return {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError.at(path, 0, f"the event payload is not valid JSON: {exc}") from None
    return payload if isinstance(payload, dict) else {}


def resolve(env: Mapping[str, str], event: Mapping[str, Any]) -> RunContext:
    """The run context from GITHUB_* variables and the event payload."""
    name = env.get("GITHUB_EVENT_NAME", "")
    repository = env.get("GITHUB_REPOSITORY", "")
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    run_id = env.get("GITHUB_RUN_ID")
    common: _Common = {
        "event_name": name,
        "repository": repository,
        "server_url": server,
        "run_url": f"{server}/{repository}/actions/runs/{run_id}" if run_id and repository else None,
    }
    sha = env.get("GITHUB_SHA", "")
    pr = event.get("pull_request") if name in PR_EVENTS else None
    if isinstance(pr, Mapping):
        head, base = pr.get("head") or {}, pr.get("base") or {}
        head_repo = (head.get("repo") or {}).get("full_name")
        base_repo = (base.get("repo") or {}).get("full_name") or repository
        return RunContext(
            **common,
            head_sha=head.get("sha") or sha,
            pr_number=pr.get("number") or event.get("number"),
            is_fork=bool(head_repo and head_repo != base_repo),
            base_sha=_sha(base.get("sha")),
        )
    if name == "workflow_run":
        return _triggering_pull_request(common, event.get("workflow_run") or {}, sha)
    if name == "push":
        return RunContext(**common, head_sha=event.get("after") or sha)
    if name == "merge_group":
        group = event.get("merge_group") or {}
        return RunContext(**common, head_sha=group.get("head_sha") or sha, base_sha=_sha(group.get("base_sha")))
    return RunContext(**common, head_sha=sha)


def _sha(value: object) -> str | None:
    """A commit id from the payload, or None when it is not one."""
    return (
        value
        if isinstance(value, str) and len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)
        else None
    )


def _triggering_pull_request(common: _Common, run: Mapping[str, Any], sha: str) -> RunContext:
    """A `workflow_run` event (publish-only mode).

    The run that triggered it, and its pull request when that run's event was a pull request. GitHub lists the pull
    request in `pull_requests` only for a branch of this repository, and only with its head commit; for a fork the list
    is empty and `find_pull_request` looks it up by `head_label` and the head commit. Nothing is read from the results
    file: it may come from the fork.
    """
    head_sha = run.get("head_sha") or sha
    if run.get("event") not in PR_EVENTS:
        return RunContext(**common, head_sha=head_sha)
    listed = [pr for pr in run.get("pull_requests") or [] if (pr.get("head") or {}).get("sha") == head_sha]
    head_repo = (run.get("head_repository") or {}).get("full_name") or ""
    owner, branch = head_repo.partition("/")[0], run.get("head_branch")
    return RunContext(
        **common,
        head_sha=head_sha,
        pr_number=listed[0].get("number") if len(listed) == 1 else None,
        is_fork=bool(head_repo and head_repo != common["repository"]),
        head_label=f"{owner}:{branch}" if owner and branch else None,
    )


def find_pull_request(gh: Github, context: RunContext) -> RunContext:
    """The context with the open pull request whose head is `head_label` at `head_sha`.

    A fork's, which the workflow_run event does not list; unchanged when there is none, or more than one.
    """
    if context.pr_number is not None or not context.head_label:
        return context
    pulls = gh.get_repo(context.repository).get_pulls(state="open", head=context.head_label)
    numbers = [pr.number for pr in pulls if pr.head.sha == context.head_sha]
    return replace(context, pr_number=numbers[0]) if len(numbers) == 1 else context

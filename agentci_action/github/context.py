"""Where the run happens: the event, the pull request (if any), whether it comes from a fork, and the commit to
annotate and link.

For `pull_request`, GITHUB_SHA is the merge commit, so the head comes from the payload's `pull_request.head.sha`;
for `push`, from `after`; for `merge_group`, from `merge_group.head_sha`. No base commit is resolved: the action
compares with a saved baseline, never with a commit. `merge_group`, `workflow_dispatch` and `schedule` have no pull
request: summary and outputs only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

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

    @property
    def blob_url(self) -> str | None:
        """Prefix for links to the spec's lines at the evaluated commit."""
        return (
            f"{self.server_url}/{self.repository}/blob/{self.head_sha}" if self.repository and self.head_sha else None
        )


def load_event(path: str | None) -> dict:
    """The event payload at GITHUB_EVENT_PATH ({} when there is none, as for a local run)."""
    if not path or not Path(path).is_file():
        return {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError.at(path, 0, f"the event payload is not valid JSON: {exc}") from None
    return payload if isinstance(payload, dict) else {}


def resolve(env: Mapping[str, str], event: Mapping) -> RunContext:
    """The run context from GITHUB_* variables and the event payload."""
    name = env.get("GITHUB_EVENT_NAME", "")
    repository = env.get("GITHUB_REPOSITORY", "")
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    run_id = env.get("GITHUB_RUN_ID")
    common = {
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
        )
    if name == "push":
        return RunContext(**common, head_sha=event.get("after") or sha)
    if name == "merge_group":
        return RunContext(**common, head_sha=(event.get("merge_group") or {}).get("head_sha") or sha)
    return RunContext(**common, head_sha=sha)

"""The history branch through the GitHub API, for the action (its container has no git).

Read on a pull request to show the trend (`contents: read`), appended to on a push to the default branch (`contents:
write`).

Appending reads the series' file on the branch and writes it back with the new line, naming the blob it read, so two
jobs appending at once cannot lose a line: the second write is refused (409) and retried on the new file. The first
append makes the branch: a tree with the file, a commit without parents, and the ref (a branch that exists without the
file gets the file). A push's entry records its commits and the shas their messages say they revert
(compare/history.py).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentci_action.compare.history import HistoryEntry, appended, entry_of
from agentci_action.compare.history_git import history_file
from agentci_action.engine.results import RunResult

if TYPE_CHECKING:
    from github import Github
    from github.Repository import Repository

ATTEMPTS = 3


def pushed_to_default_branch(event_name: str, event: Mapping[str, Any]) -> bool:
    """A push (not a tag, not a deletion) to the repository's default branch."""
    default = (event.get("repository") or {}).get("default_branch")
    return (
        event_name == "push"
        and bool(default)
        and event.get("ref") == f"refs/heads/{default}"
        and not event.get("deleted")
    )


def push_entry(run: RunResult, failed: bool, head_sha: str, event: Mapping[str, Any]) -> HistoryEntry:
    """The history entry of a push's run: its head commit, every commit it brought and their messages."""
    pushed = [c for c in event.get("commits") or [] if isinstance(c, dict)]
    return entry_of(
        run,
        failed=failed,
        commit=head_sha,
        date=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        commits=[str(c.get("id")) for c in pushed if c.get("id")],
        messages=[str(c.get("message") or "") for c in pushed],
    )


def _text(repo: Repository, found: Any) -> str:
    """A contents entry's text; one over the contents API's 1 MB inline limit is read as its blob."""
    if getattr(found, "encoding", None) == "base64":
        return bytes(found.decoded_content).decode("utf-8")
    return base64.b64decode(repo.get_git_blob(found.sha).content).decode("utf-8")


def _found(repo: Repository, path: str, branch: str) -> Any:
    """The contents entry of `path` on `branch`; None when GitHub has neither (404)."""
    from github import GithubException

    try:
        found = repo.get_contents(path, ref=branch)
    except GithubException as exc:
        if exc.status == 404:
            return None
        raise
    return None if isinstance(found, list) else found


def read_history(gh: Github, repository: str, branch: str, series: str) -> str:
    """The series' history on the branch; '' when the branch or the file does not exist yet."""
    repo = gh.get_repo(repository)  # the client is lazy: no request for the repository itself
    found = _found(repo, history_file(series), branch)
    return "" if found is None else _text(repo, found)


def append_history(gh: Github, repository: str, branch: str, series: str, entry: HistoryEntry) -> None:
    """Append `entry` to the series' file on the branch, making either when missing (see the module docstring)."""
    from github import GithubException, InputGitTreeElement

    repo = gh.get_repo(repository)  # the client is lazy: no request for the repository itself
    path, message = history_file(series), f"AgentCI history: {entry.agent} at {entry.commit[:12]}"
    for _ in range(ATTEMPTS):
        found = _found(repo, path, branch)
        try:
            if found is not None:
                repo.update_file(path, message, appended(_text(repo, found), entry), found.sha, branch=branch)
                return
            try:
                tree = repo.create_git_tree([InputGitTreeElement(path, "100644", "blob", content=appended("", entry))])
                repo.create_git_ref(f"refs/heads/{branch}", repo.create_git_commit(message, tree, []).sha)
            except GithubException as exc:
                if exc.status != 422:  # 422: the branch exists, without the file
                    raise
                repo.create_file(path, message, appended("", entry), branch=branch)
            return
        except GithubException as exc:
            if exc.status not in (409, 422):  # another job appended meanwhile: read again
                raise
    raise GithubException(409, {"message": f"the history on {branch} changed during each of {ATTEMPTS} attempts"})

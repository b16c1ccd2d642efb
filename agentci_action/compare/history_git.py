"""The history kept on a branch of its own in a local git repository.

Read, append, and the commit messages the revert rate reads. Git's plumbing only (show, hash-object, mktree,
commit-tree, update-ref): the work tree, the index and the checked-out branch are never touched, so a CI job can append
after its checkout and push the branch.

The branch (`agentci-history` by default) holds one JSON Lines file per series (`<series>.jsonl`, the action's
`comment-header`, `agentci` by default) and nothing else: see docs/guides/history.md for why a branch of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from agentci_action._util.errors import InputError
from agentci_action._util.git import run_git
from agentci_action.compare.history import HistoryEntry, appended

DEFAULT_BRANCH = "agentci-history"
DEFAULT_SERIES = "agentci"
_IDENTITY = {  # the history's commits are the tool's own: the same author wherever they are made
    "GIT_AUTHOR_NAME": "AgentCI",
    "GIT_AUTHOR_EMAIL": "agentci@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "AgentCI",
    "GIT_COMMITTER_EMAIL": "agentci@users.noreply.github.com",
}


def history_file(series: str = DEFAULT_SERIES) -> str:
    """The file of one series on the history branch: its name with anything but [A-Za-z0-9._-] made '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", series).strip("-.") + ".jsonl" if series.strip("-. ") else "agentci.jsonl"


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """git in `repo` as the history's committer (_IDENTITY)."""
    return run_git(repo, *args, stdin=stdin, env={**os.environ, **_IDENTITY})


def _must(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = _git(repo, *args, stdin=stdin)
    if done.returncode != 0:
        raise InputError.at(str(repo), 0, f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode()


def branch_ref(repo: Path, branch: str = DEFAULT_BRANCH) -> str | None:
    """The branch's ref: the local branch, else `origin`'s (a CI checkout fetches it as origin/<branch>); None."""
    for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
        if _git(repo, "rev-parse", "--verify", "--quiet", ref).returncode == 0:
            return ref
    return None


def read_history(repo: Path, branch: str = DEFAULT_BRANCH, series: str = DEFAULT_SERIES) -> str:
    """The series' history file on the branch; '' when the branch or the file does not exist yet."""
    ref = branch_ref(repo, branch)
    if ref is None:
        return ""
    done = _git(repo, "show", f"{ref}:{history_file(series)}")
    return done.stdout.decode() if done.returncode == 0 else ""


def append_history(repo: Path, entry: HistoryEntry, branch: str = DEFAULT_BRANCH, series: str = DEFAULT_SERIES) -> str:
    """Commit the series' file with `entry` appended on the local branch; returns the new commit.

    The branch is made, without parents, on first use, from origin's when only that exists. Push the branch to share it.
    """
    ref = branch_ref(repo, branch)
    name = history_file(series)
    blob = _must(
        repo, "hash-object", "-w", "--stdin", stdin=appended(read_history(repo, branch, series), entry).encode()
    )
    listing = [
        line for line in (_must(repo, "ls-tree", ref).splitlines() if ref else []) if not line.endswith(f"\t{name}")
    ]
    tree = _must(
        repo,
        "mktree",
        stdin="".join(f"{line}\n" for line in [*listing, f"100644 blob {blob.strip()}\t{name}"]).encode(),
    )
    parents = ["-p", _must(repo, "rev-parse", ref).strip()] if ref else []
    message = f"AgentCI history: {entry.agent} at {entry.commit[:12]}"
    commit = _must(repo, "commit-tree", tree.strip(), *parents, "-m", message).strip()
    _must(repo, "update-ref", f"refs/heads/{branch}", commit)
    return commit


def history_text(source: str, repo: Path = Path("."), series: str = DEFAULT_SERIES) -> tuple[str, str]:
    """(text, where) of a history: `source` is a JSON Lines file, else a branch of the repository at `repo`."""
    path = Path(source)
    if path.is_file():
        return path.read_text(encoding="utf-8"), source
    return read_history(repo, source, series), f"{source}:{history_file(series)}"


def commit_messages(repo: Path, ref: str = "HEAD") -> list[str]:
    """The messages of every commit reachable from `ref` (for the reverts they name); [] outside a repository."""
    done = _git(repo, "log", "--format=%B%x00", ref)
    return (
        [m.strip() for m in done.stdout.decode(errors="replace").split("\x00") if m.strip()]
        if done.returncode == 0
        else []
    )

"""Running git, for every stage that reads or writes a repository.

`git -C REPO ...`, its output captured, git's own failure left to the caller to read from the return code.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path


def run_git(
    repo: Path,
    *args: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git -C repo *args`, fed `stdin`, in `env` (default: this process's).

    OSError without git installed, subprocess.TimeoutExpired after `timeout` seconds.
    """
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        check=False,
        env=dict(env) if env is not None else None,
        timeout=timeout,
    )


def git_text(repo: Path, *args: str, timeout: float | None = None) -> str:
    """git's standard output as text when it succeeds; "" when it fails, times out, or git is not installed."""
    try:
        done = run_git(repo, *args, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode(errors="replace") if done.returncode == 0 else ""

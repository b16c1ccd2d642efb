"""A PyGithub client, for the sticky comment, the check run and reading the base branch.

For the edge's sticky comment and check run, and for reading the base branch through the contents API
(compare/base_ref.py). PyGithub is the `github` extra, imported only when a client is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentci_action._util.extras import require

if TYPE_CHECKING:
    from github import Github


def client(token: str, api_url: str) -> Github:
    """A PyGithub client for `api_url` (GitHub.com or an Enterprise Server), lazy: no request until one is needed."""
    github = require("github", "The PR comment and the check run")

    client: Github = github.Github(
        auth=github.Auth.Token(token), base_url=api_url.rstrip("/"), lazy=True, per_page=100, timeout=20, retry=3
    )
    return client

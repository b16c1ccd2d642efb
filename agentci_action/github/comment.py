"""The sticky PR comment, through PyGithub: one comment per comment-header, created once and edited in place.

Ours is the comment that starts with our hidden marker AND was written by the token's own login (looked up on
every page of the PR's comments), so a copy of the marker by someone else is never touched. The Actions
GITHUB_TOKEN may not read GET /user (403); its comments are then written by `github-actions[bot]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..report.markdown import digest_of

if TYPE_CHECKING:  # PyGithub is imported only when a comment is actually posted
    from github import Github
    from github.Issue import Issue
    from github.IssueComment import IssueComment

GITHUB_ACTIONS_LOGIN = "github-actions[bot]"
COMMENT_MODES = ("always", "changes", "failures", "off")


@dataclass(frozen=True)
class CommentOutcome:
    action: str  # created | updated | unchanged | skipped
    url: str | None = None
    reason: str = ""


def client(token: str, api_url: str) -> "Github":
    """A PyGithub client for `api_url` (GitHub.com or an Enterprise Server), lazy: no request until one is needed."""
    from github import Auth, Github

    return Github(auth=Auth.Token(token), base_url=api_url.rstrip("/"), lazy=True, per_page=100, timeout=20, retry=3)


def own_login(gh: "Github") -> str:
    """The login the token writes as; GITHUB_TOKEN cannot read /user, and writes as github-actions[bot]."""
    from github import GithubException

    try:
        return gh.get_user().login
    except GithubException as exc:
        if exc.status in (401, 403, 404):
            return GITHUB_ACTIONS_LOGIN
        raise


def find_sticky(issue: "Issue", login: str, marker: str) -> "IssueComment | None":
    """Our earlier comment on this PR: starts with `marker`, written by `login`; every page is searched."""
    for comment in issue.get_comments():
        if comment.user is not None and comment.user.login == login and (comment.body or "").startswith(marker):
            return comment
    return None


def should_post(mode: str, existing: "IssueComment | None", body: str, has_problems: bool) -> str:
    """'' to post, else why not. always: every run; changes: when the results differ from the comment's;
    failures: when something failed or warned (and to update a comment that reported failures); off: never."""
    if mode == "off":
        return "comment-mode is off"
    if mode == "failures" and not has_problems and existing is None:
        return "comment-mode is failures and nothing failed or warned"
    if mode == "changes" and existing is not None and digest_of(existing.body) == digest_of(body):
        return "comment-mode is changes and the results are the same as in the existing comment"
    return ""


def upsert_comment(gh: "Github", repository: str, pr_number: int, body: str, marker: str, *,
                   mode: str = "always", has_problems: bool = True) -> CommentOutcome:
    """Create or edit the sticky comment on `repository`#`pr_number`. GithubException propagates to the caller."""
    if mode == "off":
        return CommentOutcome("skipped", reason="comment-mode is off")
    issue = gh.get_repo(repository).get_issue(pr_number)
    existing = find_sticky(issue, own_login(gh), marker)
    reason = should_post(mode, existing, body, has_problems)
    if reason:
        return CommentOutcome("unchanged" if existing else "skipped", existing.html_url if existing else None, reason)
    if existing is not None:
        existing.edit(body)
        return CommentOutcome("updated", existing.html_url)
    created = issue.create_comment(body)
    return CommentOutcome("created", created.html_url)

"""The sticky PR comment, through PyGithub: one comment per comment-header, created once and edited in place.

Ours is the comment that starts with our hidden marker AND was written by the token's own login (looked up on
every page of the PR's comments), so a copy of the marker by someone else is never touched. Installation tokens
(the Actions GITHUB_TOKEN, a GitHub App's token) may not read GET /user (403), and an App's token writes as
'<app-slug>[bot]', which the token cannot tell us: then ours is the first comment with our marker by a bot account
(user.type "Bot"). A person's copy of the marker is still never touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentci_action.report.markdown import digest_of

if TYPE_CHECKING:  # PyGithub is imported only when a comment is actually posted
    from github import Github
    from github.Issue import Issue
    from github.IssueComment import IssueComment

COMMENT_MODES = ("always", "changes", "failures", "off")


@dataclass(frozen=True)
class CommentOutcome:
    action: str  # created | updated | unchanged | skipped
    url: str | None = None
    reason: str = ""


def own_login(gh: Github) -> str | None:
    """The login the token writes as, or None when the token may not read /user (an installation token)."""
    from github import GithubException

    try:
        return gh.get_user().login
    except GithubException as exc:
        if exc.status in (401, 403, 404):
            return None
        raise


def is_ours(comment: IssueComment, login: str | None, marker: str) -> bool:
    """The comment starts with `marker` and was written by `login`.

    When the login is unknown (None), by a bot account (user.type == "Bot": github-actions[bot] or any
    '<app-slug>[bot]'), never by a person.
    """
    user = comment.user
    if user is None or not (comment.body or "").startswith(marker):
        return False
    return user.login == login if login is not None else user.type == "Bot"


def find_sticky(issue: Issue, login: str | None, marker: str) -> IssueComment | None:
    """Our earlier comment on this PR (see is_ours); every page is searched."""
    return next((comment for comment in issue.get_comments() if is_ours(comment, login, marker)), None)


@dataclass(frozen=True)
class CommentPolicy:
    """When the sticky comment is posted: the comment-mode, and whether something failed or warned."""

    mode: str = "always"
    has_problems: bool = True


def should_post(policy: CommentPolicy, existing: IssueComment | None, body: str) -> str:
    """'' to post, else why not.

    Always: every run; changes: when the results differ from the comment's; failures: when something failed or warned
    (and to update a comment that reported failures); off: never.
    """
    mode = policy.mode
    if mode == "off":
        return "comment-mode is off"
    if mode == "failures" and not policy.has_problems and existing is None:
        return "comment-mode is failures and nothing failed or warned"
    if mode == "changes" and existing is not None and digest_of(existing.body) == digest_of(body):
        return "comment-mode is changes and the results are the same as in the existing comment"
    return ""


def upsert_comment(
    gh: Github, repository: str, pr_number: int, body: str, marker: str, policy: CommentPolicy = CommentPolicy()
) -> CommentOutcome:
    """Create or edit the sticky comment on `repository`#`pr_number`, as `policy` says.

    GithubException propagates to the caller.
    """
    if policy.mode == "off":
        return CommentOutcome("skipped", reason="comment-mode is off")
    issue = gh.get_repo(repository).get_issue(pr_number)
    existing = find_sticky(issue, own_login(gh), marker)
    reason = should_post(policy, existing, body)
    if reason:
        return CommentOutcome("unchanged" if existing else "skipped", existing.html_url if existing else None, reason)
    if existing is not None:
        existing.edit(body)
        return CommentOutcome("updated", existing.html_url)
    created = issue.create_comment(body)
    return CommentOutcome("created", created.html_url)

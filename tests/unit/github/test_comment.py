"""The sticky comment and check runs: the real PyGithub against a local GitHub API that validates against OpenAPI."""

from __future__ import annotations

import pytest
from fakes.github_server import BOT_LOGIN, FakeGitHub
from github import GithubException

from agentci_action._util.github_client import client
from agentci_action.github.check_runs import CheckRun, batches, post_check_run
from agentci_action.github.comment import CommentOutcome, CommentPolicy, own_login, upsert_comment
from agentci_action.report.markdown import marker

REPO, PR = "octo/agent", 7
MARK = marker("default")


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        yield fake
        assert fake.state.violations == []


def body(text: str, digest: str = "aaaa") -> str:
    return f"{MARK}\n<!-- agentci-digest: {digest} -->\n{text}"


def test_first_run_creates_and_second_run_edits_the_same_comment(github):
    gh = client("actions-token", github.url)
    first = upsert_comment(gh, REPO, PR, body("run 1"), MARK)
    second = upsert_comment(gh, REPO, PR, body("run 2"), MARK)
    comments = github.comments(REPO, PR)
    assert [first.action, second.action] == ["created", "updated"]
    assert len(comments) == 1 and comments[0]["body"].endswith("run 2")
    assert comments[0]["user"]["login"] == BOT_LOGIN  # GITHUB_TOKEN cannot read /user: found as a bot's comment
    assert first.url == second.url == comments[0]["html_url"]
    assert ("GET", "/user") in github.state.requests


def test_a_personal_token_is_recognised_by_its_own_login(github):
    github.state.users["pat"] = "octocat"
    gh = client("pat", github.url)
    assert own_login(gh) == "octocat"
    upsert_comment(gh, REPO, PR, body("one"), MARK)
    upsert_comment(gh, REPO, PR, body("two"), MARK)
    assert [c["user"]["login"] for c in github.comments(REPO, PR)] == ["octocat"]


def test_a_github_app_token_finds_its_own_comment(github):
    """An App installation token cannot read /user and writes as '<app-slug>[bot]': still one comment, edited."""
    github.state.apps["app-token"] = "my-app[bot]"
    human = github.add_comment(REPO, PR, "mallory", body("a person's copy"))
    gh = client("app-token", github.url)
    assert own_login(gh) is None
    outcomes = [upsert_comment(gh, REPO, PR, body(f"push {i}"), MARK).action for i in range(3)]
    comments = github.comments(REPO, PR)
    assert outcomes == ["created", "updated", "updated"] and len(comments) == 2
    assert comments[0] == human  # a person's copy of the marker is never edited
    assert comments[1]["user"] == {**comments[1]["user"], "login": "my-app[bot]", "type": "Bot"}
    assert comments[1]["body"].endswith("push 2")


def test_a_foreign_comment_with_our_marker_is_left_alone(github):
    foreign = github.add_comment(REPO, PR, "mallory", body("fake results"))
    outcome = upsert_comment(client("actions-token", github.url), REPO, PR, body("real"), MARK)
    comments = github.comments(REPO, PR)
    assert outcome.action == "created"
    assert comments[0]["body"] == foreign["body"] and comments[0]["user"]["login"] == "mallory"
    assert comments[1]["body"].endswith("real") and len(comments) == 2


def test_our_comment_is_found_beyond_the_first_page(github):
    for i in range(130):
        github.add_comment(REPO, PR, "someone", f"chatter {i}")
    github.add_comment(REPO, PR, BOT_LOGIN, body("old"))
    github.add_comment(REPO, PR, BOT_LOGIN, "another bot comment without the marker")
    outcome = upsert_comment(client("actions-token", github.url), REPO, PR, body("new"), MARK)
    comments = github.comments(REPO, PR)
    assert outcome.action == "updated" and len(comments) == 132
    assert comments[130]["body"].endswith("new")
    pages = [p for m, p in github.state.requests if m == "GET" and p.endswith(f"/issues/{PR}/comments")]
    assert len(pages) == 2  # 100 per page: the second page was read


def test_another_header_keeps_its_own_comment(github):
    gh = client("actions-token", github.url)
    other = marker("matrix: gpt-4o")
    upsert_comment(gh, REPO, PR, body("default"), MARK)
    upsert_comment(gh, REPO, PR, other + "\nother", other)
    assert len(github.comments(REPO, PR)) == 2


def test_403_on_create_is_raised_for_the_caller_to_turn_into_a_warning(github):
    github.state.read_only.add("fork-token")
    with pytest.raises(GithubException) as caught:
        upsert_comment(client("fork-token", github.url), REPO, PR, body("x"), MARK)
    assert caught.value.status == 403
    assert github.comments(REPO, PR) == []


@pytest.mark.parametrize(
    ("mode", "has_problems", "existing", "new_digest", "expected"),
    [
        ("off", True, None, "a", "skipped"),
        ("failures", False, None, "a", "skipped"),
        ("failures", True, None, "a", "created"),
        ("failures", False, "a", "b", "updated"),  # the old comment reported failures: it is corrected
        ("changes", False, "a", "a", "unchanged"),
        ("changes", False, "a", "b", "updated"),
        ("changes", False, None, "a", "created"),
        ("always", False, "a", "a", "updated"),
    ],
)
def test_comment_mode(github, mode, has_problems, existing, new_digest, expected):
    if existing:
        github.add_comment(REPO, PR, BOT_LOGIN, body("before", existing))
    outcome = upsert_comment(
        client("actions-token", github.url),
        REPO,
        PR,
        body("after", new_digest),
        MARK,
        CommentPolicy(mode=mode, has_problems=has_problems),
    )
    assert isinstance(outcome, CommentOutcome) and outcome.action == expected
    bodies = [c["body"] for c in github.comments(REPO, PR)]
    assert bodies == (
        []
        if not existing and expected == "skipped"
        else [body("after", new_digest)]
        if expected in ("created", "updated")
        else [body("before", existing)]
    )


def test_the_server_rejects_what_github_would(github):
    """The fake is not a yes-man: a body GitHub's OpenAPI description forbids is a 422 and a recorded violation."""
    gh = client("actions-token", github.url)
    repo = gh.get_repo(REPO)
    with pytest.raises(GithubException) as caught:
        repo.create_check_run(
            name="x", head_sha="abc", output={"title": "t", "summary": "s", "annotations": [{"path": "a"}] * 51}
        )
    assert caught.value.status == 422
    assert github.state.violations and "annotations" in github.state.violations[0]
    github.state.violations.clear()


def test_check_run_carries_every_annotation_50_per_request(github):
    annotations = [
        {
            "path": "spec.yaml",
            "start_line": i + 1,
            "end_line": i + 1,
            "annotation_level": "warning",
            "message": f"m{i}",
            "title": "t",
        }
        for i in range(120)
    ]
    url = post_check_run(
        client("actions-token", github.url),
        REPO,
        CheckRun(
            head_sha="a" * 40,
            name="AgentCI",
            conclusion="failure",
            title="1 failed",
            summary="summary",
            annotations=annotations,
        ),
    )
    [run] = github.state.check_runs
    assert run["annotations"] == annotations and run["conclusion"] == "failure" and url == run["html_url"]
    writes = [m for m, p in github.state.requests if "/check-runs" in p]
    assert writes == ["POST", "PATCH", "PATCH"]
    assert [len(b) for b in batches(annotations)] == [50, 50, 20] and batches([]) == [[]]

"""Which commits and which PR a run is about, for every event the action supports."""

from __future__ import annotations

import json

import pytest

from agentci_action._util.errors import InputError
from agentci_action.github.context import load_event, resolve

ENV = {
    "GITHUB_REPOSITORY": "octo/agent",
    "GITHUB_SHA": "m" * 40,
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_RUN_ID": "99",
}


def pr_event(head_repo: str = "octo/agent") -> dict:
    return {
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"sha": "h" * 40, "repo": {"full_name": head_repo}},
            "base": {"sha": "b" * 40, "repo": {"full_name": "octo/agent"}},
        },
    }


def test_pull_request_uses_the_head_not_the_merge_commit():
    ctx = resolve({**ENV, "GITHUB_EVENT_NAME": "pull_request"}, pr_event())
    assert (ctx.pr_number, ctx.head_sha, ctx.is_fork) == (7, "h" * 40, False)
    assert ctx.blob_url == f"https://github.com/octo/agent/blob/{'h' * 40}"
    assert ctx.run_url == "https://github.com/octo/agent/actions/runs/99"


def test_fork_pull_request_is_recognised():
    assert resolve({**ENV, "GITHUB_EVENT_NAME": "pull_request_target"}, pr_event("mallory/agent")).is_fork


def test_push_annotates_after():
    ctx = resolve({**ENV, "GITHUB_EVENT_NAME": "push"}, {"before": "0" * 40, "after": "a" * 40})
    assert (ctx.pr_number, ctx.head_sha) == (None, "a" * 40)


def test_merge_group_has_no_pr():
    ctx = resolve(
        {**ENV, "GITHUB_EVENT_NAME": "merge_group"}, {"merge_group": {"head_sha": "g" * 40, "base_sha": "b" * 40}}
    )
    assert (ctx.pr_number, ctx.head_sha) == (None, "g" * 40)


@pytest.mark.parametrize("event", ["workflow_dispatch", "schedule"])
def test_manual_and_scheduled_runs_have_no_pr(event):
    ctx = resolve({**ENV, "GITHUB_EVENT_NAME": event}, {})
    assert (ctx.pr_number, ctx.head_sha) == (None, "m" * 40)


def test_event_file(tmp_path):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(pr_event()))
    assert load_event(str(path))["number"] == 7
    assert load_event(None) == {} and load_event(str(tmp_path / "missing.json")) == {}
    path.write_text("{not json")
    with pytest.raises(InputError, match=r"event\.json"):
        load_event(str(path))

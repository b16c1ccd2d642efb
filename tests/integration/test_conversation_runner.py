"""`agentci run` drives a conversation turn by turn.

A real openai-SDK agent against the local scripted model, in both styles (the history resent each turn, or a session id
the agent keeps state under), as a command and as a `python:` callable; stop_on_failure ends the conversation at the
turn that blocks. The same on the real Agents SDK and LangGraph: tests/e2e/test_conversation_frameworks.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fakes.conversations import ASK, ASKS_FIRST, GIVE
from fakes.scripted_openai import ScriptedOpenAIServer, Turn
from helpers import ROOT, github_outputs, hermetic_environment, run_cli

from agentci_action import load_spec, run_agent, run_spec
from agentci_action.engine.evaluate_spec import Settings
from agentci_action.pipeline.blocking import parse_fail_on
from integration.test_cli_names import run_step_of_the_run_action

AGENTS = ROOT / "tests" / "agents"
REFUNDS_AT_ONCE = {
    ASK: [Turn(tool_calls=[("issue_refund", {"order_id": "last"})]), Turn(content="Done, your order is refunded.")],
    GIVE: [Turn(content="It is refunded already.")],
}
CONVERSATION = {
    "id": "refund",
    "turns": [
        {
            "user": ASK,
            "correctness": {"expected_in_answer": ["order number"]},
            "path": {"forbidden_tools": ["issue_refund"]},
        },
        {"user": GIVE, "path": {"expected_tools": ["lookup_order", "issue_refund"]}},
    ],
    "correctness": {"expected_in_answer": ["refunded"]},
    "cost": {"max_turns": 2},
}
RUNNERS = {
    "command, history resent": {"command": ["python", str(AGENTS / "support_chat.py"), "history"]},
    "command, session": {"command": ["python", str(AGENTS / "support_chat.py"), "session"]},
    "python, history resent": {"python": "support_chat:chat", "workers": 2},
    "python, session": {"python": "support_chat:chat_in_session", "workers": 2},
}


def _spec(folder: Path, runner: dict, **query) -> Path:
    path = folder / "spec.yaml"
    runner = {"cwd": str(AGENTS), "retries": 0, **runner}
    path.write_text(yaml.safe_dump({"agent": "support", "runner": runner, "queries": [{**CONVERSATION, **query}]}))
    return path


def _environment(model: ScriptedOpenAIServer, folder: Path) -> dict[str, str]:
    (folder / "sessions").mkdir(exist_ok=True)
    return hermetic_environment(
        OPENAI_BASE_URL=model.openai_url, OPENAI_API_KEY="test-key", SUPPORT_SESSIONS=str(folder / "sessions")
    )


@pytest.mark.parametrize("style", RUNNERS)
def test_each_turn_reaches_the_agent_with_the_conversation_so_far(tmp_path, style):
    with ScriptedOpenAIServer(ASKS_FIRST, per_message=True) as model:
        spec = _spec(tmp_path, RUNNERS[style])
        result = run_cli("test", "--spec", spec, "--record", tmp_path / "traces", env=_environment(model, tmp_path))
        assert result.returncode == 0, result.stdout + result.stderr
        (trace,) = [json.loads(line) for line in (tmp_path / "traces" / "refund.jsonl").read_text().splitlines()]
        assert [turn["query"] for turn in trace["turns"]] == [ASK, GIVE]
        assert [call["name"] for call in trace["turns"][1]["tool_calls"]] == ["lookup_order", "issue_refund"]
        assert trace["turns"][0]["final_answer"] == "Sure, what is your order number?"
        assert trace["total_llm_calls"] == 4 and trace["total_tokens"] == 4 * 15
        # turn 2's model calls carry turn 1's exchange: resent by AgentCI, or kept by the agent under its session
        later = [body["messages"] for body in model.bodies[1:]]
        for messages in later:
            said = [(m["role"], m.get("content")) for m in messages]
            assert ("user", ASK) in said and ("assistant", "Sure, what is your order number?") in said
        if "session" in style:
            (kept,) = (tmp_path / "sessions").iterdir()  # one session, both turns under it
            assert kept.name.startswith("refund.run0.")
            assert sum(m["role"] == "tool" for m in json.loads(kept.read_text())) == 2


def test_stop_on_failure_ends_the_conversation_at_the_turn_that_blocks(tmp_path):
    with ScriptedOpenAIServer(REFUNDS_AT_ONCE, per_message=True) as model:
        spec = _spec(tmp_path, RUNNERS["command, history resent"], stop_on_failure=True)
        env = _environment(model, tmp_path)
        result = run_cli("test", "--spec", spec, "--record", tmp_path / "traces", "--format", "json", env=env)
        assert result.returncode == 1, result.stderr
        assert len(model.bodies) == 2  # turn 1's two model calls; turn 2 never ran
        (trace,) = [json.loads(line) for line in (tmp_path / "traces" / "refund.jsonl").read_text().splitlines()]
        assert [turn["query"] for turn in trace["turns"]] == [ASK]
        (query,) = json.loads(result.stdout)["results"]
        assert [turn["status"] for turn in query["turns"]] == ["fail", "skip"]


def test_under_capture_otel_a_turn_s_spans_carry_its_turn():
    from agentci_action.run.capture.environment import resource_attributes
    from agentci_action.run.capture.receiver import run_key

    attributes = resource_attributes("service.name=chat,agentci.turn=9", "refund", 1, 2)
    assert attributes == "service.name=chat,agentci.query_id=refund,agentci.run=1,agentci.turn=2"
    resource = dict(item.split("=") for item in attributes.split(","))
    assert run_key(resource) == ("refund", 1, 2)
    assert resource_attributes(None, "single", 0) == "agentci.query_id=single,agentci.run=0"  # no turn outside one
    assert run_key({"agentci.query_id": "single", "agentci.run": "0"}) == ("single", 0, 0)


def test_a_turn_that_crashes_fails_the_run_naming_its_turn(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\n"
        "job = json.load(sys.stdin)\n"
        "if job['turn'] == 2:\n"
        "    sys.exit('lost the order book')\n"
        "print(json.dumps({'final_answer': 'What is your order number?'}))\n"
    )
    spec = _spec(tmp_path, {"command": ["python", str(agent)], "cwd": str(tmp_path)})
    result = run_cli("run", "--spec", spec, "--output", tmp_path / "traces")
    assert result.returncode == 1
    (trace,) = [json.loads(line) for line in (tmp_path / "traces" / "refund.jsonl").read_text().splitlines()]
    assert trace["metadata"]["agentci_error"] == (
        "query 'refund' run 0: turn 2: exit code 1; stderr: lost the order book"
    )


# A conversation whose turn 1 answers without the lookup its path expects: a path warning, which blocks only when
# fail-on names path. Under stop_on_failure the runner then ends the conversation there, as the evaluation judges it.
ASKS_WITHOUT_LOOKUP = (
    "import json, sys\n"
    "job = json.load(sys.stdin)\n"
    "print(json.dumps({'final_answer': 'What is your order number?' if job['turn'] == 1 else 'Refunded.'}))\n"
)
STOPPING = {
    "id": "refund",
    "stop_on_failure": True,
    "turns": [
        {"user": ASK, "path": {"expected_tools": ["lookup_order"]}},
        {"user": GIVE, "correctness": {"expected_in_answer": ["Refunded"]}},
    ],
}


def _stopping_spec(folder: Path) -> Path:
    agent = folder / "agent.py"
    agent.write_text(ASKS_WITHOUT_LOOKUP)
    path = folder / "spec.yaml"
    runner = {"command": ["python", str(agent)], "cwd": str(folder), "retries": 0}
    path.write_text(yaml.safe_dump({"agent": "support", "runner": runner, "queries": [STOPPING]}))
    return path


def _turns_run(folder: Path) -> int:
    (trace,) = [json.loads(line) for line in (folder / "refund.jsonl").read_text().splitlines()]
    return len(trace["turns"])


@pytest.mark.parametrize(("fail_on", "turns"), [(None, 2), ("correctness,path", 1)])
def test_the_runner_stops_a_conversation_where_the_run_s_fail_on_blocks(tmp_path, fail_on, turns):
    """Every way to run the agent judges the stop with the fail-on it was given, not the default.

    `agentci run --fail-on`, `agentci test --fail-on` (which runs the agent), the run action's `fail-on` input and the
    Python API's settings.
    """
    spec = _stopping_spec(tmp_path)
    flag = ["--fail-on", fail_on] if fail_on else []
    assert run_cli("run", "--spec", spec, "--output", tmp_path / "run", *flag).returncode == 0
    assert _turns_run(tmp_path / "run") == turns
    tested = run_cli("test", "--spec", spec, "--record", tmp_path / "test", "--format", "json", *flag)
    assert tested.returncode == (1 if fail_on else 0), tested.stderr
    assert _turns_run(tmp_path / "test") == turns
    (query,) = json.loads(tested.stdout)["results"]
    assert [turn["status"] for turn in query["turns"]] == (["fail", "skip"] if fail_on else ["warn", "pass"])
    done = run_step_of_the_run_action(tmp_path, tmp_path, spec=str(spec), output="action", **{"fail-on": fail_on or ""})
    assert done.returncode == 0, done.stderr
    assert github_outputs((tmp_path / "github-output").read_text()) == {"traces": "action"}
    assert _turns_run(tmp_path / "action") == turns
    loaded = load_spec(str(spec))
    settings = Settings(fail_on=parse_fail_on(fail_on))
    (trace,) = run_agent(loaded, fail_on=settings.fail_on)
    assert len(trace.turns) == turns
    (result,) = run_spec(loaded, settings=settings).results
    assert [turn.status.value for turn in result.turns] == (["fail", "skip"] if fail_on else ["warn", "pass"])

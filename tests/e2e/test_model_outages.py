"""What the real SDKs print when their model service is down, rate-limited or failing is recognised as an outage.

Agents on the real `openai`, `anthropic`, `httpx` and `requests` clients die against a closed port or a local server
that fails when told to; their tracebacks (and, under `capture: otel`, their spans) are read as infrastructure, the run
is retried and ends [INFRA] (exit 2), and the diff says the query was not run instead of comparing empty answers.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
import yaml
from fakes.llm_server import FakeLLMServer
from helpers import ROOT, hermetic_environment, run_cli
from unit.run.test_outages import stderr_of

from agentci_action.run import RunOptions, RunSetup, run_agent
from agentci_action.run.outages import outage_in_stderr
from agentci_action.spec.loader import load_spec


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens: the model service is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


DOWN = closed_port()
OPENAI = "import openai\nopenai.OpenAI(base_url='{url}', api_key='k', max_retries=0).chat.completions.create(model='gpt-4o-mini', messages=[{{'role': 'user', 'content': 'hi'}}])"
ANTHROPIC = "import anthropic\nanthropic.Anthropic(base_url='{url}', api_key='k', max_retries=0).messages.create(model='claude-sonnet-4-6', max_tokens=9, messages=[{{'role': 'user', 'content': 'hi'}}])"


ANTHROPIC_TOOL = (
    "import anthropic\nanthropic.Anthropic(base_url='{url}', api_key='k', max_retries=0).messages.create("
    "model='claude-sonnet-4-6', max_tokens=9, messages=[{{'role': 'user', 'content': 'hi'}}], "
    "tools=[{{'name': 'answer', 'input_schema': {{'type': 'object'}}}}], tool_choice={{'type': 'tool', 'name': 'answer'}})"
)


@pytest.fixture(scope="module")
def model():
    """A model service that answers an agent's turns (and fails when told to)."""
    with FakeLLMServer(agent_model=lambda messages, tools: {"content": "Your refund is on its way."}) as server:
        yield server


UNREACHABLE = {  # a model service that cannot be reached, as each client sees it ({url}: a port nobody listens on)
    "openai": (OPENAI.format(url="{url}/v1"), "openai.APIConnectionError: Connection error."),
    "anthropic": (ANTHROPIC.format(url="{url}"), "anthropic.APIConnectionError: Connection error."),
    "httpx": ("import httpx\nhttpx.post('{url}/v1/chat/completions')", "httpx.ConnectError: "),
    "requests": (
        "import requests\nrequests.post('{url}/v1/chat/completions', timeout=5)",
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1'",
    ),
    "wrapped by the agent": (
        "import openai\ntry:\n    "
        + OPENAI.format(url="{url}/v1").split("\n", 1)[1]
        + "\nexcept openai.APIError as exc:\n    raise RuntimeError('the model call failed') from exc",
        "openai.APIConnectionError: Connection error.",
    ),
}


@pytest.mark.parametrize("client", sorted(UNREACHABLE))
def test_a_model_service_that_cannot_be_reached_is_recognised_in_the_real_sdks_traceback(client):
    code, expected = UNREACHABLE[client]
    found = outage_in_stderr(stderr_of(code.replace("{url}", f"http://127.0.0.1:{DOWN}")))
    assert found is not None and found.startswith(expected), (client, found)


@pytest.mark.parametrize(
    ("fault", "code", "expected"),
    [
        ("500", OPENAI, "openai.InternalServerError: Error code: 500"),
        ("429", OPENAI, "openai.RateLimitError: Error code: 429"),
        ("500", ANTHROPIC_TOOL, "anthropic.InternalServerError: Error code: 500"),
        ("429", ANTHROPIC_TOOL, "anthropic.RateLimitError: Error code: 429"),
        (
            "500",
            "import httpx\nhttpx.post('{url}/chat/completions', json={{}}).raise_for_status()",
            "httpx.HTTPStatusError: Server error '500 Internal Server Error'",
        ),
        (
            "429",
            "import requests\nrequests.post('{url}/chat/completions', json={{}}, timeout=5).raise_for_status()",
            "requests.exceptions.HTTPError: 429 Client Error",
        ),
    ],
)
def test_server_errors_and_rate_limits_the_sdks_gave_up_on_are_recognised(model, fault, code, expected):
    model.fail_next(fault, retry_after=0)
    url = model.anthropic_url if "anthropic" in code else model.openai_url
    found = outage_in_stderr(stderr_of(code.format(url=url)))
    assert found is not None and found.startswith(expected), found


def test_the_agent_s_own_errors_are_not_outages(model):
    assert outage_in_stderr(stderr_of("raise ValueError('boom')")) is None
    model.fail_next("echo")  # a 400 (the request was wrong, not the service): openai.BadRequestError
    assert outage_in_stderr(stderr_of(OPENAI.format(url=model.openai_url))) is None
    # a rate limit the agent handled, then a crash of its own: only the last traceback chain counts
    handled = stderr_of(
        "import traceback\ntry:\n    raise TimeoutError('slow model')\nexcept TimeoutError:\n    traceback.print_exc()\n"
        "raise KeyError('answer')"
    )
    assert "TimeoutError: slow model" in handled and outage_in_stderr(handled) is None


AGENT = """\
import json, os, sys
from pathlib import Path
import openai

job = json.load(sys.stdin)
attempts = Path(os.environ["ATTEMPTS"])
attempts.write_text(attempts.read_text() + "x" if attempts.exists() else "x")
client = openai.OpenAI(max_retries=0)
reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": job["query"]}])
print(json.dumps({"final_answer": reply.choices[0].message.content, "tool_calls": []}))
"""


def write_spec(folder: Path, runner: dict) -> Path:
    (folder / "agent.py").write_text(AGENT)
    spec = {
        "agent": "refund-agent",
        "runner": {"command": [sys.executable, "agent.py"], "retries": 1, "backoff_s": 0.01, **runner},
        "queries": [{"id": "refund", "query": "Refund order 1042", "correctness": {"expected_in_answer": ["refund"]}}],
    }
    path = folder / "agentci_spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_command_agent_whose_model_is_down_is_retried_then_infra_not_a_crash(tmp_path):
    spec = write_spec(
        tmp_path,
        {
            "env": {
                "OPENAI_BASE_URL": f"http://127.0.0.1:{DOWN}/v1",
                "OPENAI_API_KEY": "k",
                "ATTEMPTS": str(tmp_path / "n"),
            }
        },
    )
    outcome = run_agent(load_spec(spec), RunOptions(tmp_path / "traces"), RunSetup(environ=hermetic_environment()))
    assert (outcome.failed, outcome.infra) == (0, 1)
    assert (tmp_path / "n").read_text() == "xx"  # retried once, as runner.retries says
    [error] = outcome.errors
    assert error.startswith("[INFRA] query 'refund' run 0: exit code 1 after a model outage: openai.APIConnectionError")
    assert error.endswith("(2 attempts)") and "Traceback" not in error
    done = run_cli("run", "--spec", str(spec), "--output", str(tmp_path / "again"))
    assert done.returncode == 2 and "1 infra error" in done.stderr


def test_the_diff_says_not_run_instead_of_empty_answers(tmp_path, model):
    model_env = {"OPENAI_API_KEY": "k", "ATTEMPTS": str(tmp_path / "n")}
    spec = write_spec(tmp_path, {"env": {**model_env, "OPENAI_BASE_URL": model.openai_url}})
    saved = run_cli("save", "--spec", str(spec), "--version", "v1")
    assert saved.returncode == 0, saved.stderr
    down = write_spec(tmp_path, {"env": {**model_env, "OPENAI_BASE_URL": f"http://127.0.0.1:{DOWN}/v1"}})
    done = run_cli("test", "--spec", str(down), "--baseline", "v1", "--format", "json")
    assert done.returncode == 2, done.stderr  # infrastructure: not a failing agent
    data = json.loads(done.stdout)
    [query] = data["diff"]["queries"]
    assert query["kinds"] == ["not_run"] and query["answer"]["after"] is None
    assert query["why"][0].startswith("[INFRA] query 'refund' run 0: exit code 1 after a model outage")
    console = run_cli("test", "--spec", str(down), "--baseline", "v1")
    assert "! NOT RUN  refund" in console.stdout and "PASS → NOT RUN (infrastructure)" in console.stdout
    assert "Answer after" not in console.stdout
    markdown = run_cli("test", "--spec", str(down), "--baseline", "v1", "--format", "markdown").stdout
    assert "| 💥 | refund | not run | ✅ pass → 💥 not run (infrastructure) |" in markdown
    assert "1 query not run or evaluated" in markdown and "no regressions" in markdown


def test_capture_otel_reads_the_outage_from_the_spans_when_stderr_says_nothing(tmp_path):
    """The openai-v2 instrumentation marks the failed model call's span (error.type).

    The agent's stderr is discarded, so only the spans can tell an outage from a crash.
    """
    agent = ROOT / "tests" / "agents" / "otel_weather_agent.py"
    env = {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{DOWN}/v1",
        "OPENAI_API_KEY": "k",
        "PYTHONPATH": str(ROOT / "tests" / "agents"),
    }
    spec = {
        "agent": "weather",
        "runner": {
            "command": ["sh", "-c", f"exec {sys.executable} {agent} openai-v2 2>/dev/null"],
            "capture": "otel",
            "retries": 0,
            "env": env,
        },
        "queries": [{"id": "oslo", "query": "What is the weather in Oslo?"}],
    }
    path = tmp_path / "agentci_spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    clean = {k: v for k, v in hermetic_environment().items() if not k.startswith("OTEL_")}
    outcome = run_agent(load_spec(path), RunOptions(tmp_path / "traces"), RunSetup(environ=clean))
    assert (outcome.failed, outcome.infra) == (0, 1), outcome.errors
    assert "after a model outage: span chat gpt-4o-mini: openai.APIConnectionError" in outcome.errors[0]

"""A model outage is infrastructure, not a failing agent (agentci_action/run/outages.py).

The tables read here from an exception, a traceback and spans; the real SDKs' own tracebacks when their model service is
down, rate-limited or failing, the retries that end [INFRA] and the diff's "not run" are in
tests/e2e/test_model_outages.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from agentci_action.run.outages import outage_in_spans, outage_in_stderr
from agentci_action.run.worker import failure


def stderr_of(code: str, **env: str) -> str:
    """What a Python agent that runs `code` prints to stderr when it dies (the real SDKs, the real traceback)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert done.returncode != 0, done.stdout
    return done.stderr


def test_litellm_s_exception_module_is_recognised(tmp_path):
    """LiteLLM is no dependency here.

    Its exceptions live in `litellm.exceptions` and are named as below (its exception-mapping docs), so a stand-in
    module of that name raises one for a real traceback.
    """
    (tmp_path / "litellm").mkdir()
    (tmp_path / "litellm" / "__init__.py").write_text("")
    (tmp_path / "litellm" / "exceptions.py").write_text(
        "class RateLimitError(Exception):\n    pass\n\nclass ServiceUnavailableError(Exception):\n    pass\n"
        "class Timeout(Exception):\n    pass\n\nclass BadRequestError(Exception):\n    pass\n"
    )
    for name, outage in (
        ("RateLimitError", True),
        ("ServiceUnavailableError", True),
        ("Timeout", True),
        ("BadRequestError", False),
    ):
        code = f"from litellm.exceptions import {name}\nraise {name}('litellm.{name}: OpenAIException - x')"
        found = outage_in_stderr(stderr_of(code, PYTHONPATH=str(tmp_path)))
        assert (found is not None) is outage, name
        if outage:
            assert found.startswith(f"litellm.exceptions.{name}: litellm.{name}")


def test_the_python_runner_reads_the_same_table_from_the_exception_itself():
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert failure(openai.APIConnectionError(request=request))["infra"]
    assert failure(httpx.ConnectError("refused"))["infra"]
    try:
        try:
            raise httpx.ReadTimeout("slow")
        except httpx.ReadTimeout as exc:
            raise RuntimeError("the model call failed") from exc
    except RuntimeError as wrapped:
        assert failure(wrapped)["infra"]
    assert not failure(ValueError("boom"))["infra"]


def test_spans_that_recorded_an_outage_are_recognised():
    span = {
        "name": "chat gpt-4o-mini",
        "attributes": [{"key": "error.type", "value": {"stringValue": "APIConnectionError"}}],
        "status": {"code": 2, "message": "Connection error."},
    }
    event = {
        "name": "exception",
        "attributes": [
            {"key": "exception.type", "value": {"stringValue": "openai.RateLimitError"}},
            {"key": "exception.message", "value": {"stringValue": "Error code: 429"}},
        ],
    }
    assert outage_in_spans([{"scopeSpans": [{"spans": [span]}]}]) == "span chat gpt-4o-mini: APIConnectionError"
    assert outage_in_spans([{"scopeSpans": [{"spans": [{"name": "agent", "events": [event]}]}]}]) == (
        "span agent: openai.RateLimitError: Error code: 429"
    )
    mine = {"name": "tool", "attributes": [{"key": "error.type", "value": {"stringValue": "KeyError"}}]}
    assert outage_in_spans([{"scopeSpans": [{"spans": [mine]}]}]) is None

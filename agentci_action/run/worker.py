"""The process that runs a `python:` runner's function, so that a run which overruns its timeout can be killed.

    python worker.py MODULE:FUNCTION CWD

Run as a script (not as part of the package, whose imports it does not need): it imports the module once with
CWD first on sys.path, then reads jobs, one JSON line each ({"query", "values": {id, run, tags, metadata}}) from its stdin, calls the
function (awaiting it when it is async) and answers each with one JSON line on its stdout:
{"value": the trace as JSON} or {"failure": "raised ...", "infra": bool}. The first line it writes says whether
the module imported ({"ready": true} or {"import_error": "..."}). Whatever the function prints goes to stderr,
never into the answers. It exits when its stdin closes; AgentCI kills its process group on a timeout.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import inspect
import json
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any

# Exceptions that say the model's service failed, not the agent: raised once the SDK's own retries are spent, they
# make a run an infrastructure failure, retried. One table for both runners: run/outages.py reads a command's stderr
# and spans by it. OUTAGE_NAMES count under any module (openai, anthropic and LiteLLM raise them, and other vendors'
# SDKs name theirs alike); OUTAGE_QUALIFIED only under the module named (a bare ConnectionError could be anything);
# STATUS_ERRORS when their message gives an HTTP status of 429 or 5xx.
OUTAGE_NAMES = frozenset(
    {
        "APIConnectionError",  # openai, anthropic, litellm: the service could not be reached
        "APITimeoutError",
        "RateLimitError",  # 429 after the SDK's retries
        "InternalServerError",  # 5xx after the SDK's retries
        "OverloadedError",  # anthropic, 529
        "ServiceUnavailableError",  # anthropic, litellm: 503
        "BadGatewayError",  # litellm: 502
        "GatewayTimeoutError",  # anthropic: 504
        "ConnectError",  # httpx
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "RemoteProtocolError",
        "TimeoutError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "ConnectionAbortedError",
    }
)
OUTAGE_QUALIFIED = frozenset(
    {
        "requests.exceptions.ConnectionError",
        "requests.exceptions.Timeout",
        "urllib3.exceptions.MaxRetryError",
        "urllib3.exceptions.NewConnectionError",
        "urllib.error.URLError",
        "httpx.ReadError",
        "httpx.WriteError",
        "litellm.exceptions.Timeout",
        "litellm.exceptions.APIError",
    }
)
STATUS_ERRORS = frozenset(
    {
        "httpx.HTTPStatusError",
        "requests.exceptions.HTTPError",
        "urllib.error.HTTPError",
        "openai.APIStatusError",
        "anthropic.APIStatusError",
    }
)
_OUTAGE_STATUS = re.compile(r"\b(?:429|5\d\d)\b")


def outage_type(name: str, message: str = "") -> bool:
    """Whether an exception of this type and message says the model's service failed.

    The type as module.Class, as a traceback prints it, or the bare class.
    """
    return (
        name.rpartition(".")[2] in OUTAGE_NAMES
        or name in OUTAGE_QUALIFIED
        or (name in STATUS_ERRORS and _OUTAGE_STATUS.search(message) is not None)
    )


def is_outage(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from or while handling, is an outage (outage_type)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kind = type(current)
        module = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
        if outage_type(module + kind.__qualname__, str(current)):
            return True
        current = current.__cause__ or current.__context__
    return False


def load(target: str, cwd: str) -> Any:
    """The function `module:function`, imported with `cwd` first on sys.path; ValueError saying what went wrong."""
    module_name, _, attribute = target.partition(":")
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an ImportError, or whatever the module raises while it imports
        raise ValueError(f"module {module_name!r} does not import (from {cwd}): {type(exc).__name__}: {exc}") from None
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise ValueError(f"{target!r}: module {module_name!r} has no function {attribute!r}")
    return found


def keywords(function: Any, values: dict[str, Any]) -> dict[str, Any]:
    """The job's `values` (id, run, tags, metadata) that the function's signature names, or all of them for **kwargs."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return values
    return {name: value for name, value in values.items() if name in parameters}


def failure(exc: BaseException) -> dict[str, Any]:
    """The answer for a function that raised: its type, message and where, and whether it is worth a retry."""
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" (at {Path(where.filename).name}:{where.lineno})" if where else ""
    text = f"raised {type(exc).__name__}: {' '.join(str(exc).split())[:300]}{at}"
    return {"failure": text, "infra": is_outage(exc)}


def as_json(value: Any, query_id: str, since: set[str]) -> Any:
    """A return value as JSON: an Agents SDK RunResult as its trace's records, pydantic models dumped, the rest as is.

    ValueError for a RunResult whose trace the SDK did not record.
    """
    if "agents" in sys.modules and agents_sdk().is_run_result(value):
        return agents_sdk().records_of_run(value, query_id, since)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [as_json(item, query_id, since) for item in value]
    return value


def agents_sdk() -> Any:
    """run/agents_sdk.py, loaded beside this script (the package itself is not imported here)."""
    if "agentci_agents_sdk" not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location("agentci_agents_sdk", Path(__file__).with_name("agents_sdk.py"))
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["agentci_agents_sdk"]


async def awaited(awaitable: Any) -> Any:
    return await awaitable


def call(function: Any, job: dict[str, Any]) -> dict[str, Any]:
    """One run: the function's trace as JSON, or why there is none."""
    since = agents_sdk().collect() if "agents" in sys.modules else set()
    try:
        value = function(job["query"], **keywords(function, job["values"]))
        if inspect.isawaitable(value):
            value = asyncio.run(awaited(value))
    except BaseException as exc:  # reported as the run's failure, SystemExit included
        return failure(exc)
    try:
        return {"value": as_json(value, job["values"]["id"], since)}
    except ValueError as exc:
        return {"failure": str(exc), "infra": False}


def main() -> None:
    target, cwd = sys.argv[1], sys.argv[2]
    sys.path[0] = cwd  # not this script's folder, whose module names would shadow the agent's and the stdlib's
    jobs = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # the function's prints go to stderr
    try:
        function = load(target, cwd)
    except ValueError as exc:
        answers.write(json.dumps({"import_error": str(exc)}) + "\n")
        answers.flush()
        return
    answers.write(json.dumps({"ready": True}) + "\n")
    answers.flush()
    for line in jobs:
        answer = call(function, json.loads(line))
        try:
            encoded = json.dumps(answer, default=str)
        except ValueError as exc:  # a circular structure
            encoded = json.dumps({"failure": f"returned a value that is not JSON: {exc}", "infra": False})
        answers.write(encoded + "\n")
        answers.flush()
    # Its stdin closed: the run is over. Every object the agent's imports made is moved out of the collector's reach,
    # so the interpreter's exit (atexit handlers and threads as ever) does not collect them one by one: an openai
    # SDK's worker exits in 0.05 s instead of 0.5-0.8 s, and AgentCI waits for each at the end of the run.
    gc.freeze()


if __name__ == "__main__":
    main()

"""Run the agent in-process: `module:function`, sync or async, given the query (and id, run, tags, metadata
when its signature names them, or takes **kwargs), returning the trace.

A synchronous function that overruns its timeout cannot be stopped from outside: the run is reported as timed
out and the function is left to finish on its own thread (use `command:` when a hard kill matters). An async
function is cancelled.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..report.text import one_line
from .jobs import Finished, InfraFailure, Job, RunFailure

# Exceptions whose class name says the provider, not the agent, failed: retried as infrastructure failures.
TRANSIENT_ERRORS = frozenset(
    {
        "RateLimitError",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "OverloadedError",
        "TimeoutError",
    }
)
ARGUMENTS = ("id", "run", "tags", "metadata")


def load_callable(target: str, cwd: Path) -> Callable[..., Any]:
    """Import `module:function` with `cwd` first on sys.path; ValueError saying what went wrong."""
    module_name, _, attribute = target.partition(":")
    if str(cwd) not in sys.path:
        sys.path.insert(0, str(cwd))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an ImportError, or whatever the module raises while it imports
        raise ValueError(
            f"module {module_name!r} does not import (from {cwd}): {type(exc).__name__}: {one_line(str(exc))}"
        ) from None
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise ValueError(f"{target!r}: module {module_name!r} has no function {attribute!r}")
    return found


def call_agent(function: Callable[..., Any], job: Job, timeout_s: float, trace_file: Path) -> Finished:
    """Call the function for this job; InfraFailure on a timeout or a provider's transient error, RunFailure on
    any other exception (its type, message and where it was raised)."""
    kwargs = _keywords(function, job)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            result = function(job.query.query, **kwargs)
            if inspect.isawaitable(result):
                result = asyncio.run(_bounded(result, timeout_s))
            outcome["value"] = result
        except BaseException as exc:  # reported as the run's failure; a KeyboardInterrupt reaches the main thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name=f"agentci-{job.query.key}-{job.run}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise InfraFailure(f"timed out after {timeout_s:g} s (runner.timeout_s); the function is still running")
    if "error" in outcome:
        raise _failure(outcome["error"])
    return Finished(trace_file, value=outcome.get("value"))


async def _bounded(awaitable: Any, timeout_s: float) -> Any:
    return await asyncio.wait_for(awaitable, timeout_s)


def _keywords(function: Callable[..., Any], job: Job) -> dict[str, Any]:
    values = {"id": job.query.key, "run": job.run, "tags": list(job.query.tags), "metadata": job.metadata}
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return values
    return {name: values[name] for name in ARGUMENTS if name in parameters}


def _failure(exc: BaseException) -> RunFailure:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" (at {Path(where.filename).name}:{where.lineno})" if where else ""
    text = f"{type(exc).__name__}: {one_line(str(exc))[:300]}{at}"
    if type(exc).__name__ in TRANSIENT_ERRORS or isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return InfraFailure(f"raised {text}")
    return RunFailure(f"raised {text}")

"""A model outage in what a command agent's failed run left behind: infrastructure ([INFRA]), not the agent failing.

A run that exits with an error is read for the exceptions of the SDKs a command agent talks to its model with
(openai, anthropic, LiteLLM, httpx, requests, urllib3, urllib; the table is worker.py's, which the `python:` runner
applies to the exception itself): a connection refused or reset, a timeout, a rate limit (429) or a server error
(5xx, 529) the SDK's own retries did not get past. Where from:

- stderr: the exception lines (`openai.APIConnectionError: Connection error.`) of the last traceback and the
  tracebacks it chains from ("The above exception was the direct cause…"), so an agent that wraps the SDK's error
  in its own is still recognised; with no traceback, the last lines, as an agent's logger prints them;
- its spans (`capture: otel`): a span's `error.type` (the GenAI instrumentations' class name; openai-v2 2.4b0 writes
  "<class 'openai.APIConnectionError'>") or an `exception` event's `exception.type` and `exception.message`.

Such a run is retried as exit code 75 is, and is an error labelled [INFRA] when it persists (`agentci run`, `test`
and `save` exit 2), never a failure of the agent's answer or route.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agentci_action._util.text import one_line
from agentci_action.run.worker import outage_type
from agentci_action.trace.adapters.spans import key_values

TRACEBACK = "Traceback (most recent call last):"
CHAINED = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
_EXCEPTION_LINE = re.compile(r"(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)|(?P<bare>[A-Za-z_][\w.]*(?:Error|Timeout))")
_CLASS_TEXT = re.compile(r"<class '([\w.]+)'>")  # "<class 'openai.APIConnectionError'>" → the name within
TAIL_LINES = 20  # lines read at the end of a stderr without a traceback
SHOWN = 300  # characters of the exception line quoted


def outage_in_stderr(stderr: str) -> str | None:
    """The exception line of the run's last traceback chain that names an outage; None when there is none.

    E.g. 'openai.APIConnectionError: Connection error.'; the last one first.
    """
    for line in reversed(_last_chain(stderr.splitlines())):
        found = _EXCEPTION_LINE.fullmatch(line.rstrip())
        if found is None:
            continue
        name = found["type"] or found["bare"]
        if outage_type(name, found["message"] or ""):
            return one_line(line.strip(), SHOWN)
    return None


def _last_chain(lines: list[str]) -> list[str]:
    """The unindented lines of the last traceback and of those it chains from.

    The last TAIL_LINES lines when there is no traceback.
    """
    starts = [k for k, line in enumerate(lines) if line.rstrip() == TRACEBACK]
    if not starts:
        return lines[-TAIL_LINES:]
    first = len(starts) - 1
    while first > 0 and any(line.strip() in CHAINED for line in lines[starts[first - 1] : starts[first]]):
        first -= 1
    return [line for line in lines[starts[first] :] if line and not line[0].isspace()]


def outage_in_spans(resource_spans: list[dict[str, Any]]) -> str | None:
    """'span chat gpt-4o-mini: openai.APIConnectionError: Connection error.' for the first span with an outage.

    The first span that recorded one (an `exception` event, else its `error.type`); None when none did.
    """
    for span in _spans(resource_spans):
        for event in span.get("events") or []:
            if event.get("name") != "exception":
                continue
            attributes = key_values(event.get("attributes") or [])
            name, message = str(attributes.get("exception.type", "")), str(attributes.get("exception.message", ""))
            if outage_type(name, message):
                return one_line(f"span {span.get('name', '')}: {name}: {message}", SHOWN)
        error = str(key_values(span.get("attributes") or []).get("error.type", ""))
        error = _CLASS_TEXT.sub(r"\1", error)  # some instrumentations write str(type(error))
        if error and outage_type(error, str((span.get("status") or {}).get("message", ""))):
            return one_line(f"span {span.get('name', '')}: {error}", SHOWN)
    return None


def _spans(resource_spans: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    # imported here: OTLP's protobuf modules are start-up time every command run would pay for, and only `capture:
    # otel` has spans to read
    from agentci_action.run.capture.otlp import spans_of

    for resource in resource_spans:
        yield from spans_of(resource)

"""Helpers shared by the framework adapters (not an adapter itself).

Decisions every adapter follows, so the same run gives the same canonical trace whatever produced it:
- Tool-call order is the order the model issued the calls (its turn, then the call's position in that
  turn), never the order tools finished, so parallel calls do not make the path layer flaky.
- Every call the model made is a tool call, whatever its name: a `transfer_to_<agent>` function is a handoff
  only where the framework marks one (a handoff span, a switch of the agent the spans or messages name), and
  even then it is also the tool call that made it, so forbidden, allowed and expected tools and budgets see it.
- When the format carries no final answer, the last assistant text is taken and
  `metadata.final_answer_inferred` is true.
- Every trace says which adapter read it in `metadata.source_format`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import ValidationError

from agentci_action._util.errors import Problem, TraceError
from agentci_action.trace.canonical import Trace

if TYPE_CHECKING:
    from agentci_action.trace.json_records import Record

HANDOFF_PREFIX = "transfer_to_"
QUERY_ID_KEYS = ("agentci.query_id", "agentci_query_id", "query_id")
QUERY_TEXT_KEYS = ("agentci.query", "agentci_query")
RUN_KEYS = ("agentci.run", "agentci_run")  # the repetition index of a run
KEY_NAMES = QUERY_ID_KEYS + QUERY_TEXT_KEYS + RUN_KEYS


def maybe_json(value: Any) -> Any:
    """A JSON object or array given as a string, parsed; anything else unchanged."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def json_attribute(attributes: dict[str, Any], key: str) -> Any:
    """A span attribute written as JSON text (MLflow, Langfuse), parsed; a value that is not JSON as it is."""
    raw = attributes.get(key)
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def text_of(content: Any) -> str:
    """Plain text of a message content: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") in ("text", "output_text", "input_text"):
                value = part.get("text", part.get("content"))
                if isinstance(value, str):
                    texts.append(value)
        return "".join(texts)
    return str(content)


def handoff_target(tool_name: str) -> str | None:
    """'transfer_to_billing_agent' → 'billing_agent'; None for another name.

    Only links a framework's handoff to the call that made it: the name alone is never a handoff.
    """
    return tool_name[len(HANDOFF_PREFIX) :] if tool_name.startswith(HANDOFF_PREFIX) else None


def _agent_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def handoff_tool_name(agent: str) -> str:
    """The tool the OpenAI Agents SDK gives the model for a handoff to `agent` (`Handoff.default_tool_name`).

    'transfer_to_' + the name, white space and other characters not [A-Za-z0-9_] as '_', lower case ('Human agents' →
    'transfer_to_human_agents').
    """
    return re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", HANDOFF_PREFIX + agent)).lower()


def same_agent(target: str, agent: str) -> bool:
    """Whether a handoff tool's target names `agent` ('billing_agent' names 'Billing Agent')."""
    return _agent_key(target) == _agent_key(agent)


def iso_time(nanoseconds: int | None) -> str | None:
    """ISO 8601 UTC time of a Unix time in nanoseconds."""
    if nanoseconds is None:
        return None
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")


def parse_time(text: Any) -> float | None:
    """Seconds since the epoch of an ISO 8601 time (naive times are UTC); None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def duration_ms(start: float | None, end: float | None) -> float | None:
    """end − start in milliseconds (times in seconds); None when either is missing or end precedes start."""
    if start is None or end is None or end < start:
        return None
    return (end - start) * 1000.0


def query_key(metadata: dict[str, Any] | None) -> dict[str, str]:
    """`id`, `query` and `run` from a metadata mapping's agentci.* keys, when present.

    The keys: agentci.query_id / agentci.query / agentci.run.
    """
    found: dict[str, str] = {}
    for field_name, keys in (("id", QUERY_ID_KEYS), ("query", QUERY_TEXT_KEYS), ("run", RUN_KEYS)):
        for key in keys:
            if metadata and metadata.get(key) not in (None, ""):
                found[field_name] = str(metadata[key])
                break
    return found


def record_key(value: dict[str, Any]) -> dict[str, str]:
    """`id` / `query` of a conversation record: its own keys win over its metadata's agentci.* keys."""
    return {**query_key(value.get("metadata")), **{k: str(value[k]) for k in ("id", "query") if value.get(k)}}


def known(fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` without the ones whose value is None (absent token counts stay unset, so their cost is unknown)."""
    return {key: value for key, value in fields.items() if value is not None}


def tool_output(content: Any) -> tuple[Any, str | None]:
    """(result, error) of a tool result with no error flag: a JSON object with an `error` key is a failure."""
    result = maybe_json(content if isinstance(content, str) else text_of(content) or content)
    if isinstance(result, dict) and result.get("error"):
        return result, str(result["error"])
    return result, None


def build_trace(fields: dict[str, Any], file: str, line: int, source_format: str, inferred_answer: bool) -> Trace:
    """Validate adapter output as a canonical Trace (totals derived); a problem names file and line."""
    metadata = {**fields.pop("metadata", {}), "source_format": source_format}
    if inferred_answer:
        metadata["final_answer_inferred"] = True
    try:
        trace = Trace.model_validate({**fields, "metadata": metadata}).with_derived_totals()
    except ValidationError as exc:
        raise TraceError(
            [
                Problem(file, line, f"{source_format}: {err['msg'].removeprefix('Value error, ')}")
                for err in exc.errors()
            ]
        ) from None
    trace._source = f"{file}:{line}"
    return trace


def shape_problem(file: str, line: int, source_format: str, exc: Exception) -> Problem:
    """A record that does not have the format's shape (a missing key, a wrong type)."""
    if isinstance(exc, KeyError):
        what = f"missing key {exc}"
    elif isinstance(exc, OverflowError):
        what = f"a number out of range (such as 1e400 for a token count): {exc}"
    else:
        what = str(exc)
    return Problem(file, line, f"{source_format} format: {what}")


SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


Item = TypeVar("Item")


def _record_line(record: Record) -> int:
    return record.line


@overload
def convert_each(
    items: Iterable[Record], file: str, source_format: str, convert_one: Callable[[Record], Trace]
) -> list[Trace]: ...
@overload
def convert_each(
    items: Iterable[Item],
    file: str,
    source_format: str,
    convert_one: Callable[[Item], Trace],
    line_of: Callable[[Item], int],
) -> list[Trace]: ...
def convert_each(
    items: Iterable[Any],
    file: str,
    source_format: str,
    convert_one: Callable[[Any], Trace],
    line_of: Callable[[Any], int] = _record_line,
) -> list[Trace]:
    """Apply `convert_one(item) -> Trace` to every record or span group, collecting every item's problems.

    A span group's first line is given by `line_of`.
    """
    traces: list[Trace] = []
    problems: list[Problem] = []
    for item in items:
        try:
            traces.append(convert_one(item))
        except TraceError as exc:
            problems.extend(exc.problems)
        except SHAPE_ERRORS as exc:
            problems.append(shape_problem(file, line_of(item), source_format, exc))
    if problems:
        raise TraceError(problems)
    return traces

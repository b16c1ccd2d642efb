"""LiteLLM logging payloads.

One `StandardLoggingPayload` a record (what LiteLLM hands every logger as `kwargs["standard_logging_object"]`: a custom
callback writing it as JSON Lines, or the JSON its bucket and generic-API loggers write), one record per model call.

Calls are grouped into runs, in file order:
- calls sharing a `trace_id` (`litellm_trace_id=` on the call) are one run;
- a call with a `trace_id` of its own (LiteLLM makes one per call when none is given) continues the run of the
  call before it when both name the same query (or neither does) and its `messages` hold an earlier assistant
  turn; otherwise it starts a run.
A run is read as a Chat Completions conversation: the last call's `messages` and every call's `response`, in
order (see openai_chat). Each call: model `response.model` (else `model`), provider `custom_llm_provider`,
tokens from `response.usage` (`prompt_tokens` including `prompt_tokens_details.cached_tokens`,
`completion_tokens` including `completion_tokens_details.reasoning_tokens`), duration `endTime − startTime`,
time to first token `completionStartTime − startTime` for streamed calls. Cost is priced from the tokens as for
every format (LiteLLM's own `response_cost` is not used, so a run costs the same whatever recorded it).
Task status: failed when the run's last call failed (`status: failure`; its `error_str` is kept in
`metadata.error`; a failed call reports no usage and is no LLM call), else completed. Query: `metadata.requester_metadata` (else `spend_logs_metadata`)
`agentci.query_id` / `agentci.query` / `agentci.run` — pass `metadata={"requester_metadata": {...}}` — else the
first user message. Dropped: calls that are not chat completions (embeddings, images), cache and budget fields.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import from_turns
from agentci_action.trace.adapters._conventions import build_trace, convert_each, duration_ms, query_key
from agentci_action.trace.adapters.openai_chat import conversation

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "litellm"
CHAT_CALLS = ("completion", "acompletion")


def _is_payload(value: Any) -> bool:
    return isinstance(value, dict) and "litellm_call_id" in value and "call_type" in value


def detect(records: list[Record]) -> bool:
    return bool(records) and all(_is_payload(r.value) for r in records)


def _key(payload: dict[str, Any]) -> dict[str, str]:
    metadata = payload.get("metadata") or {}
    return query_key(metadata.get("requester_metadata")) or query_key(metadata.get("spend_logs_metadata"))


def _continues(payload: dict[str, Any]) -> bool:
    return any(isinstance(m, dict) and m.get("role") == "assistant" for m in payload.get("messages") or [])


def runs(records: list[Record]) -> list[list[Record]]:
    """Chat-completion records grouped into runs (see the module's docstring), in order of first appearance."""
    shared = Counter(record.value.get("trace_id") for record in records)
    grouped: list[list[Record]] = []
    by_trace: dict[str, list[Record]] = {}
    for record in records:
        payload = record.value
        if payload.get("call_type") not in CHAT_CALLS:
            continue
        trace_id = payload.get("trace_id")
        if trace_id and shared[trace_id] > 1:
            if trace_id not in by_trace:
                by_trace[trace_id] = []
                grouped.append(by_trace[trace_id])
            by_trace[trace_id].append(record)
        elif grouped and _continues(payload) and _key(grouped[-1][-1].value) == _key(payload):
            grouped[-1].append(record)
        else:
            grouped.append([record])
    return grouped


def _llm(payload: dict[str, Any], llm: dict[str, Any]) -> dict[str, Any]:
    start, end, first = payload.get("startTime"), payload.get("endTime"), payload.get("completionStartTime")
    return {
        **llm,
        "model": llm.get("model") or payload.get("model"),
        "provider": payload.get("custom_llm_provider") or llm.get("provider"),
        "duration_ms": duration_ms(start, end),
        **({"ttft_ms": duration_ms(start, first)} if payload.get("stream") else {}),
    }


def _convert_run(run: list[Record], file: str) -> Trace:
    payloads = [record.value for record in run]
    answered = [p for p in payloads if p.get("status") != "failure" and p.get("response")]
    turns, results, query = conversation(payloads[-1].get("messages") or [], [p["response"] for p in answered])
    for turn, payload in zip(turns, answered, strict=False):
        if turn.llm is not None:
            turn.llm = _llm(payload, turn.llm)
    fields = from_turns(turns, results, query)
    key: dict[str, str] = {}
    for payload in payloads:
        key = {**_key(payload), **key}
    last = payloads[-1]
    failed = last.get("status") == "failure"
    fields.update(key)
    fields["metadata"] = {
        **fields["metadata"],
        "trace_id": last.get("trace_id"),
        "status": "failed" if failed else "completed",
        **({"error": str(last.get("error_str") or "the call failed")} if failed else {}),
    }
    return build_trace(fields, file, run[0].line, NAME, inferred_answer=False)


def convert(records: list[Record], file: str) -> list[Trace]:
    return convert_each(runs(records), file, NAME, lambda run: _convert_run(run, file), lambda run: run[0].line)

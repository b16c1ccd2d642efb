"""LangSmith runs (`client.list_runs(...)`, one run per record, e.g. `run.json()` per line).

Runs are grouped by `trace_id` and ordered by `dotted_order` (start time then parent, as LangSmith
sorts them). By `run_type`:
- llm → an LLM call. Usage: the output message's `usage_metadata` (see the langgraph adapter), else the
  run's `prompt_tokens` / `completion_tokens`; model: `extra.metadata.ls_model_name`, else the message's
  `response_metadata`, else `extra.invocation_params.model`; `total_cost` as the call's cost when set.
  The tool calls it issued are the message's `tool_calls`, in order. Time to first token:
  `first_token_time − start_time` (LangSmith records the first token of streamed calls). Input breakdown
  (trace/input_parts.py): a chat model run's `inputs.messages` are the messages it sent (system, human, AI with
  its tool calls, tool results) and `extra.invocation_params.tools` the tool definitions bound to it.
- tool → a tool call: `name`, arguments from `inputs.input` (JSON parsed), result from `outputs.output`
  (a ToolMessage's content when it is one, serialized or as its repr string), failed when the run has
  `error` or the ToolMessage `status: "error"`. Linked to its model call by the ToolMessage's `tool_call_id`.
- retriever → retrieved documents from `outputs.documents` (`page_content`, `metadata.id`, `metadata.score`).
- chain → an agent when its name is the `name` of an AI message in the trace (LangGraph names agents so),
  otherwise only structure.
- The root run's `outputs.output` (a string) is the final answer; else the last AI text (inferred).
- Task status (`metadata.status`, read by the agent checks): the root run's `status`, `success` →
  completed and `error` → failed (any other value, e.g. `pending`, is kept and counts as not completed);
  without one, failed when the root run has an `error`, else completed.
Matching: `agentci.query_id` / `agentci.query` in a run's `extra.metadata`, else the root's
`inputs.input` / first human message in `inputs.messages`, else the first model call's first human message.
Threads: the traces whose runs name one thread in `extra.metadata` (`session_id`, `thread_id` or
`conversation_id`, the keys LangSmith groups threads by; LangGraph writes the `thread_id` of its config there) are
the turns of one conversation, each trace a turn, its message the last human message of its first model call
(adapters/_sessions.py).
Dropped: prompt, parser and embedding runs, feedback, events.
"""

from __future__ import annotations

import ast
import json
import re
from typing import TYPE_CHECKING, Any

from agentci_action._util.errors import Problem, TraceError
from agentci_action.trace.adapters._assembly import SpanView, ViewOf, from_spans
from agentci_action.trace.adapters._conventions import (
    build_trace,
    convert_each,
    duration_ms,
    known,
    maybe_json,
    parse_time,
    text_of,
)
from agentci_action.trace.adapters._sessions import conversations
from agentci_action.trace.adapters.langgraph import lc_documents, lc_message, lc_usage, tool_result
from agentci_action.trace.adapters.spans import Span, Tree, by_trace, first_line
from agentci_action.trace.input_parts import Message, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "langsmith"
ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}  # LangChain's message types
RUN_TYPES = {"llm", "chain", "tool", "retriever", "prompt", "parser", "embedding"}
STATUSES = {"success": "completed", "error": "failed"}
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")  # LangSmith's thread keys, in the order it reads them


def detect(records: list[Record]) -> bool:
    return bool(records) and all(
        isinstance(r.value, dict) and r.value.get("run_type") in RUN_TYPES and "id" in r.value for r in records
    )


def _generation_message(run: dict[str, Any]) -> dict[str, Any]:
    outputs = run.get("outputs") or {}
    generations = outputs.get("generations") or []
    first = generations[0] if generations else None
    first = first[0] if isinstance(first, list) and first else first
    if isinstance(first, dict):
        return lc_message(first.get("message")) or {"type": "ai", "content": first.get("text", "")}
    return lc_message(outputs.get("output")) or lc_message(outputs) or {}


def _human_texts(inputs: dict[str, Any]) -> list[str]:
    """The run's input text, else the texts of the human messages of its input, in order."""
    text = inputs.get("input")
    if isinstance(text, str):
        return [text]
    messages = inputs.get("messages") or []
    if messages and isinstance(messages[0], list):  # chat model runs take a batch of message lists
        messages = messages[0]
    found = [lc_message(m) for m in messages]
    return [text_of(m.get("content")) for m in found if m and m.get("type") == "human"]


def _first_human(inputs: dict[str, Any]) -> str:
    return next(iter(_human_texts(inputs)), "")


def _session(meta: dict[str, Any]) -> str | None:
    """The thread a run belongs to: the first of THREAD_KEYS its metadata gives."""
    return next((str(meta[key]) for key in THREAD_KEYS if meta.get(key) not in (None, "")), None)


def _llm(run: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    extra = run.get("extra") or {}
    usage = lc_usage(message) or known(  # absent counts stay unset: the call's cost is then unknown, not $0
        {
            "input_tokens": None if run.get("prompt_tokens") is None else int(run["prompt_tokens"]),
            "output_tokens": None if run.get("completion_tokens") is None else int(run["completion_tokens"]),
        }
    )
    model = (
        (extra.get("metadata") or {}).get("ls_model_name")
        or usage.get("model")
        or (extra.get("invocation_params") or {}).get("model")
        or (extra.get("invocation_params") or {}).get("model_name")
    )
    cost = run.get("total_cost")
    ttft = duration_ms(parse_time(run.get("start_time")), parse_time(run.get("first_token_time")))
    provider = (extra.get("metadata") or {}).get("ls_provider") or usage.get("provider")
    return {
        **usage,
        "model": model,
        "provider": provider,
        "cost_usd": float(cost) if cost is not None else None,
        **({"ttft_ms": ttft} if ttft is not None else {}),
    }


def _request_message(message: dict[str, Any]) -> Message:
    """A LangChain message as its chat model sent it.

    An AI message's tool call arguments as JSON text, as langchain-openai writes them.
    """
    kind, text = message.get("type"), text_of(message.get("content"))
    if kind == "tool":
        return Message("tool", results=[(message.get("tool_call_id"), text)])
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    return Message(
        ROLES.get(str(kind), "user"),
        texts=[text] if text else [],
        calls=[(str(c.get("name")), json.dumps(c.get("args"), ensure_ascii=False)) for c in calls],
        call_ids=[c.get("id") for c in calls],
    )


def _input_breakdown(run: dict[str, Any], model: str | None) -> dict[str, Any] | None:
    """A chat model run's input breakdown.

    The messages of `inputs.messages` and the bound tools; None for a run that records no messages (a completion model's
    prompt string).
    """
    sent = (run.get("inputs") or {}).get("messages") or []
    if sent and isinstance(sent[0], list):  # a batch of message lists: the run's is the first
        sent = sent[0]
    messages = [found for m in sent if (found := lc_message(m))]
    if not messages:
        return None
    tools = ((run.get("extra") or {}).get("invocation_params") or {}).get("tools") or []
    return breakdown(model, [], [_request_message(m) for m in messages], schemas(tools))


def _view(agent_names: set[str]) -> ViewOf:
    def view(span: Span) -> SpanView:
        found = _role_view(span)
        found.session = _session(found.metadata)
        return found

    def _role_view(span: Span) -> SpanView:
        run = span.attributes
        kind = run.get("run_type")
        meta = (run.get("extra") or {}).get("metadata") or {}
        inputs, outputs = run.get("inputs") or {}, run.get("outputs") or {}
        if kind == "llm":
            message = _generation_message(run)
            llm = _llm(run, message)
            return SpanView(
                kind="llm",
                metadata=meta,
                llm={**llm, "input_breakdown": _input_breakdown(run, llm["model"])},
                issued_calls=[c.get("id") for c in message.get("tool_calls") or [] if c.get("id")],
                output_text=text_of(message.get("content")),
                input_text=_first_human(inputs),
                latest_input=next(reversed(_human_texts(inputs)), ""),
            )
        if kind == "tool":
            output = _tool_message(outputs.get("output"))
            result = tool_result(output)[0] if output else maybe_json(outputs.get("output"))
            return SpanView(
                kind="tool",
                metadata=meta,
                tool_name=run.get("name", ""),
                arguments=maybe_json(inputs.get("input", inputs)),
                result=result,
                call_id=(output or {}).get("tool_call_id"),
            )
        if kind == "retriever":
            return SpanView(kind="retrieval", metadata=meta, documents=lc_documents(outputs.get("documents")))
        output = outputs.get("output")
        answer = output if isinstance(output, str) else ""
        if kind == "chain" and run.get("name") in agent_names:
            return SpanView(
                kind="agent", metadata=meta, agent=run["name"], output_text=answer, input_text=_first_human(inputs)
            )
        return SpanView(metadata=meta, output_text=answer, input_text=_first_human(inputs))

    return view


_MESSAGE_REPR = re.compile(r"""content=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")(.*)""", re.DOTALL)


def _tool_message(output: Any) -> dict[str, Any] | None:
    """A tool run's output as a ToolMessage dict.

    Serialized, or the ToolMessage's repr string (`content='…' name='…' tool_call_id='…'`) LangChain's tracer records
    when it cannot serialize it.
    """
    message = lc_message(output)
    if message or not isinstance(output, str):
        return message
    match = _MESSAGE_REPR.fullmatch(output)
    if not match or "tool_call_id=" not in match.group(2):
        return None
    call_id = re.search(r"tool_call_id='([^']*)'", match.group(2))
    return {
        "type": "tool",
        "content": ast.literal_eval(match.group(1)),
        "tool_call_id": call_id.group(1) if call_id else None,
        "status": "error" if "status='error'" in match.group(2) else "success",
    }


def _error(run: dict[str, Any]) -> str | None:
    """The run's error, else a ToolMessage output's content when its status is error."""
    output = _tool_message((run.get("outputs") or {}).get("output"))
    return run.get("error") or (tool_result(output)[1] if output else None)


def convert(records: list[Record], file: str) -> list[Trace]:
    problems = [
        Problem(file, r.line, "expected a LangSmith run with `id` and `run_type`")
        for r in records
        if not isinstance(r.value, dict) or "id" not in r.value or "run_type" not in r.value
    ]
    if problems:
        raise TraceError(problems)
    ordered = sorted(records, key=lambda r: (str(r.value.get("dotted_order") or ""), r.line))
    spans = [
        Span(
            trace_id=str(r.value.get("trace_id") or r.value["id"]),
            span_id=str(r.value["id"]),
            parent_id=r.value.get("parent_run_id"),
            name=str(r.value.get("name", "")),
            start=parse_time(r.value.get("start_time")),
            end=parse_time(r.value.get("end_time")),
            attributes=r.value,
            error=_error(r.value),
            line=r.line,
            position=n,
        )
        for n, r in enumerate(ordered)
    ]

    def one(group: list[Span]) -> Trace:
        names = {
            m["name"]
            for s in group
            if s.attributes.get("run_type") == "llm"
            for m in [_generation_message(s.attributes)]
            if m.get("name")
        }
        fields, inferred = from_spans(group, _view(names))
        status = Tree(group).roots()[0].attributes.get("status")
        if status:
            fields["metadata"]["status"] = STATUSES.get(str(status).lower(), str(status))
        return build_trace(fields, file, first_line(group), NAME, inferred)

    return conversations(convert_each(by_trace(spans), file, NAME, one, first_line))

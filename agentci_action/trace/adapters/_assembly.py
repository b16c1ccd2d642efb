"""Build canonical trace fields from the two shapes frameworks record (not an adapter itself).

Span trees (OpenTelemetry GenAI, OpenInference, OpenAI Agents SDK, LangSmith runs): an adapter says what
each span is (`SpanView`); `from_spans` then
- counts each model-call span once as an LLM call, wherever it is nested (usage on agent or chain spans
  is ignored, so a nested sub-agent's calls are never counted twice). A model-call span inside another
  model-call span is the same call recorded by two instrumentation layers (LangChain's and the provider
  SDK's instrumentor): the pair counts once, with the usage of the span that carries it (the outer one
  when both or neither do); fields one layer left empty are filled from the other;
- orders tool spans by the model call that issued them (its start, then the call's position in that
  call's output, linked by tool-call id); a tool span with no link sorts by its own start;
- when a run has no tool span at all (a provider instrumentation alone records only model calls), reads the
  tool calls from the model calls' messages: each call a model issued (name, arguments, id), in issue order,
  with the result from the later tool message that answers its id (an object with an `error` key is a
  failure). With tool spans present, the messages are not read for tools, so no call counts twice;
- gives each tool call the `agent` of its nearest enclosing agent span;
- takes handoffs only where the framework marks them: its handoff spans; when there are none, each switch
  between consecutive top-level agent spans (a nested agent span is a sub-agent, not a handoff). A call named
  `transfer_to_<agent>` is a tool call like any other (τ-bench's `transfer_to_human_agents` escalates to a
  person); a handoff span is also the tool call that made it, so every tool check sees that call by its name:
  the tool the span names, else the model's `transfer_to_<agent>` call for the agent handed to (the OpenAI
  Agents SDK runs no tool span for it), else, when no message holds that call, the tool name the Agents SDK
  gives every handoff (all the handoff spans read here come from its instrumentations);
- takes the final answer from the output of the last root span that has one, else the last model output (marked inferred);
- sets the task's status (`metadata.status`, read by the agent checks): failed when a root span, or a span
  the adapter marks as the run's own (`fails_task`), failed (error status), else completed;
- sets `metadata.content_missing` (to the adapter's `content_switch`) when model calls carry no message
  content at all (an instrumentation's default of not capturing it), so the run can say which switch to set;
- matches the query by `agentci.query_id` / `agentci.query` on any span, else the root span's input,
  else the first user message of the first model call; in a session (a span's `session`), the turn's message:
  the last user message of its first model call, and `metadata.session_id` names the session.

Conversations (Chat Completions, Responses, Anthropic Messages, LangGraph messages): `from_turns` takes
assistant turns in order; tool calls keep the order of the turn and of the call inside it, and a tool
result is linked to its call by id. A handoff is a switch of the agent the messages name (the framework's own
mark), never a call's name.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentci_action.trace.adapters._conventions import (
    build_trace,
    convert_each,
    duration_ms,
    handoff_target,
    handoff_tool_name,
    iso_time,
    query_key,
    same_agent,
    tool_output,
)
from agentci_action.trace.adapters._sessions import SESSION_KEY, conversations
from agentci_action.trace.adapters.spans import Span, Tree, by_trace, first_line
from agentci_action.trace.canonical import Trace


@dataclass
class SpanView:
    """What one span means to the canonical trace; `kind` is llm, tool, agent, retrieval, handoff or other."""

    kind: str = "other"
    llm: dict[str, Any] = field(default_factory=dict)  # LLMCall fields except timing
    tool_name: str = ""
    arguments: Any = None
    result: Any = None
    call_id: str | None = None
    agent: str | None = None  # agent spans: the agent's name
    handoff_to: str | None = None  # handoff spans (and `tool_name` when the span names the tool that made it)
    handoff_from: str | None = None
    issued_calls: list[str] = field(default_factory=list)  # llm spans: tool-call ids in output order
    message_calls: list[dict[str, Any]] = field(default_factory=list)  # llm spans: issued calls {id, name, arguments}
    message_results: dict[str, Any] = field(default_factory=dict)  # llm spans: tool-call id → result in the input
    has_content: bool = False  # llm spans: any input or output message was recorded
    continues: bool | None = None  # llm spans: its input holds an earlier assistant turn (None: no input recorded)
    fails_task: bool = False  # an error on this span ends the run (beside root spans)
    input_text: str = ""  # the user's input (llm spans: first user message; root spans: the query)
    latest_input: str = ""  # llm spans: the last user message (in a session, the turn's own after the history)
    user_messages: int | None = None  # llm spans: how many user messages with text its input holds (None: unknown)
    session: str | None = None  # the conversation the span belongs to (_sessions.py), when it names one
    output_text: str = ""  # assistant text produced by the span
    documents: list[dict[str, Any]] = field(default_factory=list)  # retrieval spans, model calls with built-in search
    metadata: dict[str, Any] = field(default_factory=dict)  # agentci.* keys and other per-span facts


# How an adapter reads one span, and (traces_of_spans' `keep`) whether a run, by its span views, is kept.
ViewOf = Callable[[Span], SpanView]
Keep = Callable[[dict[str, SpanView]], bool]
# A handoff {from, to}: the agents' names (`from` unknown when the handing agent is not recorded).
Handoff = dict[str, str | None]
# Where a tool call sorts: (its model call's start, its position in that call's output, its span's position).
Order = tuple[float, int, int]
# A conversation's tool results: tool-call id (None when the record gives none) → (result, error).
ToolResults = dict[str | None, tuple[Any, str | None]]


def _agent_of(span: Span, tree: Tree, views: dict[str, SpanView]) -> str | None:
    for candidate in (span, *tree.ancestors(span)):
        view = views[candidate.span_id]
        if view.kind == "agent" and view.agent:
            return view.agent
    return None


def _handoffs_between_agents(tree: Tree, views: dict[str, SpanView]) -> list[tuple[float, Handoff]]:
    """A switch between consecutive agent spans with no agent ancestor counts as a handoff."""
    top = [
        s
        for s in tree.spans
        if views[s.span_id].kind == "agent" and not any(views[a.span_id].kind == "agent" for a in tree.ancestors(s))
    ]
    found: list[tuple[float, Handoff]] = []
    for before, after in itertools.pairwise(top):
        if views[before.span_id].agent != views[after.span_id].agent:
            found.append((after.start or 0.0, {"from": views[before.span_id].agent, "to": views[after.span_id].agent}))
    return found


def _llm_call(span: Span, view: SpanView) -> dict[str, Any]:
    """LLMCall fields: the span's timing (start as the call's date), then what the adapter read."""
    start = iso_time(int(span.start * 1e9)) if span.start is not None else None
    return {"duration_ms": duration_ms(span.start, span.end), "timestamp": start, **view.llm}


def _carries_usage(view: SpanView) -> bool:
    llm = view.llm
    return bool(llm.get("input_tokens") or llm.get("output_tokens") or llm.get("cost_usd") is not None)


def _one_per_call(spans: list[Span], tree: Tree, views: dict[str, SpanView]) -> list[Span]:
    """Model-call spans, one per call: a model-call span with a model-call ancestor joins its outermost one.

    Each call keeps the outermost span that carries usage (else the outermost span); its view takes the
    issued calls, texts and model the other layer recorded where its own are empty.
    """
    groups: dict[str, list[Span]] = {}
    for span in spans:
        if views[span.span_id].kind != "llm":
            continue
        outer = [a for a in tree.ancestors(span) if views[a.span_id].kind == "llm"]
        groups.setdefault((outer[-1] if outer else span).span_id, []).append(span)
    kept: list[Span] = []
    for members in groups.values():
        chosen = next((s for s in members if _carries_usage(views[s.span_id])), members[0])
        view, others = views[chosen.span_id], [views[s.span_id] for s in members if s is not chosen]
        for other in others:
            view.issued_calls = view.issued_calls or other.issued_calls
            view.message_calls = view.message_calls or other.message_calls
            view.message_results = view.message_results or other.message_results
            view.has_content = view.has_content or other.has_content
            view.output_text = view.output_text or other.output_text
            view.input_text = view.input_text or other.input_text
            if not view.llm.get("model") and other.llm.get("model"):
                view.llm = {
                    **view.llm,
                    "model": other.llm["model"],
                    "provider": view.llm.get("provider") or other.llm.get("provider"),
                }
        kept.append(chosen)
    return kept


def _message_tools(
    llm_spans: list[Span], tree: Tree, views: dict[str, SpanView], claimed: set[tuple[str, int]]
) -> list[tuple[Order, dict[str, Any]]]:
    """(order, ToolCall fields) of the calls the model calls issued in their messages.

    Except those a handoff span already `claimed`; each result taken from a later call's tool message with the same id.
    """
    results: dict[str, Any] = {}
    for span in llm_spans:
        results.update(views[span.span_id].message_results)
    found: list[tuple[Order, dict[str, Any]]] = []
    for span in llm_spans:
        for index, call in enumerate(views[span.span_id].message_calls):
            if (span.span_id, index) in claimed:
                continue
            result, error = tool_output(results[call["id"]]) if call.get("id") in results else (None, None)
            found.append(
                (
                    (span.start or 0.0, index, span.position),
                    {
                        "name": call["name"],
                        "arguments": call.get("arguments"),
                        "result": result,
                        "error": error,
                        "agent": _agent_of(span, tree, views),
                    },
                )
            )
    return found


def _tool_call(span: Span, view: SpanView, tree: Tree, views: dict[str, SpanView]) -> dict[str, Any]:
    """ToolCall fields of a tool span (or of a handoff span that names its tool)."""
    return {
        "name": view.tool_name,
        "arguments": view.arguments,
        "result": view.result,
        "error": span.error,
        "duration_ms": duration_ms(span.start, span.end),
        "agent": _agent_of(span, tree, views),
    }


def _handoff_call(
    span: Span, view: SpanView, llm_spans: list[Span], views: dict[str, SpanView], claimed: set[tuple[str, int]]
) -> tuple[Order, dict[str, Any]]:
    """(order, ToolCall fields) of the call that made a handoff whose span names no tool.

    The first unclaimed `transfer_to_<agent>` call for the agent handed to, issued by the latest model call started
    before the span (claimed, so it is not read from the messages again); when the messages do not hold it, the tool the
    Agents SDK gives the model for that handoff (`handoff_tool_name`), at the span's start.
    """
    start, to = span.start or 0.0, view.handoff_to or ""
    for llm in sorted((s for s in llm_spans if (s.start or 0.0) <= start), key=lambda s: s.start or 0.0, reverse=True):
        for index, call in enumerate(views[llm.span_id].message_calls):
            target = handoff_target(call["name"])
            if target is not None and same_agent(target, to) and (llm.span_id, index) not in claimed:
                claimed.add((llm.span_id, index))
                fields = {"name": call["name"], "arguments": call.get("arguments")}
                return (llm.start or 0.0, index, span.position), {**fields, "result": None, "error": None}
        if views[llm.span_id].message_calls:
            break  # the latest model call that issued calls is the one that handed off
    fields = {"name": handoff_tool_name(to), "arguments": None, "result": None, "error": None}
    return (start, 0, span.position), fields


def _issued_alike(
    span: Span, view: SpanView, llm_spans: list[Span], views: dict[str, SpanView], claimed: set[tuple[str, int]]
) -> tuple[float, int]:
    """(issuing call's start, position in its output) of a tool span that names no tool-call id.

    The first unclaimed call of the same tool (and arguments, where both are known) issued by the latest model call that
    started before it; else the span's own start. Parallel calls then keep the model's order, not the order they
    happened to start in.
    """
    start = span.start or 0.0
    for llm in sorted((s for s in llm_spans if (s.start or 0.0) <= start), key=lambda s: s.start or 0.0, reverse=True):
        for index, call in enumerate(views[llm.span_id].message_calls):
            same = call["name"] == view.tool_name and (
                view.arguments in (None, {}) or call.get("arguments") == view.arguments
            )
            if same and (llm.span_id, index) not in claimed:
                claimed.add((llm.span_id, index))
                return llm.start or 0.0, index
        if views[llm.span_id].message_calls:
            break  # the latest model call that issued tools is the one this span answers
    return start, 0


def from_spans(
    spans: list[Span], view_of: ViewOf, views: dict[str, SpanView] | None = None, content_switch: str = ""
) -> tuple[dict[str, Any], bool]:
    """(Trace fields, whether the final answer was inferred) for one run's spans, sorted by start.

    `views` (span id → SpanView) when the caller already computed them, else `view_of` is called per span;
    `content_switch` says how to make the instrumentation record message content (for `content_missing`).
    """
    tree = Tree(spans)
    views = views if views is not None else {span.span_id: view_of(span) for span in spans}
    agents = list(dict.fromkeys(v.agent for v in views.values() if v.kind == "agent" and v.agent))

    llm_spans = _one_per_call(spans, tree, views)
    issued: dict[str, tuple[float, int]] = {}
    for span in llm_spans:
        for index, call_id in enumerate(views[span.span_id].issued_calls):
            issued.setdefault(call_id, (span.start or 0.0, index))

    tools: list[tuple[Order, dict[str, Any]]] = []
    handoffs: list[tuple[float, Handoff]] = []
    claimed: set[tuple[str, int]] = set()  # (model-call span id, call index) already matched to a tool span
    for span in spans:
        view = views[span.span_id]
        if view.kind == "handoff" and view.handoff_to:
            handoffs.append(
                (span.start or 0.0, {"from": view.handoff_from or _agent_of(span, tree, views), "to": view.handoff_to})
            )
            if view.tool_name:  # the span is the handoff tool's own
                anchor, index = _issued_alike(span, view, llm_spans, views, claimed)
                tools.append(((anchor, index, span.position), _tool_call(span, view, tree, views)))
            else:
                order, call = _handoff_call(span, view, llm_spans, views, claimed)
                tools.append((order, {**call, "agent": _agent_of(span, tree, views)}))
        if view.kind != "tool":
            continue
        anchor, index = issued.get(view.call_id or "") or _issued_alike(span, view, llm_spans, views, claimed)
        tools.append(((anchor, index, span.position), _tool_call(span, view, tree, views)))
    if not any(views[s.span_id].kind == "tool" for s in spans):  # no tool spans: the model's calls are the tools
        tools.extend(_message_tools(llm_spans, tree, views, claimed))
    if not handoffs:
        handoffs = _handoffs_between_agents(tree, views)
    # Handoff spans of two instrumentation layers may describe the same switch: keep it once.
    unique: list[Handoff] = []
    for _, handoff in sorted(handoffs, key=lambda item: item[0]):
        if not unique or unique[-1] != handoff:
            unique.append(handoff)

    counted = {s.span_id for s in llm_spans} | {s.span_id for s in spans if views[s.span_id].kind == "retrieval"}
    documents = [doc for s in spans if s.span_id in counted for doc in views[s.span_id].documents]

    roots = tree.roots()
    failing = [s for s in spans if views[s.span_id].fails_task]
    root_view = views[roots[0].span_id] if roots else SpanView()
    # After a handoff the last top-level span answers, so the latest root with an output wins.
    answer = next((views[s.span_id].output_text for s in reversed(roots) if views[s.span_id].output_text), "")
    inferred = False
    if not answer:
        outputs = [views[s.span_id].output_text for s in llm_spans if views[s.span_id].output_text]
        answer, inferred = (outputs[-1] if outputs else ""), True

    key: dict[str, str] = {}
    for span in spans:
        key = {**query_key(views[span.span_id].metadata), **key}
    session = next((view.session for view in views.values() if view.session), None)
    if "query" not in key:
        first_input = _turn_input(llm_spans, views) if session else ""
        first_input = (
            first_input
            or root_view.input_text
            or next((views[s.span_id].input_text for s in llm_spans if views[s.span_id].input_text), "")
        )
        if first_input:
            key["query"] = first_input
    starts = [s.start for s in roots if s.start is not None]
    ends = [s.end for s in roots if s.end is not None]
    fields = {
        **key,
        "final_answer": answer,
        "tool_calls": [call for _, call in sorted(tools, key=lambda item: item[0])],
        "llm_calls": [_llm_call(s, views[s.span_id]) for s in llm_spans],
        "handoffs": unique,
        "retrieved_context": documents,
        "total_duration_ms": duration_ms(min(starts), max(ends)) if starts and ends else None,
        "metadata": {
            "trace_id": spans[0].trace_id,
            "status": "failed" if any(s.error for s in roots + failing) else "completed",
            **({SESSION_KEY: session} if session else {}),
            **({"agents": agents} if agents else {}),
            **(
                {"content_missing": content_switch}
                if content_switch and llm_spans and not any(views[s.span_id].has_content for s in llm_spans)
                else {}
            ),
        },
    }
    return fields, inferred


def last_user(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message of {role, text} messages, "" when none has text."""
    return next((m["text"] for m in reversed(messages) if m["role"] == "user" and m["text"]), "")


def user_messages(messages: list[dict[str, Any]]) -> int | None:
    """How many of {role, text} messages are the user's with text; None when no message was recorded."""
    return sum(m["role"] == "user" and bool(m["text"]) for m in messages) if messages else None


def _turn_input(llm_spans: list[Span], views: dict[str, SpanView]) -> str:
    """A session's run.

    The user's message of this turn, the last one its first model call was sent (the session sends the conversation so
    far before it).
    """
    return next((views[s.span_id].latest_input for s in llm_spans if views[s.span_id].latest_input), "")


def _run_key(group: list[Span], views: dict[str, SpanView]) -> tuple[str | None, str | None]:
    """(query id, run index) a trace's spans carry, each None when absent."""
    key: dict[str, str] = {}
    for span in group:
        key = {**query_key(views[span.span_id].metadata), **key}
    return key.get("id"), key.get("run")


def _join(run: tuple[list[Span], dict[str, SpanView]], group: list[Span], views: dict[str, SpanView]) -> None:
    """Add a trace's spans and views to a run (span_runs)."""
    members, known = run
    members.extend(group)
    known.update(views)


def span_runs(spans: list[Span], view_of: ViewOf) -> list[tuple[list[Span], dict[str, SpanView]]]:
    """Spans grouped into runs, each with its views (span id → SpanView), runs in order of first appearance.

    A trace (trace id) is a run, except:
    - traces carrying the same `agentci.query_id` and `agentci.run` are one run, unless they name a session (each
      trace of a session is a turn of its own: _sessions.py);
    - without `agentci.run`, a trace of bare model calls (no span encloses them: an instrumented client called
      with no agent or workflow span around it, one trace per call) joins the run of the trace before it with
      the same `agentci.query_id` when that one was bare model calls too, unless its first model call starts a
      new conversation (its recorded input holds no earlier assistant turn);
    - in a session, a trace of bare model calls joins the session's run before it when that one was bare model
      calls too and their first model calls were sent as many user messages (the same turn's tool loop; the next
      turn adds the user's new message).
    """
    runs: list[tuple[list[Span], dict[str, SpanView]]] = []
    # (query id, run index or None for bare calls) → runs index; a run without a query id is never looked up
    open_runs: dict[tuple[str | None, str | None], int] = {}
    # session → (runs index, user messages of its first model call) of its last run, while that run is bare calls
    open_turns: dict[str, tuple[int, int | None]] = {}
    for group in by_trace(spans):
        views = {span.span_id: view_of(span) for span in group}
        query_id, run = _run_key(group, views)
        roots = Tree(group).roots()
        bare = bool(roots) and all(views[r.span_id].kind in ("llm", "tool") for r in roots)
        first_llm = next((views[s.span_id] for s in group if views[s.span_id].kind == "llm"), None)
        new_conversation = first_llm is not None and first_llm.continues is False
        slot = (query_id, run)
        session = next((view.session for view in views.values() if view.session), None)
        said = first_llm.user_messages if first_llm else None
        if session is not None:
            turn = open_turns.pop(session, None)
            if bare and turn is not None and said is not None and turn[1] == said:  # the same turn's tool loop
                _join(runs[turn[0]], group, views)
                open_turns[session] = turn
                continue
            if bare:
                open_turns[session] = (len(runs), said)
        elif query_id is not None and slot in open_runs and (run is not None or (bare and not new_conversation)):
            _join(runs[open_runs[slot]], group, views)
            continue
        elif query_id is not None and (run is not None or bare):
            open_runs[slot] = len(runs)
        elif query_id is not None:
            open_runs.pop(slot, None)
        runs.append((list(group), views))
    for members, _ in runs:
        members.sort(key=lambda s: (s.start if s.start is not None else float("inf"), s.position))
    return runs


def traces_of_spans(
    spans: list[Span],
    file: str,
    source_format: str,
    view_of: ViewOf,
    content_switch: str = "",
    keep: Keep | None = None,
) -> list[Trace]:
    """One canonical trace per run of `spans` (see span_runs), each read with `view_of`.

    `keep(views)` may leave a run out (by its span views); the runs of one session are one conversation (_sessions.py).
    """

    def one(run: tuple[list[Span], dict[str, SpanView]]) -> Trace:
        members, views = run
        fields, inferred = from_spans(members, view_of, views, content_switch)
        return build_trace(fields, file, first_line(members), source_format, inferred)

    runs = [run for run in span_runs(spans, view_of) if keep is None or keep(run[1])]
    return conversations(convert_each(runs, file, source_format, one, lambda run: first_line(run[0])))


@dataclass
class Turn:
    """One assistant message: the model call that produced it and the tool calls it issued, in order."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {id, name, arguments}
    llm: dict[str, Any] | None = None  # LLMCall fields; None when the format gives no usage
    agent: str | None = None
    documents: list[dict[str, Any]] = field(default_factory=list)  # retrieval results the turn received
    input_breakdown: dict[str, Any] | None = None  # what the call's request sent, by component (trace/input_parts.py)


def _llm_of(turn: Turn) -> dict[str, Any]:
    """The turn's LLMCall fields, with its input breakdown when the record shows the request."""
    llm = turn.llm or {}
    return {**llm, "input_breakdown": turn.input_breakdown} if turn.input_breakdown else llm


def from_turns(turns: list[Turn], results: ToolResults, query: str) -> dict[str, Any]:
    """Trace fields for a conversation; `results` maps tool-call id → (result, error).

    Every turn is one LLM call; a turn without usage counts with 0 tokens and no model, so its cost
    stays unknown and the notes say why.
    """
    agents = list(dict.fromkeys(t.agent for t in turns if t.agent))
    tools: list[dict[str, Any]] = []
    handoffs: list[Handoff] = []
    speaking = None  # the agent of the last turn that named one
    for turn in turns:
        if turn.agent and speaking and turn.agent != speaking:
            handoffs.append({"from": speaking, "to": turn.agent})
        speaking = turn.agent or speaking
        for call in turn.tool_calls:
            result, error = results.get(call.get("id") or "", (None, None))
            tools.append(
                {
                    "name": call["name"],
                    "arguments": call.get("arguments"),
                    "result": result,
                    "error": error,
                    "agent": turn.agent,
                }
            )
    notes = (
        ["some model turns carry no usage block: their tokens and cost are unknown"]
        if any(t.llm is None for t in turns)
        else []
    )
    answers = [t.text for t in turns if t.text]
    fields = {
        "query": query,
        "final_answer": answers[-1] if answers else "",
        "tool_calls": tools,
        "llm_calls": [_llm_of(t) for t in turns],
        "handoffs": handoffs,
        "retrieved_context": [doc for t in turns for doc in t.documents],
        "metadata": {**({"agents": agents} if agents else {}), **({"notes": notes} if notes else {})},
    }
    return fields

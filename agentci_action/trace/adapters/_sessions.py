"""A framework session's runs read as one conversation (not an adapter itself).

Frameworks mark the runs of one conversation with a session id: the OpenAI Agents SDK's trace `group_id`,
OpenInference's `session.id`, OpenTelemetry GenAI's `gen_ai.conversation.id`, LangSmith's thread keys, a LangGraph
thread's `thread_id`. A reader puts it in each run's `metadata.session_id`; `conversations` then makes the runs
sharing one into a single trace whose turns are those runs, in time order (each run's first model call; file order
when a run has none), placed where its first run was:
- its `id` is the query id a turn carries (`agentci.query_id`), else the session id; its `query` the first turn's
  (the user's first message, which names a conversation in the spec); its `run` the turns' `agentci.run`;
- its metadata the session id, the format, the agents of every turn and the task's status (failed when a turn
  failed, else the last turn's; none when the turns record none); each turn keeps its own;
- its calls, handoffs and totals are its turns' (canonical.Trace).
A session of one run stays a single trace, and so does each run of a session whose runs name different queries
(`agentci.query_id`): an id shared by the runs of several queries (a batch's) is not a conversation.
"""

from __future__ import annotations

from agentci_action.trace.adapters._conventions import parse_time
from agentci_action.trace.canonical import Trace

SESSION_KEY = "session_id"


def conversations(traces: list[Trace]) -> list[Trace]:
    """`traces` with each session of two or more runs made one conversation (see the module docstring)."""
    sessions: dict[str, list[Trace]] = {}
    for trace in traces:
        if session := trace.metadata.get(SESSION_KEY):
            sessions.setdefault(str(session), []).append(trace)
    folded = {session: conversation(session, runs) for session, runs in sessions.items() if _one_conversation(runs)}
    if not folded:
        return traces
    result: list[Trace] = []
    for trace in traces:
        session = str(trace.metadata.get(SESSION_KEY) or "")
        if session not in folded:
            result.append(trace)
        elif trace is sessions[session][0]:
            result.append(folded[session])
    return result


def _one_conversation(runs: list[Trace]) -> bool:
    """Two or more runs that name no two different queries.

    A session id shared by the runs of several queries, a batch's id, does not make them one conversation.
    """
    return len(runs) > 1 and len({run.id for run in runs if run.id}) <= 1


def _started(trace: Trace) -> float | None:
    return parse_time(trace.llm_calls[0].timestamp) if trace.llm_calls else None


def conversation(session: str, runs: list[Trace], key: dict[str, str] | None = None) -> Trace:
    """The runs of one session as one conversation (see the module docstring).

    `key` ({id, query, run}, from the record that holds the whole session) overrides the id, query and run taken from
    the turns.
    """
    starts = [_started(run) for run in runs]
    if None not in starts:
        runs = [run for _, _, run in sorted(zip(starts, range(len(runs)), runs, strict=True))]
    first = runs[0]
    agents = list(dict.fromkeys(agent for run in runs for agent in run.metadata.get("agents", [])))
    statuses = [str(run.metadata["status"]) for run in runs if run.metadata.get("status")]
    metadata = {
        SESSION_KEY: session,
        "source_format": first.metadata.get("source_format"),
        **({"status": "failed" if "failed" in statuses else statuses[-1]} if statuses else {}),
        **({"agents": agents} if agents else {}),
    }
    fields = {
        "id": next((run.id for run in runs if run.id), session),
        "query": first.query,
        "run": next((run.run for run in runs if run.run is not None), None),
        **(key or {}),
    }
    conversation = Trace.model_validate({**fields, "turns": runs, "metadata": metadata}).with_derived_totals()
    conversation._source = first.source
    return conversation

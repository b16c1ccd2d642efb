"""A conversational support agent on the real `openai` SDK, in both styles agents keep a conversation:

- `history`: it keeps nothing; each turn it reads the conversation so far (`history`, what AgentCI resends) and
  the new message;
- `session`: it reads only the new message and keeps the conversation itself, tool calls included, in a file
  named by the session id under $SUPPORT_SESSIONS (as a real agent keeps it in a database: a `python:` runner's
  turns may land on different worker processes).

As a command (`python support_chat.py history|session`) it reads AgentCI's JSON on stdin; as a `python:` callable,
`chat(query, history=..., session_id=...)`. Either way it returns its canonical trace: the answer, the tool calls
and the model calls with their tokens. OPENAI_BASE_URL points the SDK at the local scripted model.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from openai import OpenAI

TOOLS = {
    "lookup_order": lambda order_id: {"order_id": order_id, "item": "headphones", "paid": 59.0},
    "issue_refund": lambda order_id: {"refunded": 59.0, "order_id": order_id},
}
SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    }
    for name in TOOLS
]
SYSTEM = {"role": "system", "content": "You are a support agent. Ask for the order number before any refund."}


def _session_file(session_id: str) -> Path:
    return Path(os.environ["SUPPORT_SESSIONS"]) / f"{session_id}.json"


def chat(query: str, history: list[dict] | None = None, session_id: str | None = None) -> dict:
    """One turn: the trace of the agent's reply to `query`.

    With `history`, the conversation is the one given; without it, the one kept under `session_id`.
    """
    if history is not None:
        messages = [SYSTEM, *history]
    else:
        file = _session_file(session_id or "none")
        messages = json.loads(file.read_text()) if file.exists() else [SYSTEM]
    messages.append({"role": "user", "content": query})
    client = OpenAI(max_retries=0)
    tool_calls, llm_calls = [], []
    while True:
        completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
        llm_calls.append(
            {
                "model": completion.model,
                "input_tokens": completion.usage.prompt_tokens,
                "output_tokens": completion.usage.completion_tokens,
            }
        )
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            result = TOOLS[call.function.name](**arguments)
            tool_calls.append({"name": call.function.name, "arguments": arguments, "result": result})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    if history is None:
        _session_file(session_id or "none").write_text(json.dumps(messages))
    return {"final_answer": message.content or "", "tool_calls": tool_calls, "llm_calls": llm_calls}


def main() -> None:
    style = sys.argv[1]
    given = json.loads(sys.stdin.read())
    assert given["session_id"] == os.environ["AGENTCI_SESSION_ID"], "the session id in the input and environment"
    if style == "history":
        trace = chat(given["query"], history=given["history"])
    else:
        trace = chat(given["query"], session_id=os.environ["AGENTCI_SESSION_ID"])
    print(json.dumps(trace))


if __name__ == "__main__":
    main()


def chat_in_session(query: str, session_id: str) -> dict:
    """The `session` style as a `python:` callable: it names no `history`, so AgentCI passes none."""
    return chat(query, session_id=session_id)

"""A real LangGraph agent for a `python:` runner that keeps each conversation in a thread of its checkpointer.

The thread is named by AgentCI's session id; the agent returns the thread's state (every turn so far, with the thread's
config): AgentCI reads the thread as a conversation and takes its last turn as this turn's reply. The model is
ChatOpenAI at $OPENAI_BASE_URL (a local scripted server in the tests). The checkpointer lives in the worker process: run
it with one worker.
"""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.messages import messages_to_dict
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0; still LangGraph's own
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent


@tool
def lookup_order(order_id: str) -> dict:
    """Look an order up."""
    return {"order_id": order_id, "item": "headphones", "paid": 59}


@tool
def issue_refund(order_id: str) -> dict:
    """Refund an order."""
    return {"order_id": order_id, "refunded": 59}


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    GRAPH = create_react_agent(
        ChatOpenAI(model="gpt-4o-mini", api_key="sk-test"), [lookup_order, issue_refund], checkpointer=InMemorySaver()
    )


def chat_in_thread(query: str, session_id: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": session_id}}
    GRAPH.invoke({"messages": [{"role": "user", "content": query}]}, config)
    snapshot = GRAPH.get_state(config)
    return {"config": snapshot.config, "messages": messages_to_dict(snapshot.values["messages"])}

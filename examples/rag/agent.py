"""The documentation RAG agent, a scripted policy (no model, no key).

It searches a small document index with its retriever tool and answers from what it found, or declines.

    AGENT_VERSION=v1-broken python agent.py < job.json   # live-data questions loop on the retriever, then the
                                                          # agent answers them from its own "knowledge"
    AGENT_VERSION=v2-fixed python agent.py < job.json    # live-data questions are declined before any tool
    python agent.py < job.json                            # current: the guard was lost in a refactor, so the
                                                          # retriever loops again, but the agent still declines

The policy: a question about live data (weather, news, prices) is out of scope. Any other question is searched
with its key terms; a document found may point to another ("see also"), which is searched too; the answer is the
summary of the first document found, or a decline when nothing was found. Token counts and latencies are
modelled (../scripted_model.py).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripted_model import Episode, serve, tool

MODEL = "claude-sonnet-4-5-20250929"
SYSTEM = "You answer questions about the AgentCI documentation, and only from the documents your retriever finds."
LIVE_DATA = {"weather", "forecast", "news", "price", "stock"}
STOP_WORDS = {"how", "do", "i", "an", "a", "the", "what's", "in", "configure", "explain", "management", "pattern"}
FRESH_RETRIES = 10  # the loop of v1-broken and current: retried for fresh results on live-data questions
NOTHING = "No relevant documents."

# id → (terms it is found by, text, score, summary the agent answers with, the topic it points to)
DOCUMENTS = {
    "docs/install.md": (
        {"install", "agentci"},
        "Installation: pip install agentci. Then agentci init.",
        0.91,
        "Install it with `pip install agentci`, then run `agentci init` to write a starter spec.",
        None,
    ),
    "docs/state.md": (
        {"langgraph", "state"},
        "State channels hold values; reducers merge node updates.",
        0.88,
        "LangGraph keeps a shared state object; each node returns updates that a reducer merges into the state channels.",
        "reducer",
    ),
    "docs/reducers.md": (
        {"langgraph", "reducer"},
        "A reducer combines the old and new value of a channel.",
        0.84,
        "A reducer combines the old and new value of a channel.",
        None,
    ),
}
NOT_FOUND = "That is outside the AgentCI documentation, so I can't give reliable instructions for it."
# How each version declines a live-data question (its prompt's wording changed between versions); v1-broken
# instead answers from what it "knew".
OUT_OF_SCOPE = {
    "current": "I'm sorry, I can only answer questions about the AgentCI documentation, so I can't help with that.",
    "v2-fixed": "I'm sorry, I can only answer questions about the AgentCI documentation, so I can't help with the weather.",
}
PRETRAINED = {"weather": "Tokyo should be mild today: around 18 degrees, with light rain in the afternoon."}


@tool(latency_ms=120)
def retriever_tool(query: str) -> str:
    """The text of the best document whose every term is in the query, else NOTHING."""
    terms = set(query.split())
    found = [(score, text) for needs, text, score, _, _ in DOCUMENTS.values() if needs <= terms]
    return max(found)[1] if found else NOTHING


def document(text: str) -> tuple[str, tuple]:
    """The document a retrieved text came from: (id, entry)."""
    return next((doc_id, entry) for doc_id, entry in DOCUMENTS.items() if entry[1] == text)


def answer(question: str, version: str = "current") -> dict:
    episode = Episode(MODEL, SYSTEM, question)
    words = re.findall(r"[\w'-]+", question.lower())
    terms = [w for w in words if w not in STOP_WORDS]
    live = sorted(LIVE_DATA & set(words))
    if live and version == "v2-fixed":
        return episode.answer(OUT_OF_SCOPE[version])
    query = " ".join(terms)
    if live:  # retried for fresh results, an attempt number busting the index's cache
        for attempt in range(FRESH_RETRIES + 1):
            episode.call(retriever_tool, query=f"{query} {attempt}")
        if version == "v1-broken":
            return episode.answer(PRETRAINED.get(live[0], NOT_FOUND))
        return episode.answer(OUT_OF_SCOPE[version])
    text, reply = episode.call(retriever_tool, query=query), ""
    while text != NOTHING:
        doc_id, (_, _, score, summary, see_also) = document(text)
        episode.retrieved(doc_id, text, score)
        reply = reply or summary
        text = episode.call(retriever_tool, query=f"{terms[0]} {see_also}") if see_also else NOTHING
    return episode.answer(reply or NOT_FOUND)


if __name__ == "__main__":
    serve(lambda question: answer(question, os.environ.get("AGENT_VERSION", "current")))

"""What the examples' scripted agents share, so each agent file is only its policy and its tools.

An example agent is a scripted policy, not a language model: it reads the question, decides which tools to call
with which arguments, runs them (small implementations in its own file), composes its answer, and prints the
trace in AgentCI's canonical format. It follows the `agentci run` contract: the query arrives as JSON on stdin,
the trace leaves as the last JSON document on stdout. No key, no network, the same trace every time.

Each decision the agent takes stands for one model call, recorded with *modelled* figures, since no model runs:
- input tokens: everything the model would have read so far (system prompt, question, tool results, its own
  earlier output) at 4 characters a token; output tokens: what it writes (a tool call as JSON, a handoff, the
  answer), likewise;
- latency: 250 ms + 15 ms per output token; a tool's latency is declared with the tool (`@tool(latency_ms=...)`).
Modelled figures are deterministic, so a recorded trace is exactly what the agent prints. Costs are left to
AgentCI's price table (the trace carries tokens, not dollars).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any

CHARS_PER_TOKEN = 4
MODEL_BASE_MS = 250
MODEL_MS_PER_TOKEN = 15


def tokens(text: str) -> int:
    """Modelled token count: 4 characters a token, at least 1."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def tool(latency_ms: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a tool and its modelled latency; the function's name is the tool's name."""

    def declare(function: Callable[..., Any]) -> Callable[..., Any]:
        function.latency_ms = latency_ms  # type: ignore[attr-defined]
        return function

    return declare


class Episode:
    """One run of an agent on one question: the conversation the model would see and the trace being written."""

    def __init__(self, model: str, system_prompt: str, question: str, agent: str | None = None):
        self.model = model
        self.agent = agent
        self.conversation = [system_prompt, question]
        self.trace: dict[str, Any] = {"tool_calls": [], "llm_calls": []}

    def think(self, output: str) -> None:
        """One model call: it reads the whole conversation and writes `output`, which joins it."""
        written = tokens(output)
        self.trace["llm_calls"].append(
            {
                "model": self.model,
                "input_tokens": tokens("\n".join(self.conversation)),
                "output_tokens": written,
                "duration_ms": MODEL_BASE_MS + MODEL_MS_PER_TOKEN * written,
            }
        )
        self.conversation.append(output)

    def call(self, function: Callable[..., Any], **arguments: Any) -> Any:
        """The model asks for a tool (one model call), the agent runs it, and its result joins the conversation."""
        self.think(json.dumps({"tool": function.__name__, "arguments": arguments}))
        result = function(**arguments)
        call = {"name": function.__name__, "arguments": arguments, "result": result}
        call["duration_ms"] = function.latency_ms  # type: ignore[attr-defined]
        if self.agent:
            call["agent"] = self.agent
        self.trace["tool_calls"].append(call)
        self.conversation.append(result if isinstance(result, str) else json.dumps(result))
        return result

    def hand_off(self, to: str) -> None:
        """The model transfers the conversation to another agent (one model call)."""
        self.think(json.dumps({"handoff": to}))
        self.trace.setdefault("handoffs", []).append({"from": self.agent, "to": to})
        self.agent = to

    def retrieved(self, document_id: str, text: str, score: float) -> None:
        self.trace.setdefault("retrieved_context", []).append({"id": document_id, "text": text, "score": score})

    def answer(self, text: str) -> dict[str, Any]:
        """The model writes the final answer (one model call); the finished trace."""
        self.think(text)
        return {"final_answer": text, **self.trace}


def serve(policy: Callable[[str], dict[str, Any]]) -> None:
    """Read the job `agentci run` gives on stdin, run the policy on its question, print the trace."""
    job = json.load(sys.stdin)
    print(json.dumps(policy(job["query"]), ensure_ascii=False))

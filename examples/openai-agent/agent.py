"""A small tool-calling agent on the real `openai` SDK, run in-process by AgentCI's `python:` runner.

`answer(query)` loops: ask the model (Chat Completions, with two tools), run the tools it calls, give it their
results, until it answers in text. It returns the canonical trace: the answer, each tool call with its arguments
and result, and each model call with its token usage. The client reads OPENAI_API_KEY and OPENAI_BASE_URL, so the
tests point it at a local fake server; with a real key it runs against the real API (MODEL picks the model).
"""

import json
import os
import time

from openai import OpenAI

ORDERS = {"A-1001": "shipped on 2026-11-20, arriving 2026-11-24", "A-1002": "waiting for payment"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order_status",
            "description": "The delivery status of an order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "escalate_to_human",
            "description": "Hand the conversation to a human agent.",
            "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
        },
    },
]
SYSTEM = "You are an order-support agent. Use the tools; answer only about orders."


def run_tool(name: str, arguments: dict) -> str:
    if name == "get_order_status":
        return ORDERS.get(arguments.get("order_id", ""), "no such order")
    if name == "escalate_to_human":
        return "a human agent will reply within one business day"
    return f"unknown tool {name}"


def answer(query: str, max_turns: int = 5) -> dict:
    client = OpenAI(max_retries=2)
    model = os.environ.get("MODEL", "gpt-4o-mini")
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": query}]
    trace = {"final_answer": "", "tool_calls": [], "llm_calls": []}
    for _ in range(max_turns):
        started = time.perf_counter()
        response = client.chat.completions.create(model=model, messages=messages, tools=TOOLS, temperature=0)
        trace["llm_calls"].append(
            {
                "model": response.model,
                "input_tokens": response.usage.prompt_tokens,
                "output_tokens": response.usage.completion_tokens,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            }
        )
        message = response.choices[0].message
        if not message.tool_calls:
            trace["final_answer"] = message.content or ""
            return trace
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments or "{}")
            result = run_tool(call.function.name, arguments)
            trace["tool_calls"].append({"name": call.function.name, "arguments": arguments, "result": result})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    trace["metadata"] = {"status": "failed"}
    return trace

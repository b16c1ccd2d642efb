"""One tool-calling weather agent written on each real SDK API.

OpenAI Chat Completions and Responses (sync and async, plain and streamed through the SDK's own stream helpers) and
Anthropic Messages (plain and streamed).

Each runs the loop an agent runs: ask the model with two tools, run every tool it calls (the script's first turn
calls both at once: parallel tool calls), send the results back, until it answers in text. Each returns the facts
a trace is made of: the answer, the tool calls with their arguments, and each model call's model and tokens.
tests/e2e/test_replay_sdks.py scripts the model's turns for QUESTION (tests/fakes/scripted_providers.py plays them).
"""

from __future__ import annotations

import json
import os
from typing import Any

QUESTION = "What's the weather and the time in Paris?"
SYSTEM = "You are a weather agent.\nUse the tools, then answer in two lines."
RESULTS = {"get_weather": "21°C, clear", "get_time": "14:00"}
PARAMETERS = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "get_time": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
}
CHAT_TOOLS = [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in PARAMETERS.items()]
RESPONSES_TOOLS = [{"type": "function", "name": n, "parameters": p} for n, p in PARAMETERS.items()]
ANTHROPIC_TOOLS = [{"name": n, "description": f"the {n[4:]}", "input_schema": p} for n, p in PARAMETERS.items()]
MAX_TURNS = 4


def _facts() -> dict[str, Any]:
    return {"answer": None, "tools": [], "calls": []}


def chat_agent(client: Any, stream: bool = False, question: str = QUESTION, system: str = SYSTEM) -> dict[str, Any]:
    facts = _facts()
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    for _ in range(MAX_TURNS):
        ask = {"model": "gpt-4o-mini", "messages": messages, "tools": CHAT_TOOLS}
        if stream:
            with client.chat.completions.stream(**ask, stream_options={"include_usage": True}) as events:
                completion = events.get_final_completion()
        else:
            completion = client.chat.completions.create(**ask)
        if _chat_turn(completion, messages, facts):
            return facts
    return facts


async def async_chat_agent(client: Any, stream: bool = False) -> dict[str, Any]:
    facts = _facts()
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    for _ in range(MAX_TURNS):
        ask = {"model": "gpt-4o-mini", "messages": messages, "tools": CHAT_TOOLS}
        if stream:
            async with client.chat.completions.stream(**ask, stream_options={"include_usage": True}) as events:
                completion = await events.get_final_completion()
        else:
            completion = await client.chat.completions.create(**ask)
        if _chat_turn(completion, messages, facts):
            return facts
    return facts


def _chat_turn(completion: Any, messages: list[dict[str, Any]], facts: dict[str, Any]) -> bool:
    """Note one model call; run the tools it asked for. True when it answered."""
    usage = completion.usage
    facts["calls"].append((completion.model, usage.prompt_tokens, usage.completion_tokens))
    message = completion.choices[0].message
    if not message.tool_calls:
        facts["answer"] = message.content
        return True
    messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
    for call in message.tool_calls:
        arguments = json.loads(call.function.arguments)
        facts["tools"].append((call.function.name, arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": RESULTS[call.function.name]})
    return False


def responses_agent(client: Any, stream: bool = False) -> dict[str, Any]:
    facts = _facts()
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    for _ in range(MAX_TURNS):
        ask = {"model": "gpt-4o-mini", "instructions": SYSTEM, "input": items, "tools": RESPONSES_TOOLS}
        if stream:
            with client.responses.stream(**ask) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**ask)
        if _responses_turn(response, items, facts):
            return facts
    return facts


async def async_responses_agent(client: Any, stream: bool = False) -> dict[str, Any]:
    facts = _facts()
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    for _ in range(MAX_TURNS):
        ask = {"model": "gpt-4o-mini", "instructions": SYSTEM, "input": items, "tools": RESPONSES_TOOLS}
        if stream:
            async with client.responses.stream(**ask) as events:
                response = await events.get_final_response()
        else:
            response = await client.responses.create(**ask)
        if _responses_turn(response, items, facts):
            return facts
    return facts


def _responses_turn(response: Any, items: list[Any], facts: dict[str, Any]) -> bool:
    usage = response.usage
    facts["calls"].append((response.model, usage.input_tokens, usage.output_tokens))
    calls = [item for item in response.output if item.type == "function_call"]
    if not calls:
        facts["answer"] = response.output_text
        return True
    for call in calls:
        facts["tools"].append((call.name, json.loads(call.arguments)))
        items.append({"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments})
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": RESULTS[call.name]})
    return False


def anthropic_agent(client: Any, stream: bool = False) -> dict[str, Any]:
    facts = _facts()
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    for _ in range(MAX_TURNS):
        ask = {"model": "claude-haiku-4-5", "max_tokens": 512, "system": SYSTEM, "messages": messages}
        if stream:
            with client.messages.stream(**ask, tools=ANTHROPIC_TOOLS) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**ask, tools=ANTHROPIC_TOOLS)
        usage = message.usage
        facts["calls"].append((message.model, usage.input_tokens, usage.output_tokens))
        uses = [block for block in message.content if block.type == "tool_use"]
        if not uses:
            facts["answer"] = "".join(block.text for block in message.content if block.type == "text")
            return facts
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in uses]})
        results = []
        for use in uses:
            facts["tools"].append((use.name, use.input))
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": RESULTS[use.name]})
        messages.append({"role": "user", "content": results})
    return facts


def trace_of(facts: dict[str, Any]) -> dict[str, Any]:
    """The facts as a canonical trace."""
    return {
        "final_answer": facts["answer"] or "",
        "tool_calls": [
            {"name": name, "arguments": arguments, "result": RESULTS[name]} for name, arguments in facts["tools"]
        ],
        "llm_calls": [{"model": m, "input_tokens": i, "output_tokens": o} for m, i, o in facts["calls"]],
    }


def answer(query: str) -> dict[str, Any]:
    """A `python:` runner's function: the chat agent on a client made per call from the environment."""
    import openai

    return trace_of(chat_agent(openai.OpenAI(max_retries=0), question=query, system=_system()))


# A client made once, when a worker process imports this module (what many agents do): AgentCI's route for the worker
# is in its environment from the start. None where the module is imported without a base URL (a test's own process).
MODULE_CLIENT = None
if os.environ.get("OPENAI_BASE_URL"):
    import openai

    MODULE_CLIENT = openai.OpenAI(max_retries=0)


def answer_with_module_client(query: str) -> dict[str, Any]:
    """A `python:` runner's function that uses the client made at import."""
    return trace_of(chat_agent(MODULE_CLIENT, question=query, system=_system()))


def _system() -> str:
    return os.environ.get("AGENT_SYSTEM", SYSTEM)


def main() -> None:
    """The `command:` runner's program: `python sdk_weather_agents.py API [stream] [answer-only]`, the job on stdin.

    `answer-only` prints the README's trace shape, `{final_answer, tool_calls}`: no model calls. AGENT_SYSTEM and AGENT_WEATHER, when set, replace the system prompt and the weather tool's result (a changed agent).
    """
    import sys

    job = json.load(sys.stdin)
    api, stream = sys.argv[1], "stream" in sys.argv[2:]
    RESULTS["get_weather"] = os.environ.get("AGENT_WEATHER", RESULTS["get_weather"])
    if api == "anthropic":
        import anthropic

        facts = anthropic_agent(anthropic.Anthropic(max_retries=0), stream=stream)
    else:
        import openai

        client = openai.OpenAI(max_retries=0)
        if api == "responses":
            facts = responses_agent(client, stream=stream)
        else:
            facts = chat_agent(client, stream=stream, question=job["query"], system=_system())
    trace = trace_of(facts)
    if "answer-only" in sys.argv[2:]:
        del trace["llm_calls"]
    print(json.dumps(trace))


if __name__ == "__main__":
    main()

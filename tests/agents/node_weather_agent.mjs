// A tool-calling weather agent in JavaScript with Node's own fetch and no SDK: it reads the job on stdin, asks the
// model at OPENAI_BASE_URL (streamed Chat Completions, as the openai SDKs for Node stream them), runs every tool the
// model calls (the script calls two at once), sends the results back until the model answers, and prints its trace.
// tests/e2e/test_replay_run.py runs it under `agentci run` to show replay needs nothing of Python from the agent.
import { readFileSync } from "node:fs";

const job = JSON.parse(readFileSync(0, "utf8"));
const base = process.env.OPENAI_BASE_URL.replace(/\/$/, "");
const results = { get_weather: "21°C, clear", get_time: "14:00" };
const tools = Object.keys(results).map((name) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: {} } },
}));
const messages = [
  { role: "system", content: "You are a weather agent.\nUse the tools, then answer in two lines." },
  { role: "user", content: job.query },
];
const trace = { final_answer: "", tool_calls: [], llm_calls: [] };

async function ask() {
  const response = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({
      model: "gpt-4o-mini",
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const text = await response.text();
  const answer = { content: "", calls: [], model: null, usage: null, done: false };
  for (const frame of text.split("\n\n")) {
    const data = frame.split("\n").find((line) => line.startsWith("data: "))?.slice(6);
    if (data === undefined) continue;
    if (data === "[DONE]") {
      answer.done = true;
      continue;
    }
    const chunk = JSON.parse(data);
    answer.model = chunk.model;
    if (chunk.usage) answer.usage = chunk.usage;
    const delta = chunk.choices?.[0]?.delta ?? {};
    answer.content += delta.content ?? "";
    for (const call of delta.tool_calls ?? []) {
      const made = (answer.calls[call.index] ??= { id: call.id, name: "", arguments: "" });
      made.name += call.function?.name ?? "";
      made.arguments += call.function?.arguments ?? "";
    }
  }
  if (!answer.done) throw new Error("the stream ended without [DONE]");
  return answer;
}

for (let turn = 0; turn < 4; turn++) {
  const answer = await ask();
  trace.llm_calls.push({
    model: answer.model,
    input_tokens: answer.usage.prompt_tokens,
    output_tokens: answer.usage.completion_tokens,
  });
  if (answer.calls.length === 0) {
    trace.final_answer = answer.content;
    break;
  }
  messages.push({
    role: "assistant",
    content: null,
    tool_calls: answer.calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    })),
  });
  for (const call of answer.calls) {
    trace.tool_calls.push({ name: call.name, arguments: JSON.parse(call.arguments) });
    messages.push({ role: "tool", tool_call_id: call.id, content: results[call.name] });
  }
}
console.log(JSON.stringify(trace));

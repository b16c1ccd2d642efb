import json
import os
import sys
import urllib.request

# The model is asked through OPENAI_BASE_URL with the standard library alone (the runner image has no SDK): under the
# run action's `replay` input it is AgentCI's proxy, which answers from recordings/ (recorded against a local
# scripted server) with no key and no network.
job = json.load(sys.stdin)
print("agent log: thinking about", job["id"])
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
    data=json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": job["query"]}]}).encode(),
    headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
)
with urllib.request.urlopen(request, timeout=30) as response:
    reply = json.load(response)
answer = reply["choices"][0]["message"]["content"] + " (token " + os.environ["AGENT_TOKEN"] + ")"
usage = reply["usage"]
print(
    json.dumps(
        {
            "final_answer": answer,
            "tool_calls": [{"name": "search_docs", "arguments": {"q": job["query"]}}],
            "llm_calls": [
                {
                    "model": reply["model"],
                    "input_tokens": usage["prompt_tokens"],
                    "output_tokens": usage["completion_tokens"],
                }
            ],
        }
    )
)

"""The examples' offline agent, for `agentci run`: it answers each question by following its example's recorded
run for that question (a scripted policy: tools, results, model calls and answer), so it needs no API key and
gives the same trace every time. AGENT_VERSION picks the script: `current` (default: traces/current.jsonl, what
CI evaluates) or a recorded version under runs/ (e.g. v1-broken, v2-fixed).

The runner contract it follows: the query arrives as JSON on stdin ({"id", "query", "run", "tags", "metadata"});
the trace goes to stdout as the last JSON document (logs before it are fine).
"""

import json
import os
import sys
from pathlib import Path

job = json.load(sys.stdin)
version = os.environ.get("AGENT_VERSION", "current")
script = Path("traces/current.jsonl") if version == "current" else Path("runs") / f"{version}.jsonl"
if not script.is_file():
    sys.exit(f"no script for AGENT_VERSION={version!r}: expected {script}")
print(f"scripted agent {version}: {job['query']}")  # a log line: the runner takes the last JSON document
for line in script.read_text(encoding="utf-8").splitlines():
    step = json.loads(line)
    same_question = step.get("id") == job["id"] or step.get("query") == job["query"]
    if same_question and step.get("run", job["run"]) == job["run"]:
        step.pop("id", None)
        print(json.dumps(step))
        break
else:
    print(json.dumps({"final_answer": "I have no script for this question.", "metadata": {"status": "failed"}}))

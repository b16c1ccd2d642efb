"""A replayed suite's wall time: a `python:` agent on the real openai SDK, and the same agent as a `command:`.

    python benchmarks/bench_python_agent_replay.py [--queries 50] [--rounds 3]

One agent module (`agent.py`: a module-level `OpenAI()` client and `answer(query)`, one Chat Completions call per
query; run as a script it reads the query as JSON on stdin and prints its trace) and two specs beside it, one with
`runner: {python: agent:answer, replay: {}}`, the other with `runner: {command: python agent.py, replay: {}}`, the
same `--queries` queries, 1 run each. Its model calls are recorded once (`agentci record`) against the local fake
OpenAI server (tests/fakes/llm_server.py, on 127.0.0.1), then `agentci test` of each spec is timed with no key and no
server (`python -m agentci_action test`, a fresh process, as a developer or CI runs it), alternating `--rounds`
times. Printed: the median wall time of each (target for the `python:` agent: ≤ 10 s on 2 cores) and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.llm_server import FakeLLMServer  # noqa: E402

AGENT = textwrap.dedent(
    """
    import json, sys
    from openai import OpenAI

    client = OpenAI(max_retries=0)


    def answer(query):
        response = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": query}], temperature=0
        )
        usage = response.usage
        return {
            "final_answer": response.choices[0].message.content,
            "tool_calls": [],
            "llm_calls": [{"model": response.model, "input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens}],
        }


    if __name__ == "__main__":
        print(json.dumps(answer(json.load(sys.stdin)["query"])))
    """
)
RUNNERS = {
    "python": "  python: agent:answer",
    "command": f"  command: {sys.executable} agent.py",
}
TARGET_S = 10.0


def spec(runner: str, queries: int) -> str:
    lines = ["agent: bench", "runner:", RUNNERS[runner], "  replay: {}", "queries:"]
    for i in range(queries):
        lines += [f"  - id: q{i:03d}", f'    query: "Question number {i}: what can you help me with?"']
        lines += ["    correctness: {expected_in_answer: [help]}"]
    return "\n".join(lines) + "\n"


def model(messages: list[dict], tools: list[dict]) -> dict:
    return {"content": f"I can help with that: {messages[-1]['content']}"}


def environment(**extra: str) -> dict[str, str]:
    """This shell without model keys, endpoints or AgentCI's own variables, plus `extra`."""
    drop = ("OPENAI_", "ANTHROPIC_", "AGENTCI_", "OTEL_")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, "PYTHONPATH": str(ROOT), **extra}


def agentci(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentci_action", *args], cwd=project, env=env, capture_output=True, text=True
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-python-agent-") as scratch:
        project = Path(scratch)
        (project / "agent.py").write_text(AGENT)
        for runner in RUNNERS:
            (project / f"{runner}.yaml").write_text(spec(runner, args.queries))
        with FakeLLMServer(agent_model=model) as server:
            keyed = environment(OPENAI_API_KEY="sk-bench-0123456789", OPENAI_BASE_URL=server.openai_url)
            recorded = agentci(project, "record", "--spec", "python.yaml", env=keyed)
        if recorded.returncode != 0:
            sys.exit(f"recording failed:\n{recorded.stderr}")
        walls: dict[str, list[float]] = {runner: [] for runner in RUNNERS}
        for round_ in range(args.rounds):
            for runner in RUNNERS if round_ % 2 == 0 else reversed(RUNNERS):
                began = time.perf_counter()
                done = agentci(project, "test", "--spec", f"{runner}.yaml", env=environment())
                walls[runner].append(time.perf_counter() - began)
                if done.returncode != 0 or f"{args.queries} replayed · 0 live" not in done.stdout:
                    sys.exit(
                        f"`agentci test` of the {runner} agent did not replay every call:\n{done.stdout}{done.stderr}"
                    )
    cores = len(os.sched_getaffinity(0))
    print(
        f"{args.queries} queries × 1 run, replayed, `agentci test` wall time, median of {args.rounds} ({cores} cores):"
    )
    median = {runner: statistics.median(times) for runner, times in walls.items()}
    for runner, seconds in median.items():
        print(f"  {runner + ':':9} {seconds:6.2f} s   (rounds: {', '.join(f'{t:.2f}' for t in walls[runner])})")
    verdict = "within" if median["python"] <= TARGET_S else "over"
    print(
        f"  python: ÷ command: {median['python'] / median['command']:.2f}×; python: {verdict} the {TARGET_S:g} s target"
    )


if __name__ == "__main__":
    main()

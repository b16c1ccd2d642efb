"""What a simulated user adds to running a conversation, side by side in one run.

The same conversations driven with scripted turns, with a simulated user replayed from its recordings, and with the
simulator live (the real anthropic SDK against the local fake provider on 127.0.0.1, its recordings written).

    python benchmarks/bench_simulated_user.py [--conversations 40] [--turns 4] [--repeats 3]

The agent is an in-process function answering at once, so what is timed is AgentCI's own work per turn: driving
the turn, writing the trace, and for the simulated user reading and matching its recording (replayed), or building
the prompt, one HTTP round trip through the SDK, pricing it against the spend cap and writing the recording (live;
one more call per conversation, the question after its last turn). No model-call replay: the user's recordings
follow the default mode, record-missing (the live round starts without recordings, the replayed one reads them).
Wall time, best of `repeats` interleaved rounds, one worker. Prints each per turn and the ratios to the script.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.llm_server import FakeLLMServer  # noqa: E402

from agentci_action.pipeline.judge_wiring import JudgeOptions  # noqa: E402
from agentci_action.pipeline.simulated_users import simulated_user_for  # noqa: E402
from agentci_action.run.execute import RunOptions, RunSetup, run_agent  # noqa: E402
from agentci_action.spec.models import AgentCISpec  # noqa: E402


def agent(query: str, history: list | None = None) -> dict:
    return {"final_answer": f"Noted ({len(history or [])} messages so far): {query[:40]}"}


def simulator_policy(turns: int):
    """The customer says `continue` until the conversation has `turns` agent replies, then the goal is reached."""

    def policy(model: str, system: str, user: str) -> dict:
        replies = user.count('"role": "assistant"')
        status = "goal_reached" if replies >= turns else "continue"
        return {"message": f"Message {replies + 1}: where is my order?", "status": status, "reason": "scripted"}

    return policy


def specs(folder: Path, conversations: int, turns: int, base_url: str) -> tuple[AgentCISpec, AgentCISpec]:
    """(scripted, simulated): the same number of conversations and turns."""
    scripted = [
        {"id": f"c{c}", "turns": [{"user": f"Message {t + 1}: where is my order?"} for t in range(turns)]}
        for c in range(conversations)
    ]
    user = {"persona": "A customer", "goal": "Learn where the order is", "max_turns": turns}
    simulated = [{"id": f"c{c}", "simulated_user": user} for c in range(conversations)]
    made = []
    for name, queries in (("scripted", scripted), ("simulated", simulated)):
        spec = AgentCISpec.model_validate(
            {
                "agent": "bench",
                "judge_config": {"model": "claude-sonnet-4-6", "base_url": base_url},
                "runner": {"python": "agent:given"},
                "queries": queries,
            }
        )
        spec._path = str(folder / f"{name}.yaml")
        for query in spec.queries:
            query._file = spec._path
        made.append(spec)
    return made[0], made[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    best = {"scripted turns": float("inf"), "simulated, replayed": float("inf"), "simulated, live": float("inf")}
    with tempfile.TemporaryDirectory() as scratch, FakeLLMServer(simulator_policy(args.turns)) as server:
        folder = Path(scratch)
        scripted, simulated = specs(folder, args.conversations, args.turns, server.anthropic_url)
        live = simulated_user_for(simulated, JudgeOptions(environ={"ANTHROPIC_API_KEY": "bench"}))
        for _ in range(args.repeats):
            shutil.rmtree(folder / "recordings", ignore_errors=True)  # the live round records, the next replays
            for name, spec, user in (
                ("scripted turns", scripted, None),
                ("simulated, live", simulated, live),
                ("simulated, replayed", simulated, None),
            ):
                options = RunOptions(folder / "out", workers=1)
                began = time.perf_counter()
                done = run_agent(spec, options, RunSetup(agent=agent, simulated_user=user))
                best[name] = min(best[name], time.perf_counter() - began)
                assert done.ok and all(len(t.turns) == args.turns for t in done.traces), done.errors[:1]
    turns = args.conversations * args.turns
    print(f"{args.conversations} conversations × {args.turns} turns = {turns} turns, one worker, in-process agent")
    for name, seconds in best.items():
        print(f"  {name:<20} {seconds:7.3f} s   {seconds / turns * 1e3:6.2f} ms per turn")
    for name in ("simulated, replayed", "simulated, live"):
        print(f"  {name} / scripted turns = {best[name] / best['scripted turns']:.2f}")


if __name__ == "__main__":
    main()

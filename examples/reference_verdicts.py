"""Write each example's judge cache from hand-written reference verdicts, so the examples run offline.

No model produced these verdicts: each is a maintainer's judgement of the recorded answer, and its
rationale says so. They let `agentci test` on an example show judge checks passing or failing
without an API key. With a key, pass `--judge-cache` elsewhere to have the real judge decide.

    python examples/reference_verdicts.py           # rewrite examples/*/.agentci/judge-cache.json
    python examples/reference_verdicts.py --check   # exit 1 when a cache is out of date (run by the tests)

Each example's `reference_verdicts.yaml` maps query id → check (`llm_judge` is a list, one verdict per
rubric; `safety_check`, `hallucination_check` one each) → {score, label, rationale} for the traces under
`traces/`, and may add `runs:` {trace file, relative to the example → the same mapping} for other recorded
runs. A run's query may be left out when its judge prompt is one already covered (the same answer and
context); every other judge request needs a verdict, and one prompt may not get two different ones. The
cache keys come from the judge's own prompt builder, so a change to a rubric, an answer or the prompt
shows up here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from agentci_action import load_spec, load_traces
from agentci_action.engine.correctness import judge_requests
from agentci_action.engine.evaluate_spec import group_traces
from agentci_action.engine.judge.cache import cache_key
from agentci_action.engine.judge.prompt import build_prompt
from agentci_action.model_access.json_store import VERSION as CACHE_VERSION
from agentci_action.spec.models import JudgeConfig

EXAMPLES = Path(__file__).resolve().parent
PROVENANCE = "Reference verdict written by the AgentCI maintainers, not by a model: "


def cache_for(example: Path) -> dict:
    """The cache document for one example's recorded runs: traces/, then each file under `runs:`."""
    spec = load_spec(example / "agentci_spec.yaml")
    config = spec.judge_config or JudgeConfig()
    references = yaml.safe_load((example / "reference_verdicts.yaml").read_text(encoding="utf-8"))
    sources = {"traces": references} | dict((references.pop("runs", None) or {}).items())
    verdicts: dict[str, dict] = {}
    for source, given_for in sources.items():
        traces = group_traces(spec.queries, load_traces([str(example / source)], pricing=spec.pricing)).by_query
        for query in spec.queries:
            for trace in traces[query.key]:
                requests = judge_requests(query, trace)
                judged = [r for r in requests if r.kind == "llm_judge"]
                for request in requests:
                    prompt = build_prompt(request.kind, request.rubric, request.query, request.answer, request.context)
                    key = cache_key(config.provider_for(config.model), config.model, config.temperature, prompt)
                    given = (given_for.get(query.key) or {}).get(request.kind)
                    if given is None:
                        if key not in verdicts:
                            raise SystemExit(
                                f"{example / 'reference_verdicts.yaml'}: {source}: query {query.key!r} needs a {request.kind} verdict"
                            )
                        continue
                    verdict = given[judged.index(request)] if request.kind == "llm_judge" else given
                    entry = {
                        "model": config.model,
                        "score": verdict["score"],
                        "label": verdict["label"],
                        "rationale": PROVENANCE + verdict["rationale"],
                    }
                    if verdicts.setdefault(key, entry) != entry:
                        raise SystemExit(
                            f"{example / 'reference_verdicts.yaml'}: {source}: query {query.key!r} {request.kind} "
                            "has the same prompt as an earlier one but a different verdict"
                        )
    return {"version": CACHE_VERSION, "verdicts": verdicts}


def render(document: dict) -> str:
    """As the judge's VerdictCache writes it: sorted, indented, one trailing newline."""
    return json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that every cache is up to date")
    args = parser.parse_args()
    stale = []
    for references in sorted(EXAMPLES.glob("*/reference_verdicts.yaml")):
        example = references.parent
        path = example / ".agentci" / "judge-cache.json"
        text = render(cache_for(example))
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    for path in stale:
        print(f"out of date: {path} (run python examples/reference_verdicts.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

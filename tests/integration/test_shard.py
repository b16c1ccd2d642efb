"""Sharding by id hash and merging: the merged run equals the unsharded one exactly; bad shard sets are refused."""

import functools
import json
import operator
import random
import re
import shlex
import shutil

import pytest
import yaml
from helpers import ROOT, run_cli

from agentci_action._util.errors import InputError
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import RunResult
from agentci_action.pipeline.merge import merge_shards
from agentci_action.pipeline.python_api import run_spec
from agentci_action.pipeline.shard import parse_shard, select_shard, shard_of
from agentci_action.spec.loader import load_spec
from agentci_action.trace.load import load_traces

TOOLS = ["search", "rerank", "generate", "shell", "calculator"]


def suite(tmp_path, queries=400, seed=7):
    """A spec of `queries` varied queries and their traces (1-3 runs each, some failing, one stray trace)."""
    rng = random.Random(seed)
    spec = {
        "agent": "big",
        "defaults": {"cost": {"max_total_tokens": 900}},
        "queries": [
            {
                "id": f"q{i:04d}",
                "query": f"Question {i}?",
                "min_pass_rate": rng.choice([0.5, 1.0]),
                "correctness": {"expected_in_answer": [f"a{i % 7}"]},
                "path": {"expected_tools": ["search", "generate"], "forbidden_tools": ["shell"], "max_loops": 1},
            }
            for i in range(queries)
        ],
    }
    traces = []
    for i in range(queries):
        for run in range(rng.randint(1, 3)):
            answer = f"answer a{i % 7}" if rng.random() < 0.8 else "no idea"
            tools = [rng.choice(TOOLS) for _ in range(rng.randint(1, 5))]
            traces.append(
                {
                    "id": f"q{i:04d}",
                    "run": run,
                    "final_answer": answer,
                    "tool_calls": [{"name": t} for t in tools],
                    "llm_calls": [
                        {
                            "input_tokens": rng.randint(100, 600),
                            "output_tokens": 50,
                            "cost_usd": rng.random() / 100,
                            "duration_ms": rng.uniform(50, 900),
                        }
                    ],
                }
            )
    traces.append({"id": "stray", "final_answer": "x"})
    rng.shuffle(traces)
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    trace_path = tmp_path / "traces.jsonl"
    trace_path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    return spec_path, trace_path


def test_shards_partition_the_suite_stably_under_reordering(tmp_path):
    spec = load_spec(suite(tmp_path)[0])
    shards = [parse_shard(f"{i}/8") for i in range(1, 9)]
    parts = [[q.key for q in select_shard(spec.queries, s)] for s in shards]
    assert sorted(k for part in parts for k in part) == sorted(q.key for q in spec.queries)
    assert all(30 <= len(part) <= 70 for part in parts)  # 400 / 8 = 50 each, give or take
    reordered = list(reversed(spec.queries))
    assert [sorted(q.key for q in select_shard(reordered, s)) for s in shards] == [sorted(p) for p in parts]
    assert shard_of("q0001", 4) == shard_of("q0001", 4) and 1 <= shard_of("anything", 3) <= 3


def test_parse_shard_rejects_nonsense():
    assert parse_shard(" 2 / 4 ").index == 2
    for bad in ("0/4", "5/4", "2", "a/b", "2/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


@pytest.mark.parametrize("count", [1, 3, 8])
def test_merged_shards_equal_the_unsharded_run_exactly(tmp_path, count):
    spec_path, trace_path = suite(tmp_path)
    spec, traces = load_spec(spec_path), load_traces([str(trace_path)])
    whole = evaluate_spec(spec, traces)
    assert whole.summary.total == 400 and whole.summary.failed and whole.summary.warnings and whole.summary.flaky
    assert len(whole.warnings) == 1
    shards = {
        f"shard-{i}.json": RunResult.model_validate_json(
            run_spec(spec, traces, shard=parse_shard(f"{i}/{count}")).model_dump_json()
        )
        for i in range(1, count + 1)
    }
    merged = merge_shards(spec, dict(reversed(shards.items())))
    assert merged.model_dump_json() == whole.model_dump_json()


def test_cli_shards_then_merge_write_the_single_report_and_exit_code(tmp_path):
    spec_path, trace_path = suite(tmp_path, queries=300)
    whole = run_cli(
        "test", "--spec", spec_path, "--traces", trace_path, "--format", "json", "--output", tmp_path / "whole.json"
    )
    assert whole.returncode == 1
    for i in range(1, 5):
        shard = run_cli(
            "test",
            "--spec",
            spec_path,
            "--traces",
            trace_path,
            "--shard",
            f"{i}/4",
            "--output",
            tmp_path / "results" / f"shard-{i}.json",
        )
        assert shard.returncode in (0, 1), shard.stderr
        assert "queries" in shard.stdout  # the console report of the shard
    merged = run_cli(
        "merge",
        "--spec",
        spec_path,
        str(tmp_path / "results" / "shard-*.json"),
        "--format",
        "json",
        "--output",
        tmp_path / "merged.json",
    )
    assert merged.returncode == whole.returncode, merged.stderr
    assert (tmp_path / "merged.json").read_text() == (tmp_path / "whole.json").read_text()
    console = run_cli("merge", "--spec", spec_path, str(tmp_path / "results" / "shard-*.json"))
    assert console.stdout.rstrip().splitlines()[-1].startswith("FAIL: 300 queries")


def test_merged_shards_of_tagged_queries_name_the_tags_in_the_save_command_they_print(tmp_path, write):
    """`test --tags T --shard i/n` then `merge --tags T`: the first run's save command keeps T, and runs as printed."""
    spec = write(
        "spec.yaml",
        """
agent: demo
defaults: {cost: {max_cost_multiplier: 2.0}}
queries:
  - {id: a, query: "a?", tags: [t]}
  - {id: b, query: "b?", tags: [t]}
  - {id: untraced, query: "c?"}
""",
    )
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "runs.jsonl").write_text(
        "".join(json.dumps({"id": key, "final_answer": "x", "total_cost_usd": 0.01}) + "\n" for key in "ab")
    )
    for i in (1, 2):
        shard = run_cli(
            "test", spec, "--traces", traces, "--tags", "t", "--shard", f"{i}/2", "--output", tmp_path / f"s{i}.json"
        )
        assert shard.returncode == 0, shard.stderr
    merged = run_cli("merge", "--spec", spec, "--tags", "t", str(tmp_path / "s*.json"), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    (save,) = re.findall(r"`(agentci save [^`]+)` saves these runs", merged.stdout)
    assert save == f"agentci save --spec {spec} --traces {traces / 'runs.jsonl'} --tags t --version v1"
    saved = run_cli(*shlex.split(save)[1:], cwd=tmp_path)
    assert saved.returncode == 0 and "saved baseline v1: 2 queries" in saved.stdout, saved.stdout + saved.stderr


def test_merge_refuses_missing_overlapping_foreign_and_non_shard_results(tmp_path, write):
    spec_path, trace_path = suite(tmp_path, queries=40)
    results = tmp_path / "results"
    for i in (1, 2, 3):
        assert run_cli(
            "test",
            "--spec",
            spec_path,
            "--traces",
            trace_path,
            "--shard",
            f"{i}/3",
            "--output",
            results / f"shard-{i}.json",
        ).returncode in (0, 1)
    glob = str(results / "shard-*.json")

    shutil.move(results / "shard-3.json", tmp_path / "held.json")
    missing = run_cli("merge", "--spec", spec_path, glob)
    assert missing.returncode == 2 and "missing shard 3/3" in missing.stderr

    shutil.copy(results / "shard-2.json", results / "shard-3.json")
    overlap = run_cli("merge", "--spec", spec_path, glob)
    assert overlap.returncode == 2 and "missing shard 3/3" in overlap.stderr
    # one line for the file given twice, naming both files: not one per query of that shard
    assert [line for line in overlap.stderr.splitlines() if "overlapping" in line] == [
        f"error: {results / 'shard-3.json'}: overlapping shards: shard 2/3 is also in {results / 'shard-2.json'}"
    ]

    shutil.move(tmp_path / "held.json", results / "shard-3.json")
    assert run_cli("merge", "--spec", spec_path, glob).returncode in (0, 1)
    other_spec = write("other.yaml", spec_path.read_text().replace("Question 1?", "Question one?"))
    foreign = run_cli("merge", "--spec", other_spec, glob)
    assert foreign.returncode == 2 and "written for a different spec" in foreign.stderr

    whole = results / "whole.json"
    assert run_cli(
        "test", "--spec", spec_path, "--traces", trace_path, "--format", "json", "--output", whole
    ).returncode in (0, 1)
    not_shard = run_cli("merge", "--spec", spec_path, glob, str(whole))
    assert not_shard.returncode == 2
    assert f"{whole}: not a shard results file (`agentci test --shard` writes one, to its --output)" in not_shard.stderr

    four = results / "four.json"
    assert run_cli(
        "test", "--spec", spec_path, "--traces", trace_path, "--shard", "4/4", "--output", four
    ).returncode in (0, 1)
    counts = run_cli("merge", "--spec", spec_path, glob, str(four))
    assert counts.returncode == 2 and "the shards disagree on the shard count" in counts.stderr

    garbage = write("results/garbage.json", "{}")
    assert "not an agentci results file" in run_cli("merge", "--spec", spec_path, str(garbage)).stderr
    nothing = run_cli("merge", "--spec", spec_path, str(tmp_path / "none-*.json"))
    assert nothing.returncode == 2 and "cannot read shard results" in nothing.stderr


def test_merge_refuses_shards_run_with_different_fail_on(tmp_path):
    spec_path, trace_path = suite(tmp_path, queries=30)
    spec, traces = load_spec(spec_path), load_traces([str(trace_path)])
    from agentci_action.engine.evaluate_spec import Settings
    from agentci_action.pipeline.blocking import parse_fail_on

    one = run_spec(spec, traces, shard=parse_shard("1/2"))
    two = run_spec(spec, traces, shard=parse_shard("2/2"), settings=Settings(fail_on=parse_fail_on("path")))
    with pytest.raises(InputError, match="different fail-on settings"):
        merge_shards(spec, {"a.json": one, "b.json": two})


def test_shard_needs_an_output_file(tmp_path):
    spec_path, trace_path = suite(tmp_path, queries=5)
    result = run_cli("test", "--spec", spec_path, "--traces", trace_path, "--shard", "1/2")
    assert result.returncode == 2 and "a shard writes its results file to --output" in result.stderr
    bad = run_cli(
        "test", "--spec", spec_path, "--traces", trace_path, "--shard", "3/2", "--output", tmp_path / "x.json"
    )
    assert bad.returncode == 2 and "--shard: shard '3/2': the index must be between 1 and the count" in bad.stderr


def test_queries_lists_what_a_shard_job_must_run_the_agent_on(tmp_path):
    spec_path, trace_path = suite(tmp_path, queries=60)
    listed = []
    for i in (1, 2, 3):
        result = run_cli("queries", "--spec", spec_path, "--shard", f"{i}/3")
        assert result.returncode == 0, result.stderr
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        listed.append([row["id"] for row in rows])
        assert all(row["query"] == f"Question {int(row['id'][1:])}?" for row in rows)
        # traces for this shard's queries alone are enough for its shard run
        only_mine = tmp_path / f"mine-{i}.jsonl"
        only_mine.write_text(
            "".join(
                line
                for line in trace_path.read_text().splitlines(keepends=True)
                if json.loads(line)["id"] in listed[-1]
            )
        )
        shard = run_cli(
            "test", "--spec", spec_path, "--traces", only_mine, "--shard", f"{i}/3", "--output", tmp_path / f"s{i}.json"
        )
        assert shard.returncode in (0, 1), shard.stderr
    assert sorted(functools.reduce(operator.iadd, listed, [])) == [f"q{i:04d}" for i in range(60)]
    merged = run_cli("merge", "--spec", spec_path, str(tmp_path / "s*.json"), "--format", "json")
    whole = run_cli("test", "--spec", spec_path, "--traces", trace_path, "--format", "json")

    def results(text):  # trace_source names the trace file, which differs here
        return [{k: v for k, v in r.items() if k != "trace_source"} for r in json.loads(text)["results"]]

    assert results(merged.stdout) == results(whole.stdout)
    everything = run_cli("queries", "--spec", spec_path)
    assert len(everything.stdout.splitlines()) == 60
    assert run_cli("queries", "--spec", spec_path, "--shard", "x").returncode == 2


def test_merged_shards_against_a_baseline_equal_the_unsharded_run_figure_for_figure(tmp_path):
    """tests/fixtures/everyway differs from its baseline in every way the diff knows.

    Its run in three shards, each compared with the baseline, merges into the very results file of the unsharded run,
    the diff's uplift, suite aggregates and unverified counts included (rebuilt from the baseline side each shard's file
    carries).
    """
    project = tmp_path / "everyway"
    shutil.copytree(ROOT / "tests" / "fixtures" / "everyway", project)
    common = ("--traces", "current.jsonl", "--baseline", "v1")
    whole = run_cli("test", *common, "--format", "json", "--output", "whole.json", cwd=project)
    for i in (1, 2, 3):
        shard = run_cli("test", *common, "--shard", f"{i}/3", "--output", f"shard-{i}.json", cwd=project)
        assert shard.returncode in (0, 1), shard.stderr
        assert json.loads((project / f"shard-{i}.json").read_text())["diff"]["baseline_results"]
    merged = run_cli("merge", "shard-*.json", "--format", "json", "--output", "merged.json", cwd=project)
    assert merged.returncode == whole.returncode == 1, merged.stderr
    expected, got = (json.loads((project / name).read_text()) for name in ("whole.json", "merged.json"))
    assert got == expected
    diff = got["diff"]
    assert diff["baseline_results"] is None  # carried by the shards' files only
    assert set(diff["uplift"]) == {"composite_score", "pass_rate", "cost_usd"}
    assert diff["uplift"]["cost_usd"]["uplift"] is not None and diff["total"]["suite"]["mean_latency_ms"]["change"]
    # a shard's file from before the baseline side was carried: the merge still works, and says what it lacks
    older = json.loads((project / "shard-2.json").read_text())
    older["diff"].pop("baseline_results")
    (project / "shard-2.json").write_text(json.dumps(older))
    merged = run_cli("merge", "shard-*.json", "--format", "json", cwd=project)
    diff = json.loads(merged.stdout)["diff"]
    assert merged.returncode == 1 and diff["uplift"] == {} and diff["total"]["suite"] == {}
    assert diff["warnings"][-1].startswith("a shard's results file carries no baseline results")
    assert diff["queries"] == expected["diff"]["queries"]


def test_merged_shards_give_the_verdicts_of_one_run(tmp_path):
    """Holm, the suite's pass-rate interval and the cost intervals are settled again on the merged diff.

    Holm over the whole suite, the clustered cost intervals: the verdicts, their p-values and the gates are those of the
    unsharded run.
    """
    example = ROOT / "examples" / "repeated-runs"
    spec, traces = example / "agentci_spec.yaml", example / "traces"
    whole = json.loads(run_cli("test", "--spec", spec, "--traces", traces, "--format", "json").stdout)
    for i in (1, 2):
        shard = run_cli(
            "test", "--spec", spec, "--traces", traces, "--shard", f"{i}/2", "--output", tmp_path / f"s{i}.json"
        )
        assert shard.returncode in (0, 1), shard.stderr
    sizes = [len(json.loads((tmp_path / f"s{i}.json").read_text())["results"]) for i in (1, 2)]
    assert sorted(sizes) != [0, 4]  # both shards hold queries, so each settled its verdicts on a part of the suite
    merged = json.loads(run_cli("merge", "--spec", spec, str(tmp_path / "s*.json"), "--format", "json").stdout)

    def verdicts(data):
        return {q["id"]: (q["kinds"], q["why"], q["pass_rate"], q["cost"]) for q in data["diff"]["queries"]}

    assert verdicts(merged) == verdicts(whole)
    for key in ("counts", "pass_rate_change", "cost_usd", "latency_ms"):
        assert merged["diff"]["total"][key] == whole["diff"]["total"][key], key
    assert merged["gates"] == whole["gates"]

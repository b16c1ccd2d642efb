"""Golden baselines: save with the precheck, never overwrite, atomic writes, the older shape, bad files, and the CLI."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT, run_cli

from agentci_action.compare.baselines import (
    BaselineError,
    PrecheckFailed,
    SaveOptions,
    list_headers,
    load_baseline,
    read_baseline,
    save_baseline,
    spec_hash,
    write_atomic,
)
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace
from agentci_action.trace.load import load_traces

SPEC = """
agent: demo
baseline_dir: ./golden
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
  - id: hello
    query: "Say hello"
    correctness: {expected_in_answer: ["hello"]}
"""
GOOD = [
    {
        "id": "math",
        "final_answer": "4",
        "tool_calls": [{"name": "calc"}],
        "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": 10, "output_tokens": 2, "cost_usd": 0.001}],
    },
    {
        "query": "Say hello",
        "final_answer": "hello there",
        "llm_calls": [{"model": "claude-haiku", "input_tokens": 5, "output_tokens": 3, "cost_usd": 0.0005}],
    },
]
BAD = [{**GOOD[0], "final_answer": "5"}, GOOD[1]]


@pytest.fixture
def spec_path(write):
    return write("spec.yaml", SPEC)


def traces(records) -> list[Trace]:
    return [Trace.model_validate(r).with_derived_totals() for r in records]


def test_save_records_metadata_and_loads_back(spec_path):
    spec = load_spec(spec_path)
    path, _baseline, failures = save_baseline(
        spec, traces(GOOD), "v1", SaveOptions(captured_at="2026-01-01T00:00:00Z", commit="abc123")
    )
    assert path == spec_path.parent / "golden" / "v1.json" and failures == []
    data = json.loads(path.read_text())
    assert data["schema_version"] == "agentci.baseline/v1"
    assert (data["version"], data["agent"], data["captured_at"]) == ("v1", "demo", "2026-01-01T00:00:00Z")
    assert data["metadata"] == {
        "models": ["claude-haiku", "gpt-4o-mini"],
        "spec_hash": spec_hash(spec),
        "git_commit": "abc123",
        "precheck_passed": True,
        "precheck_failures": [],
        "unverified_checks": {},
        "selected_tags": [],
    }
    assert list(data["queries"]) == ["hello", "math"]  # sorted, so a PR diff of the file is stable
    assert data["queries"]["hello"][0]["id"] == "hello"  # matched by query text, stored under its id
    loaded = read_baseline(path)
    assert loaded.queries["math"][0].tool_names == ["calc"] and loaded.queries["math"][0].total_tokens == 12
    file, line = loaded.queries["math"][0].source.rsplit(":", 1)
    lines = path.read_text().splitlines()
    assert file == str(path) and lines[int(line) - 1].strip() == '"math": ['
    assert spec_hash(spec).startswith("sha256:") and len(spec_hash(spec)) == 23


def test_spec_hash_changes_with_the_spec(write):
    first = load_spec(write("a.yaml", SPEC))
    second = load_spec(write("b.yaml", SPEC.replace('["4"]', '["four"]')))
    assert spec_hash(first) != spec_hash(second)
    assert spec_hash(first) == spec_hash(load_spec(write("c.yaml", SPEC)))


def test_precheck_refuses_a_failing_baseline_unless_forced(spec_path):
    spec = load_spec(spec_path)
    with pytest.raises(PrecheckFailed) as caught:
        save_baseline(spec, traces(BAD), "v1")
    (problem,) = caught.value.problems
    assert (problem.line, problem.message) == (4, "query 'math': expected in answer but missing: '4'")
    assert not (spec_path.parent / "golden").exists()
    path, baseline, failures = save_baseline(spec, traces(BAD), "v1", SaveOptions(force=True))
    assert len(failures) == 1 and baseline.metadata.precheck_passed is False
    assert json.loads(path.read_text())["metadata"]["precheck_failures"] == [str(problem)]


def test_every_query_needs_a_trace(spec_path):
    with pytest.raises(Exception, match="no trace for query 'hello'"):
        save_baseline(load_spec(spec_path), traces(GOOD[:1]), "v1")


def test_never_overwrites_without_the_flag(spec_path):
    spec = load_spec(spec_path)
    path, _, _ = save_baseline(spec, traces(GOOD), "v1", SaveOptions(captured_at="2026-01-01T00:00:00Z"))
    before = path.read_text()
    with pytest.raises(BaselineError, match="already exists; pass --overwrite"):
        save_baseline(spec, traces(GOOD), "v1", SaveOptions(captured_at="2026-02-02T00:00:00Z"))
    assert path.read_text() == before
    save_baseline(spec, traces(GOOD), "v1", SaveOptions(captured_at="2026-02-02T00:00:00Z", overwrite=True))
    assert read_baseline(path).captured_at == "2026-02-02T00:00:00Z"


def test_version_names_cannot_leave_the_baseline_dir(spec_path):
    with pytest.raises(BaselineError, match=r"invalid baseline version '\.\./escape'"):
        save_baseline(load_spec(spec_path), traces(GOOD), "../escape")


def test_a_failure_during_the_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "v1.json"
    target.write_text("old\n")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new\n" * 1000, overwrite=True)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["v1.json"]


KILLED_WRITER = """
import sys
from pathlib import Path
from agentci_action.compare.baselines import write_atomic
target, texts = Path(sys.argv[1]), [("A" * 4_000_000) + "\\n", ("B" * 4_000_000) + "\\n"]
print("ready", flush=True)
i = 0
while True:
    write_atomic(target, texts[i % 2], overwrite=True)
    i += 1
"""


def test_a_killed_save_never_leaves_a_partial_file(tmp_path):
    """SIGKILL a process that keeps rewriting the file: what is there is always one whole version."""
    target = tmp_path / "v1.json"
    target.write_text("A" * 4_000_000 + "\n")
    for delay in (0.05, 0.2, 0.35):
        writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline() == "ready\n"
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        text = target.read_text()
        assert text in ("A" * 4_000_000 + "\n", "B" * 4_000_000 + "\n")


def test_the_older_single_trace_shape_still_loads(write, spec_path):
    legacy = {
        "version": "v0",
        "agent": "demo",
        "captured_at": "2025-12-01T00:00:00Z",
        "metadata": {
            "model": "gpt-4o-mini",
            "spec_hash": "sha256:abc",
            "judge_rubric_ids": ["r1"],
            "precheck_passed": True,
        },
        "trace": GOOD[0],
    }
    write("golden/demo/v0.json", json.dumps(legacy, indent=2))
    spec = load_spec(spec_path)
    (header,) = list_headers(spec)
    assert header.header.version == "v0" and (header.header.queries, header.header.traces) == (1, 1)
    stored = load_baseline(spec, "v0")
    assert stored.baseline.version == "v0" and stored.baseline.metadata.models == ["gpt-4o-mini"]
    assert stored.baseline.queries["math"][0].final_answer == "4"
    assert load_baseline(spec).baseline.version == "v0"  # its precheck passed, so it is the default


def test_corrupt_files_name_the_file_and_line(write):
    broken = write("golden/v1.json", '{\n  "version": "v1",\n  "agent": "demo",\n  "queries": {\n}')
    with pytest.raises(BaselineError) as caught:
        read_baseline(broken)
    assert str(caught.value).startswith(f"{broken}:5: malformed JSON")
    saved = {
        "version": "v2",
        "agent": "demo",
        "captured_at": "x",
        "metadata": {"precheck_passed": True},
        "queries": {"math": [{"id": "math", "tool_calls": [{"name": "a"}, {"nme": "b"}]}]},
    }
    invalid = write("golden/v2.json", json.dumps(saved, indent=2))
    with pytest.raises(BaselineError) as caught:
        read_baseline(invalid)
    lines = invalid.read_text().splitlines()
    messages = [(p.line, p.message) for p in caught.value.problems]
    nme_line = next(i for i, text in enumerate(lines, 1) if '"nme": "b"' in text)
    assert (nme_line, "queries.math[0].tool_calls[1]: unknown key 'nme'; did you mean 'name'?") in messages
    assert any("queries.math[0].tool_calls[1].name: required key is missing" in m for _, m in messages)


def test_missing_version_lists_the_available_ones(spec_path):
    spec = load_spec(spec_path)
    save_baseline(spec, traces(GOOD), "v1")
    save_baseline(spec, traces(BAD), "v2", SaveOptions(force=True))
    with pytest.raises(BaselineError, match="no baseline version 'v3'; available: v1, v2"):
        load_baseline(spec, "v3")
    assert load_baseline(spec).baseline.version == "v1"  # v2 failed its precheck


# --- the command line ---------------------------------------------------------------------------


def test_cli_save_refuses_with_exit_1_listing_failures(spec_path, write_traces):
    bad = write_traces("bad.jsonl", BAD)
    result = run_cli("save", "--spec", spec_path, "--traces", bad, "--version", "v1")
    assert result.returncode == 1
    assert "precheck failed: 1 query fails as `agentci test` judges them, so 'v1' was not saved" in result.stderr
    assert f"{spec_path}:4: query 'math': expected in answer but missing: '4'" in result.stderr
    assert not (spec_path.parent / "golden" / "v1.json").exists()
    forced = run_cli("save", "--spec", spec_path, "--traces", bad, "--version", "v1", "--force-save")
    assert forced.returncode == 0 and "precheck FAILED, forced" in forced.stdout
    again = run_cli("save", "--spec", spec_path, "--traces", bad, "--version", "v1", "--force-save")
    assert again.returncode == 2 and "already exists; pass --overwrite" in again.stderr
    assert "Traceback" not in again.stderr


def test_cli_baselines_lists_versions_and_the_default(spec_path, write_traces):
    assert run_cli("baselines", "--spec", spec_path).stdout == (  # no runner: no command to run as it stands
        f"no baselines in {spec_path.parent / 'golden'} yet; `agentci save` records one from the traces of a passing "
        "run (--traces, and --version to name it)\n"
    )
    good, bad = write_traces("good.jsonl", GOOD), write_traces("bad.jsonl", BAD)
    run_cli("save", "--spec", spec_path, "--traces", good, "--version", "v1")
    run_cli("save", "--spec", spec_path, "--traces", bad, "--version", "v2", "--force-save")
    out = run_cli("baselines", "--spec", spec_path).stdout.splitlines()
    assert out[0].split() == ["VERSION", "CAPTURED", "QUERIES", "TRACES", "PRECHECK", "AGENT", "MODELS", "FILE"]
    assert out[1].startswith("*  v1") and "passed" in out[1] and "claude-haiku,gpt-4o-mini" in out[1]
    assert out[2].startswith("   v2") and "failed" in out[2]


def test_cli_diff_warns_about_another_agent_or_spec_and_still_diffs(spec_path, write_traces, write):
    run_cli("save", "--spec", spec_path, "--traces", write_traces("good.jsonl", GOOD), "--version", "v1")
    changed = write("spec.yaml", SPEC.replace("agent: demo", "agent: other"))
    result = run_cli("diff", "--spec", changed, "--baseline", "v1", "--compare", "v1", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "baseline v1 was saved for agent 'demo', the spec is for 'other'; compared anyway" in result.stderr
    assert (
        "baseline v1 was saved from another version of the spec: the same queries, so another key changed"
        in result.stderr
    )
    data = json.loads(result.stdout)
    assert len(data["warnings"]) == 2 and data["total"]["counts"]["unchanged"] == 2  # one version: each warning once


def test_cli_diff_with_a_query_on_one_side_and_a_query_no_longer_in_the_spec(spec_path, write, write_traces):
    one = write(
        "one.yaml",
        SPEC.replace('  - id: hello\n    query: "Say hello"\n    correctness: {expected_in_answer: ["hello"]}\n', ""),
    )
    run_cli("save", "--spec", one, "--traces", write_traces("math.jsonl", GOOD[:1]), "--version", "v1")
    run_cli("save", "--spec", spec_path, "--traces", write_traces("both.jsonl", GOOD), "--version", "v2")
    result = run_cli("diff", "--spec", spec_path, "--baseline", "v1", "--compare", "v2", "--format", "json")
    kinds = {q["id"]: q["kinds"] for q in json.loads(result.stdout)["queries"]}
    assert kinds == {"hello": ["new_query"], "math": []}
    reverse = run_cli("diff", "--spec", one, "--baseline", "v2", "--compare", "v1", "--format", "json")
    assert "matches no query" not in reverse.stderr  # the diff lists it as removed: no second warning
    removed = {q["id"]: q for q in json.loads(reverse.stdout)["queries"]}
    assert {key: q["kinds"] for key, q in removed.items()} == {"hello": ["removed_query"], "math": []}
    assert removed["hello"]["query"] == "Say hello" and removed["hello"]["cost"]["cost_usd"]["before"] == 0.0005


def test_cli_diff_missing_version_exits_2_listing_versions(spec_path, write_traces):
    run_cli("save", "--spec", spec_path, "--traces", write_traces("good.jsonl", GOOD), "--version", "v1")
    result = run_cli("diff", "--spec", spec_path, "--baseline", "v1", "--compare", "v9")
    assert result.returncode == 2 and "no baseline version 'v9'; available: v1" in result.stderr


def test_cli_test_compares_with_the_newest_passing_baseline(spec_path, write_traces):
    good, bad = write_traces("good.jsonl", GOOD), write_traces("bad.jsonl", BAD)
    run_cli("save", "--spec", spec_path, "--traces", bad, "--version", "v1-broken", "--force-save")
    run_cli("save", "--spec", spec_path, "--traces", good, "--version", "v2")
    result = run_cli("test", "--spec", spec_path, "--traces", bad)
    assert result.returncode == 1
    assert "AgentCI diff · demo · v2 → current" in result.stdout and "✗ REGRESSION  math" in result.stdout
    pinned = run_cli("test", "--spec", spec_path, "--traces", bad, "--baseline", "v1-broken")
    assert "v1-broken → current" in pinned.stdout and "Unchanged (2): hello, math" in pinned.stdout
    assert "╔" not in run_cli("test", "--spec", spec_path, "--traces", bad, "--baseline", "none").stdout
    both = run_cli("test", "--spec", spec_path, "--traces", bad, "--baseline", "v2", "--baseline-traces", good)
    assert both.returncode == 2 and "a baseline version and baseline traces exclude each other; give one" in both.stderr


def test_cli_test_with_tags_compares_only_the_selected_queries(spec_path, write_traces, write):
    tagged = write("spec.yaml", SPEC.replace('query: "Say hello"', 'query: "Say hello"\n    tags: [greet]'))
    run_cli("save", "--spec", tagged, "--traces", write_traces("good.jsonl", GOOD), "--version", "v1")
    result = run_cli("test", "--spec", tagged, "--traces", write_traces("now.jsonl", GOOD), "--tags", "greet")
    assert result.returncode == 0, result.stderr
    assert "Unchanged (1): hello" in result.stdout and "warning" not in result.stderr


def test_cli_save_with_tags_keeps_the_tagged_queries_under_the_whole_spec_s_hash(spec_path, write_traces, write):
    """As `test --tags` ran them: a query outside the tags needs no trace; later runs of every query compare the rest."""
    tagged = write("spec.yaml", SPEC.replace('query: "Say hello"', 'query: "Say hello"\n    tags: [greet]'))
    only_hello = write_traces("hello.jsonl", GOOD[1:])
    assert run_cli("save", "--spec", tagged, "--traces", only_hello, "--version", "v0").returncode == 2  # math: none
    saved = run_cli("save", "--spec", tagged, "--traces", only_hello, "--tags", "greet", "--version", "v1")
    assert saved.returncode == 0, saved.stderr
    assert "saved baseline v1: 1 query, 1 trace, precheck passed" in saved.stdout
    stored = load_baseline(load_spec(tagged), "v1")
    assert stored is not None
    baseline = stored.baseline
    assert list(baseline.queries) == ["hello"]
    assert baseline.metadata.spec_hash == spec_hash(load_spec(tagged))  # the whole spec's, as `test` compares
    assert baseline.metadata.selected_tags == ["greet"]
    every = run_cli("test", "--spec", tagged, "--traces", write_traces("now.jsonl", GOOD))
    assert every.returncode == 0, every.stderr
    assert "Unchanged (1): hello" in every.stdout and "another version of the spec" not in every.stdout + every.stderr
    # the spec changed since (a query added): the warning names that query, not the one outside the tags
    grown = write("spec.yaml", (tagged.read_text() + '  - id: added\n    query: "new?"\n    tags: [greet]\n'))
    traces_now = write_traces("grown.jsonl", [*GOOD, {"id": "added", "final_answer": "x"}])
    warned = run_cli("test", "--spec", grown, "--traces", traces_now)
    assert "saved from another version of the spec: queries added since: added;" in warned.stdout, warned.stdout
    greet = SPEC.replace('query: "Say hello"', 'query: "Say hello"\n    tags: [greet]')
    outside = write("spec.yaml", greet.replace('query: "What is 2+2?"', 'query: "What is 2+3?"'))  # not tagged
    changed = run_cli("test", "--spec", outside, "--traces", traces_now)
    assert "of the spec: the same queries tagged greet, so another query or key changed;" in changed.stdout
    unknown = run_cli("save", "--spec", tagged, "--traces", only_hello, "--tags", "nope", "--version", "v2")
    assert unknown.returncode == 2 and "no query has any of the tags nope (tags in this spec: greet)" in unknown.stderr


def test_example_baselines_are_valid_and_tell_the_weather_story():
    spec = load_spec(ROOT / "examples" / "rag" / "agentci_spec.yaml")
    versions = {v: load_baseline(spec, v).baseline for v in (h.header.version for h in list_headers(spec))}
    broken, fixed = versions["v1-broken"], versions["v2-fixed"]
    assert (broken.metadata.precheck_passed, fixed.metadata.precheck_passed) == (False, True)
    assert (
        len(broken.queries["weather-tokyo"][0].tool_calls) == 11 and fixed.queries["weather-tokyo"][0].tool_calls == []
    )
    assert broken.metadata.spec_hash == fixed.metadata.spec_hash == spec_hash(spec)


def test_spec_hash_ignores_values_left_at_their_default(write):
    plain = load_spec(write("a.yaml", SPEC))
    explicit = load_spec(write("b.yaml", SPEC.replace("agent: demo", "version: 1\nagent: demo")))
    assert spec_hash(plain) == spec_hash(explicit)


REPEATED = """
agent: demo
baseline_dir: ./golden
defaults: {runs: 10, min_pass_rate: 0.8}
queries:
  - id: q
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
    path: {expected_tools: [calc]}
"""


def repeated_runs(routes: list[list[str]], answer: str = "4") -> list[dict]:
    return [
        {
            "id": "q",
            "run": i,
            "final_answer": answer,
            "tool_calls": [{"name": n} for n in route],
            "total_cost_usd": 0.001 * (1 + i % 3),
        }
        for i, route in enumerate(routes)
    ]


def test_a_version_saved_with_ten_runs_is_the_reference_of_every_later_test(write, write_traces):
    """A version's traces are its runs: ten of them are no variant overflow, and their distinct routes are the variants."""
    spec = write("spec.yaml", REPEATED)
    routes = [["calc"]] * 6 + [["search", "calc"]] * 2 + [["calc", "calc"]] * 2
    file = write_traces("runs.jsonl", repeated_runs(routes))
    saved = run_cli("save", "--spec", spec, "--traces", file, "--version", "v1")
    assert saved.returncode == 0, saved.stderr
    for _ in range(2):  # every later test, not only the first
        tested = run_cli("test", "--spec", spec, "--traces", file, "--format", "json")
        assert tested.returncode == 0, tested.stderr
        result = json.loads(tested.stdout)["results"][0]
        assert result["runs"] == 10 and result["path"]["details"]["baseline_variants"] == 3


def test_a_version_offers_at_most_five_distinct_routes_as_variants(write):
    from agentci_action.compare.baselines import reference_variants
    from agentci_action.engine.evaluate_spec import MAX_VARIANTS

    runs = traces(repeated_runs([["a"], ["a"], ["b"], ["c"], ["a"], ["d"], ["e"], ["f"], ["g"], ["b"]]))
    variants = reference_variants(runs)
    assert [v.tool_names for v in variants] == [["a"], ["b"], ["c"], ["d"], ["e"]] and len(variants) == MAX_VARIANTS
    assert [v.run for v in variants] == [0, 2, 3, 5, 6]  # each route's first run


def test_baseline_traces_given_as_variants_keep_the_limit(write, write_traces):
    spec = write("spec.yaml", REPEATED.replace("defaults: {runs: 10, min_pass_rate: 0.8}\n", ""))
    current = write_traces("current.jsonl", repeated_runs([["calc"]]))
    six = write_traces("six.jsonl", [{**r, "run": None} for r in repeated_runs([["calc"]] * 6)])
    result = run_cli("test", "--spec", spec, "--traces", current, "--baseline-traces", six)
    assert result.returncode == 2 and "has 6 baseline traces (variants); at most 5" in result.stderr


@pytest.mark.parametrize(
    "spec_text, records",
    [
        # the query's `checks:` block: reference answer Paris, normalised exact match, answer Berlin
        (
            """
agent: demo
baseline_dir: ./golden
queries:
  - id: capital
    query: "Capital of France?"
    reference_answer: Paris
    checks: {answer: {normalized_exact_match: true}}
""",
            [{"id": "capital", "final_answer": "Berlin"}],
        ),
        # a forbidden tool: the path layer fails hard
        (
            """
agent: demo
baseline_dir: ./golden
queries:
  - id: mail
    query: "Summarise my inbox"
    correctness: {expected_in_answer: ["inbox"]}
    path: {forbidden_tools: [send_email]}
""",
            [{"id": "mail", "final_answer": "your inbox: 3 mails", "tool_calls": [{"name": "send_email"}]}],
        ),
    ],
)
def test_the_precheck_fails_whatever_fails_test(write, write_traces, spec_text, records):
    spec, file = write("spec.yaml", spec_text), write_traces("t.jsonl", records)
    tested = run_cli("test", "--spec", spec, "--traces", file, "--baseline", "none")
    saved = run_cli("save", "--spec", spec, "--traces", file, "--version", "v1")
    assert (tested.returncode, saved.returncode) == (1, 1), saved.stderr
    assert "precheck failed: 1 query fails" in saved.stderr and not (spec.parent / "golden" / "v1.json").exists()


def test_the_precheck_judges_repeated_runs_by_min_pass_rate(tmp_path):
    """examples/repeated-runs' baseline runs pass `test` (some runs fail, within min_pass_rate).

    Their save passes the precheck.
    """
    spec = load_spec(ROOT / "examples/repeated-runs/agentci_spec.yaml").model_copy(
        update={"baseline_dir": str(tmp_path)}
    )
    runs = load_traces([str(ROOT / "examples/repeated-runs/runs/v1.jsonl")])
    assert not any(r.blocking for r in evaluate_spec(spec, runs).results)
    _, baseline, failures = save_baseline(spec, runs, "v1")
    assert failures == [] and baseline.metadata.precheck_passed and baseline.trace_count == 80
    strict = spec.model_copy(update={"queries": [q.model_copy(update={"min_pass_rate": 1.0}) for q in spec.queries]})
    with pytest.raises(PrecheckFailed) as caught:
        save_baseline(strict, runs, "v2")
    assert {p.message.split(":")[0] for p in caught.value.problems} == {
        "query 'population-lagos'",
        "query 'convert-currency'",
    }


def test_saved_files_are_readable_by_everyone(spec_path):
    path, _, _ = save_baseline(load_spec(spec_path), traces(GOOD), "v1")
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_corrupt_file_of_another_version_does_not_block_a_named_one(spec_path, write, write_traces):
    run_cli("save", "--spec", spec_path, "--traces", write_traces("good.jsonl", GOOD), "--version", "v2")
    broken = write("golden/v1.json", '{"version": "v1", "agent": "demo", "queries": {')
    tested = run_cli("test", "--spec", spec_path, "--traces", write_traces("good.jsonl", GOOD), "--baseline", "v2")
    assert tested.returncode == 0, tested.stderr
    listed = run_cli("baselines", "--spec", spec_path)  # listing every version still names the broken file
    assert listed.returncode == 2 and f"{broken}:1: malformed JSON" in listed.stderr


def test_a_version_saved_with_fewer_runs_than_the_spec_now_asks_is_still_compared(write, write_traces):
    spec = write("spec.yaml", REPEATED.replace("runs: 10", "runs: 3"))
    assert (
        run_cli(
            "save",
            "--spec",
            spec,
            "--version",
            "v1",
            "--traces",
            write_traces("three.jsonl", repeated_runs([["calc"]] * 3)),
        ).returncode
        == 0
    )
    write("spec.yaml", REPEATED)  # runs: 10 from now on
    tested = run_cli(
        "test",
        "--spec",
        spec,
        "--traces",
        write_traces("ten.jsonl", repeated_runs([["calc"]] * 10)),
        "--format",
        "json",
    )
    assert tested.returncode == 0, tested.stderr
    runs = json.loads(tested.stdout)["diff"]["queries"][0]["runs"]
    assert (runs["before"], runs["after"]) == (3, 10)


def test_provenance_is_left_out_of_the_spec_hash(write):
    """Promoting a query records where it came from; that metadata must not invalidate every baseline."""
    plain = load_spec(write("plain.yaml", SPEC))
    promoted = SPEC.replace(
        "  - id: math\n",
        "  - id: math\n    provenance: {source: traces/t1.json, framework: openai-chat, promoted_commit: abc1234}\n",
    )
    assert promoted != SPEC
    traced = load_spec(write("traced.yaml", promoted))
    assert traced.queries[0].provenance is not None and traced.queries[0].provenance.source == "traces/t1.json"
    assert spec_hash(plain) == spec_hash(traced)

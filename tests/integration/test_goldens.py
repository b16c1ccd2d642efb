"""`agentci goldens` end to end in process: real traces of every format promoted, checked, and tested as advised.

The traces are other projects' real recordings in ../shared/fixtures (read in place, never copied): each promoted spec
validates, each golden passes on its source trace, and the `next:` command printed is run exactly as printed.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, hermetic_environment, real_traces_dir, run_cli, shared_fixture, tau_bench_file

from agentci_action.engine.checks.leakage import PATTERNS
from agentci_action.pipeline.golden_yaml import MARKER
from agentci_action.spec.loader import load_spec

SPEC = """\
# the team's spec: comments and layout are theirs
version: 1
agent: demo   # the agent under test
queries:
  - id: existing
    query: "What is 2+2?"   # keep me
    correctness:
      expected_in_answer: ["4"]
# below the queries: stays below
"""
# Every file with a query to promote, one per format and shape (the Agents SDK's own spans of the others record no
# input: they are the "no query" case below).
PROMOTABLE = [
    "openai-chat/chat_otelc_weather.jsonl",
    "openai-chat/chat_agno_failing_tool.jsonl",
    "openai-chat/chat_oi_cached_tokens.jsonl",
    "openai-responses/resp_af_multiple_tools.jsonl",
    "openai-responses/resp_logfire_agents_handoff.jsonl",
    "openai-responses/resp_logfire_tool_exception.jsonl",
    "openai-responses/resp_otelc_tool_call_only.jsonl",
    "anthropic/anth_oi_parallel_tools.jsonl",
    "anthropic/anth_pai_cache.jsonl",
    "anthropic/anth_pai_capital.jsonl",
    "openai-agents/agents_chat_completions.jsonl",
    "langgraph/lg_otelc_weather.jsonl",
    "langsmith/ls_otelc_weather.jsonl",
    "openinference/oi_agents_handoff.jsonl",
    "openinference/oi_anthropic_capital.jsonl",
    "openinference/oi_openai_weather.jsonl",
    "otel-genai/otel_agents_v2_handoff.jsonl",
    "otel-genai/otel_openai_v2_weather.jsonl",
    "otel-genai/otel_pydantic_ai_capital.jsonl",
]


@pytest.fixture(scope="module")
def real() -> Path:
    return shared_fixture(real_traces_dir(), "shared/fixtures/real-traces not found beside the repository")


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "agentci_spec.yaml").write_text(SPEC)
    return tmp_path


def next_command(stdout: str) -> list[str]:
    """The `next:` line's command, split as a shell would."""
    line = next(line for line in stdout.splitlines() if line.startswith("next: "))
    return shlex.split(line.removeprefix("next: "))


def run_as_printed(stdout: str, cwd: Path):
    command = next_command(stdout)
    assert command[:2] == ["agentci", "test"]
    return run_cli(*command[1:], cwd=cwd)


@pytest.mark.parametrize("name", PROMOTABLE)
def test_every_format_promotes_to_a_spec_that_passes_on_its_traces(real, tmp_path, name):
    ws = workspace(tmp_path)
    traces = str(real / name)
    done = run_cli("goldens", "--output", "goldens.yaml", "--traces", traces, cwd=ws)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAILS" not in done.stdout and "passes on its source trace" in done.stdout
    assert run_cli("validate", "goldens.yaml", cwd=ws).returncode == 0
    spec = load_spec(ws / "goldens.yaml")
    for query in spec.queries:
        assert query.provenance is not None and query.provenance.source.startswith("../")
        assert query.provenance.framework == name.split("/")[0]  # each folder is named for its format
    tested = run_as_printed(done.stdout, ws)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_the_first_run_s_advice_saves_the_goldens_as_printed_beside_a_query_with_no_trace(real, tmp_path):
    """goldens → its `next:` (a test of the promoted queries) → the save command that run prints, each run as printed.

    The README's path: `agentci init`'s spec (its example query has no trace here, and its defaults' cost multiplier
    needs a baseline), then goldens from traces the agent wrote. The save keeps the tagged queries, as the test ran them.
    """
    ws = tmp_path
    assert run_cli("init", "--command", "python agent.py", cwd=ws).returncode == 0
    shutil.copytree(real / "otel-genai", ws / "traces")
    done = run_cli("goldens", "--traces", "traces/", cwd=ws)
    assert done.returncode == 0, done.stderr
    first = run_as_printed(done.stdout, ws)
    assert first.returncode == 0, first.stdout + first.stderr
    save = re.search(r"`(agentci save [^`]+)`", first.stdout)
    assert save is not None and "--tags promoted" in save.group(1), first.stdout
    saved = run_cli(*shlex.split(save.group(1))[1:], cwd=ws)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert "saved baseline v1: 3 queries, 3 traces, precheck passed" in saved.stdout
    again = run_as_printed(done.stdout, ws)
    assert again.returncode == 0 and "Unchanged (3)" in again.stdout and "agentci save" not in again.stdout
    assert "another version of the spec" not in again.stdout + again.stderr  # the whole spec's hash was saved


def test_after_two_promotions_from_two_folders_the_printed_save_runs_as_printed(real, tmp_path):
    """The first run of the second `next:` read traces from two folders: its save command names both."""
    ws = tmp_path
    assert run_cli("init", "--command", "python agent.py", cwd=ws).returncode == 0  # its runner has no agent here
    shutil.copytree(real / "otel-genai", ws / "traces")
    (ws / "more").mkdir()
    shutil.copy(real / "openai-responses" / "resp_af_multiple_tools.jsonl", ws / "more")
    assert run_cli("goldens", "--traces", "traces/", cwd=ws).returncode == 0
    second = run_cli("goldens", "--traces", "more/", cwd=ws)
    first = run_as_printed(second.stdout, ws)
    assert first.returncode == 0, first.stdout + first.stderr
    (save,) = re.findall(r"`(agentci save [^`]+)` saves these runs", first.stdout)
    assert save == "agentci save --spec agentci_spec.yaml --traces more --traces traces --tags promoted --version v1"
    saved = run_cli(*shlex.split(save)[1:], cwd=ws)
    assert saved.returncode == 0 and "saved baseline v1: 4 queries" in saved.stdout, saved.stdout + saved.stderr
    again = run_as_printed(second.stdout, ws)
    assert again.returncode == 0 and "Unchanged (4)" in again.stdout


def test_a_second_promotion_s_next_names_the_files_the_first_came_from(real, tmp_path):
    """`--tags promoted` selects every promoted golden: each needs its source traces, or the command exits 2."""
    ws = workspace(tmp_path)
    shutil.copytree(real / "otel-genai", ws / "traces")
    (ws / "more").mkdir()
    shutil.copy(real / "openai-responses" / "resp_af_multiple_tools.jsonl", ws / "more")
    assert run_cli("goldens", "--traces", "traces/", cwd=ws).returncode == 0
    second = run_cli("goldens", "--traces", "more/", cwd=ws)
    assert second.returncode == 0, second.stderr
    command = next_command(second.stdout)
    first = ["otel_agents_v2_handoff.jsonl", "otel_openai_v2_weather.jsonl", "otel_pydantic_ai_capital.jsonl"]
    after = command[command.index("more/") + 1 :]
    assert after[:6] == [word for name in first for word in ("--traces", f"traces/{name}")]
    tested = run_as_printed(second.stdout, ws)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "PASS: 4 queries · 4 passed" in tested.stdout
    # a source moved away: no command that would exit 2, a note naming what is missing
    (ws / "traces" / "otel_openai_v2_weather.jsonl").rename(ws / "elsewhere.jsonl")
    shutil.copy(real / "anthropic" / "anth_oi_parallel_tools.jsonl", ws / "more")
    third = run_cli("goldens", "--traces", "more/anth_oi_parallel_tools.jsonl", cwd=ws)
    assert third.returncode == 0, third.stderr
    assert "next:" not in third.stdout
    assert (
        "note: `agentci test agentci_spec.yaml --tags promoted` evaluates every promoted golden, and needs their "
        "traces: 'otel-openai-v2-weather' came from traces/otel_openai_v2_weather.jsonl:1, not found"
    ) in third.stdout


def test_appended_under_a_marker_the_users_text_kept_byte_for_byte(real, tmp_path):
    ws = workspace(tmp_path)
    done = run_cli("goldens", "--traces", str(real / "openai-chat/chat_otelc_weather.jsonl"), cwd=ws)
    assert done.returncode == 0, done.stderr
    text = (ws / "agentci_spec.yaml").read_text()
    head, _, rest = text.partition(f"  {MARKER}\n")
    assert head == SPEC[: SPEC.index("# below")]  # everything above the marker as it was
    assert rest.endswith("# below the queries: stays below\n")
    assert [q.key for q in load_spec(ws / "agentci_spec.yaml").queries] == ["existing", "chat-otelc-weather"]
    assert run_as_printed(done.stdout, ws).returncode == 0

    again = run_cli("goldens", "--traces", str(real / "langgraph/lg_otelc_weather.jsonl"), cwd=ws)
    assert again.returncode == 0
    assert "near-duplicate of 'chat-otelc-weather' (similarity 1.00)" in again.stdout
    assert "nothing to promote" in again.stdout
    assert (ws / "agentci_spec.yaml").read_text() == text


def test_dry_run_prints_the_goldens_and_writes_nothing(real, tmp_path):
    ws = workspace(tmp_path)
    done = run_cli("goldens", "--dry-run", "--traces", str(real / "anthropic"), cwd=ws)
    assert done.returncode == 0, done.stderr
    assert "- id: anth-pai-capital" in done.stdout and "dry run: nothing written" in done.stdout
    assert "next:" not in done.stdout
    assert (ws / "agentci_spec.yaml").read_text() == SPEC


def tau_bench_threads(path: Path, per_trial: bool) -> None:
    """τ-bench's 200 conversations as LangGraph thread records (each user message begins a turn).

    The four trials of a task are four runs of one query id (`task-N`), as repeated runs are in a trace; with
    `per_trial`, each trial has an id of its own (`task-N-trial-M`).
    """
    kinds = {"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}

    def message(m: dict) -> dict:
        found = {"type": kinds[m["role"]], "content": m.get("content") or ""}
        if m.get("tool_calls"):
            found["tool_calls"] = [
                {"id": c["id"], "name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
                for c in m["tool_calls"]
            ]
        if m["role"] == "tool":
            found["tool_call_id"] = m["tool_call_id"]
        return found

    entries = json.loads(shared_fixture(tau_bench_file(), "shared/fixtures/tau-bench not found").read_text())
    with path.open("w") as out:
        for e in entries:
            key = f"task-{e['task_id']}" + (f"-trial-{e['trial']}" if per_trial else "")
            thread = f"task-{e['task_id']}-trial-{e['trial']}"
            out.write(json.dumps({"id": key, "thread_id": thread, "messages": [message(m) for m in e["traj"]]}) + "\n")


def test_tau_bench_four_trials_of_a_task_make_one_multi_turn_golden(tmp_path):
    ws = workspace(tmp_path)
    tau_bench_threads(ws / "tau.jsonl", per_trial=False)
    done = run_cli("goldens", "--output", "goldens.yaml", "--traces", "tau.jsonl", cwd=ws)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    written = load_spec(ws / "goldens.yaml").queries
    flagged = [line for line in done.stdout.splitlines() if line.startswith("  ! ")]
    assert len(written) + len(flagged) == 50  # one golden per task, not four
    assert len(flagged) == 1 and "task-24" in flagged[0]  # an email in a user message: masked, flagged
    assert done.stdout.count("another run of") == 150
    assert all(query.turns and len(query.turns) >= 2 for query in written)
    assert run_as_printed(done.stdout, ws).returncode == 0

    kept = run_cli("goldens", "--output", "kept.yaml", "--keep-masked", "--traces", "tau.jsonl", cwd=ws)
    assert kept.returncode == 0 and len(load_spec(ws / "kept.yaml").queries) == 50


def test_tau_bench_trials_with_ids_of_their_own_are_not_merged_by_wording(tmp_path):
    """Text alone does not tell τ-bench's tasks apart: trials of one task are worded differently."""
    ws = workspace(tmp_path)
    tau_bench_threads(ws / "tau.jsonl", per_trial=True)
    done = run_cli("goldens", "--dry-run", "--traces", "tau.jsonl", cwd=ws)
    assert done.returncode == 0
    assert "200 selected: 193 golden(s) to write, 7 flagged, 0 dropped" in done.stdout


SECRET = "s3cr3t-value-from-the-environment"
PLANTED = {
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----",
    "openai": "sk-proj-abcdefghijklmnopqrstuvwx1234",
    "stripe": "sk_live_abcdefghijklmnop1234",
    "aws": "AKIAABCDEFGHIJKLMNOP",
    "google": "AIzaSyA1234567890abcdefghijklmnopqrstu",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat": "github_pat_abcdefghijklmnopqrstuv_123",
    "slack": "xoxb-1234567890-abcdefghij",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "bearer": "Bearer abcdefghijklmnopqrstuvwxyz012345",
    "card": "4111 1111 1111 1111",
    "ssn": "123-45-6789",
    "email": "jane.doe@example.com",
    "ipv4": "192.168.12.34",
    "phone": "(555) 123-4567",
    "phone_intl": "+44 20 7946 0958",
    "environment": SECRET,
}


def test_every_pattern_the_quality_checks_know_is_masked_before_writing(tmp_path):
    ws = workspace(tmp_path)
    kinds = {kind for kind, _ in PATTERNS}
    values = list(PLANTED.values())
    trace = {
        "id": "leaky",
        "query": "Look up " + " and ".join(values[:8]),
        "final_answer": "Found: " + "; ".join(values),
        "tool_calls": [{"name": "lookup", "arguments": {f"a{n}": value for n, value in enumerate(values)}}],
        "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": 100, "output_tokens": 20}],
    }
    (ws / "leaky.jsonl").write_text(json.dumps(trace) + "\n")
    env = {"MY_API_TOKEN": SECRET}
    flagged = run_cli("goldens", "--traces", "leaky.jsonl", cwd=ws, env=hermetic_environment(**env))
    assert flagged.returncode == 0 and "flagged, not written: its query had to be masked" in flagged.stdout
    assert (ws / "agentci_spec.yaml").read_text() == SPEC

    done = run_cli("goldens", "--keep-masked", "--traces", "leaky.jsonl", cwd=ws, env=hermetic_environment(**env))
    assert done.returncode == 0, done.stdout + done.stderr
    written = (ws / "agentci_spec.yaml").read_text()
    for value in values:
        for part in value.splitlines():
            assert part not in written and part not in done.stdout, part
    reported = {
        part.split(" in ")[0]
        for line in done.stdout.splitlines()
        if "masked:" in line
        for part in line.split("masked: ")[1].split("; ")
    }
    assert kinds | {"secret"} <= reported
    assert "(left out)" in done.stdout  # a masked argument matches no call: left out of the expected arguments
    golden = load_spec(ws / "agentci_spec.yaml").queries[-1]
    assert golden.path.expected_tool_calls[0].arguments is None  # every argument masked: the call stays, bare


def test_an_incident_fails_on_its_source_trace_until_fixed(real, tmp_path):
    ws = workspace(tmp_path)
    traces = str(real / "openai-chat/chat_agno_failing_tool.jsonl")
    done = run_cli(
        "goldens", "--incident", "--forbid-tool", "unreliable_search", "--expect-answer", "Python",
        "--traces", traces, cwd=ws,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fails on its source trace, as an incident should (forbidden_tools" in done.stdout
    golden = load_spec(ws / "agentci_spec.yaml").queries[-1]
    assert golden.provenance.incident and golden.tags == ["promoted", "incident"]
    assert golden.reference_answer is None  # the failing run's answer is not the expectation
    tested = run_as_printed(done.stdout, ws)
    assert tested.returncode == 1 and "forbidden" in tested.stdout  # fails today; passes once the agent is fixed


def test_selection_by_filter_and_a_seeded_sample(real, tmp_path):
    ws = workspace(tmp_path)
    folder = str(real / "openai-responses")
    by_tool = run_cli("goldens", "--dry-run", "--tool", "get_humidity", "--traces", folder, cwd=ws)
    assert "4 trace(s) read, 1 selected" in by_tool.stdout and "+ resp-af-multiple-tools" in by_tool.stdout
    by_framework = run_cli("goldens", "--dry-run", "--framework", "anthropic", "--traces", folder, cwd=ws)
    assert "0 selected" in by_framework.stdout and "nothing to promote" in by_framework.stdout
    where = run_cli("goldens", "--dry-run", "--where", "status=completed", "--traces", folder, cwd=ws)
    assert "4 selected" in where.stdout
    samples = [
        run_cli("goldens", "--dry-run", "--sample", "2", "--seed", seed, "--traces", folder, cwd=ws).stdout
        for seed in ("1", "1", "7")
    ]
    assert samples[0] == samples[1] and "(a sample of 2 from 4)" in samples[0]
    assert samples[0].count("not in the sample") == 2
    runs = [
        {"id": "ok", "query": "refund order 1", "final_answer": "Done.", "metadata": {"status": "completed"}},
        {"id": "broke", "query": "refund order 2", "final_answer": "Sorry.", "metadata": {"status": "failed"}},
        {"id": "tool-error", "query": "refund order 3", "tool_calls": [{"name": "refund", "error": "timeout"}]},
    ]
    (ws / "runs.jsonl").write_text("".join(json.dumps(run) + "\n" for run in runs))
    failed = run_cli("goldens", "--dry-run", "--failed", "--traces", "runs.jsonl", cwd=ws)
    assert (
        "3 trace(s) read, 2 selected" in failed.stdout
        and "+ broke" in failed.stdout
        and "+ tool-error" in failed.stdout
    )
    by_id = run_cli("goldens", "--dry-run", "--id", "ok,broke", "--traces", "runs.jsonl", cwd=ws)
    assert "3 trace(s) read, 2 selected" in by_id.stdout


def test_yaml_in_a_trace_stays_a_value(tmp_path):
    """Trace text that looks like YAML structure, tags, anchors or the marker is written as a quoted value."""
    ws = workspace(tmp_path)
    hostile = f"x\n  - id: injected\n    query: evil\n{MARKER}\n!!python/object:os.system ls &a *a {{b: c}}"
    trace = {"query": hostile, "final_answer": "*alias &anchor !tag\n- id: evil2"}
    (ws / "t.jsonl").write_text(json.dumps(trace) + "\n")
    done = run_cli("goldens", "--traces", "t.jsonl", cwd=ws)
    assert done.returncode == 0, done.stdout + done.stderr
    queries = load_spec(ws / "agentci_spec.yaml").queries
    assert [q.key for q in queries] == ["existing", queries[1].key]
    assert queries[1].query == trace["query"] and queries[1].reference_answer == trace["final_answer"]
    assert (ws / "agentci_spec.yaml").read_text().count(MARKER) == 1 + 1  # ours, and the trace's, quoted
    assert yaml.safe_load((ws / "agentci_spec.yaml").read_text())["queries"][1]["query"] == trace["query"]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("unknown format", "data.json:1: unrecognised trace format"),
        ("no query", "agents_handoff.jsonl:11: trace 'agents-handoff' has no query"),
        ("turn without a user message", "conv.jsonl:1: conversation 'c1': turn 2 has no user message"),
        ("invalid spec", "agentci_spec.yaml:3: "),
        ("id clash", "chat_otelc_weather.jsonl:1: id 'chat-otelc-weather' is already the id of a different query at"),
    ],
)
def test_bad_input_names_the_file_and_line_and_writes_nothing(real, tmp_path, case, expected):
    ws = workspace(tmp_path)
    traces = str(real / "openai-chat/chat_otelc_weather.jsonl")
    if case == "unknown format":
        (ws / "data.json").write_text('{"rows": [1, 2]}\n')
        traces = "data.json"
    elif case == "no query":
        traces = str(real / "openai-agents/agents_handoff.jsonl")
    elif case == "turn without a user message":
        conversation = {"id": "c1", "turns": [{"query": "hi", "final_answer": "hello"}, {"id": "t2"}]}
        (ws / "conv.jsonl").write_text(json.dumps(conversation) + "\n")
        traces = "conv.jsonl"
    elif case == "invalid spec":
        (ws / "agentci_spec.yaml").write_text("version: 1\nagent: demo\nqueries: 3\n")
    else:
        (ws / "agentci_spec.yaml").write_text(SPEC + "  - id: chat-otelc-weather\n    query: another question\n")
    before = (ws / "agentci_spec.yaml").read_text()
    done = run_cli("goldens", "--output", "new.yaml", "--traces", traces, cwd=ws)
    assert done.returncode == 2, done.stdout + done.stderr
    assert expected in done.stderr
    assert not (ws / "new.yaml").exists() and (ws / "agentci_spec.yaml").read_text() == before


def test_the_guide_runs_as_written(real, tmp_path):
    """docs/guides/goldens.md's commands, in order, in a repository with a spec and a folder of traces."""
    ws = workspace(tmp_path)
    (ws / "traces").mkdir()
    for name, source in {
        "weather.jsonl": "openai-chat/chat_otelc_weather.jsonl",
        "weather-graph.jsonl": "langgraph/lg_otelc_weather.jsonl",
        "incident.jsonl": "openai-chat/chat_agno_failing_tool.jsonl",
    }.items():
        (ws / "traces" / name).write_bytes((real / source).read_bytes())  # into the test's own directory
    guide = (ROOT / "docs" / "guides" / "goldens.md").read_text()
    commands = [line for block in re.findall(r"```sh\n(.*?)```", guide, re.S) for line in block.splitlines()]
    assert len(commands) == 5
    quoted = re.search(r"```text\n(.*?)```", guide, re.S)
    assert quoted is not None, "the guide quotes the dry run's report"
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "agentci"
        done = run_cli(*words[1:], cwd=ws)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        if "--dry-run" in words and quoted:
            printed = [" ".join(line.split()) for line in done.stdout.splitlines()]
            for line in quoted.group(1).splitlines():
                assert " ".join(line.split()) in printed, f"the guide quotes {line!r}, the dry run printed {printed}"
            quoted = None
        if "--incident" in words:
            assert "fails on its source trace, as an incident should" in done.stdout
    assert "nothing to promote" in run_cli("goldens", "--traces", "traces/", cwd=ws).stdout  # promoted once only

"""Nothing lost on the way out: racing saves, failed report writes, unwritable runner files, lone surrogates.

Each test runs the real command (a subprocess, real concurrency, real file-size limits and devices).
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.github_server import FakeGitHub
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action._util import output
from agentci_action.github.action import main as action_main
from integration.test_action import environment, run_action, traces
from integration.test_action import workspace as action_workspace

SPEC = """
agent: demo
baseline_dir: ./golden
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
"""
workspace = action_workspace  # the action's workspace fixture, by its name
GOOD = [{"id": "math", "final_answer": "4", "tool_calls": [{"name": "calc"}]}]

# Every save process imports everything, then waits for "go" on stdin before each version, so all of them reach the
# write at once; each save's exit code and stderr come back as a JSON line.
RACER = """
import io, json, sys
from agentci_action.cli.main import main
print("ready", flush=True)
for version in ("v0", "v1"):
    sys.stdin.readline()
    err = io.StringIO()
    code = main([*sys.argv[1:], "--version", version], out=io.StringIO(), err=err)
    print(json.dumps([code, err.getvalue()]), flush=True)
"""


def test_racing_saves_of_one_version_keep_exactly_one_and_the_others_exit_2_naming_it(write, write_traces, tmp_path):
    spec, traces = write("spec.yaml", SPEC), write_traces("t.jsonl", GOOD)
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, "save", "--spec", str(spec), "--traces", str(traces)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=hermetic_environment(),
        )
        for _ in range(5)
    ]
    for racer in racers:
        assert racer.stdout.readline() == "ready\n"
    for version in ("v0", "v1"):  # into an empty baseline folder, then beside a saved version
        for racer in racers:
            racer.stdin.write("go\n")
            racer.stdin.flush()
        done = [json.loads(racer.stdout.readline()) for racer in racers]
        winners = [d for d in done if d[0] == 0]
        losers = [d for d in done if d[0] != 0]
        assert len(winners) == 1, done
        assert all(code == 2 and f"baseline version '{version}' already exists" in err for code, err in losers)
        assert all("Traceback" not in err for _, err in done)
    for racer in racers:
        racer.stdin.close()
        assert racer.wait() == 0 and "Traceback" not in racer.stderr.read()
    assert sorted(p.name for p in (tmp_path / "golden").iterdir()) == ["v0.json", "v1.json"]


def _limited(size: int):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def test_a_report_cut_short_on_standard_output_exits_2(write, write_traces, tmp_path):
    """Under a file-size limit the report cannot be written whole: exit 2 and say so, never exit 0 on half a file."""
    spec, traces = write("spec.yaml", SPEC), write_traces("t.jsonl", GOOD)
    out = tmp_path / "out.json"
    with out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "agentci_action", "test", "--spec", spec, "--traces", traces, "--format", "json"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=hermetic_environment(),
            preexec_fn=_limited(200),
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["error: could not write the report to standard output: File too large"]


@pytest.mark.parametrize(
    "output, reason",
    [
        ("/dev/full", "No space left on device"),
        ("{tmp}", "Is a directory"),
        ("{tmp}/spec.yaml/report.json", "Not a directory"),
    ],
)
def test_an_unwritable_output_file_is_a_one_line_error(write, write_traces, tmp_path, output, reason):
    spec, traces = write("spec.yaml", SPEC), write_traces("t.jsonl", GOOD)
    target = output.format(tmp=tmp_path)
    done = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json", "--output", target)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"error: could not write the report to {target}: {reason}"]


def test_standard_output_on_a_full_device_exits_2(write, write_traces):
    spec, traces = write("spec.yaml", SPEC), write_traces("t.jsonl", GOOD)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "agentci_action", "test", "--spec", spec, "--traces", traces],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=hermetic_environment(),
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["error: could not write the report to standard output: No space left on device"]


def test_a_full_disk_during_save_exits_2_and_keeps_the_old_version(write, write_traces, tmp_path):
    spec = write("spec.yaml", SPEC)
    small = write_traces("small.jsonl", GOOD)
    assert run_cli("save", "--spec", spec, "--traces", small, "--version", "v1").returncode == 0
    saved = (tmp_path / "golden" / "v1.json").read_text()
    big = write_traces("big.jsonl", [{**GOOD[0], "final_answer": "4" + "x" * 100_000}])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentci_action",
            "save",
            "--spec",
            spec,
            "--traces",
            big,
            "--version",
            "v1",
            "--overwrite",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=hermetic_environment(),
        preexec_fn=_limited(50_000),
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path / 'golden' / 'v1.json'}: could not write baseline version 'v1': File too large; "
        "nothing was changed"
    ]
    assert (tmp_path / "golden" / "v1.json").read_text() == saved
    assert sorted(p.name for p in (tmp_path / "golden").iterdir()) == ["v1.json"]  # no temporary left


@pytest.mark.parametrize("command", ["save", "test", "diff"])
def test_an_overlong_version_name_is_refused_up_front(write, write_traces, command):
    spec, traces = write("spec.yaml", SPEC), write_traces("t.jsonl", GOOD)
    long = "v" * 300
    args = {
        "save": ["save", "--spec", spec, "--traces", traces, "--version", long],
        "test": ["test", "--spec", spec, "--traces", traces, "--baseline", long],
        "diff": ["diff", "--spec", spec, "--baseline", long, "--compare", long],
    }[command]
    done = run_cli(*args)
    option = {"save": "--version", "test": "--baseline", "diff": "--baseline"}[command]
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {option}: baseline version name too long (300 characters; at most 100)"
    ]


# --- lone surrogates -------------------------------------------------------------------------------------------

SURROGATE_SPEC = """
agent: demo
baseline_dir: ./golden
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {exact_match: "4"}
    path: {expected_tools: [calc], forbidden_tools: ["calc\\ud83d"]}
"""
# A string cut mid-emoji by JavaScript: valid JSON, a lone high surrogate once decoded.
CUT = '{"id": "math", "final_answer": "4 \\ud83d", "tool_calls": [{"name": "calc\\ud83d", "arguments": {"q": "\\udc00"}}]}\n'


@pytest.mark.parametrize("fmt", ["console", "json", "github", "markdown", "junit", "prometheus"])
def test_a_lone_surrogate_is_replaced_in_every_report_format(write, tmp_path, fmt):
    spec = write("spec.yaml", SURROGATE_SPEC)
    (tmp_path / "t.jsonl").write_text(CUT)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentci_action",
            "test",
            "--spec",
            spec,
            "--traces",
            tmp_path / "t.jsonl",
            "--format",
            fmt,
        ],
        capture_output=True,
        cwd=ROOT,
        env=hermetic_environment(),
    )
    assert done.returncode == 1, done.stderr.decode()  # the exact match and the forbidden tool fail; nothing crashes
    text = done.stdout.decode("utf-8")  # strict: valid UTF-8
    assert b"Traceback" not in done.stderr
    if fmt in ("console", "json", "github", "markdown"):
        assert "\ufffd" in text
    if fmt == "json":
        assert json.loads(text)["results"][0]["correctness"]["status"] == "fail"


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_text_written_a_chunk_at_a_time_is_the_text_written_whole(tmp_path, monkeypatch, chunk):
    """write_text encodes a chunk at a time: a surrogate pair split by a chunk's end would become two U+FFFD."""
    monkeypatch.setattr(output, "CHUNK", chunk)
    text = "a\ud83d\ude00b\ud83dc\udc00\ud83d\ud83d\ude00é€" * 3 + "\ud83d"
    target = tmp_path / "out.txt"
    output.write_file(target, text)
    assert target.read_bytes() == output.utf8(text)
    assert target.read_text(encoding="utf-8").count("\U0001f600") == 6


def test_a_lone_surrogate_is_saved_in_a_baseline_that_loads_back(write, tmp_path):
    spec = write(
        "spec.yaml",
        SURROGATE_SPEC.replace('exact_match: "4"', 'expected_in_answer: ["4"]').replace(
            ', forbidden_tools: ["calc\\ud83d"]', ""
        ),
    )
    (tmp_path / "t.jsonl").write_text(CUT)
    done = run_cli("save", "--spec", spec, "--traces", tmp_path / "t.jsonl", "--version", "v1", "--force-save")
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "golden" / "v1.json").read_text(encoding="utf-8"))
    assert saved["queries"]["math"][0]["final_answer"] == "4 \ufffd"
    assert run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl", "--baseline", "v1").returncode == 0


def action_environment(workspace: Path, api_url: str, **extra: str) -> dict[str, str]:
    (workspace / "event.json").write_text(
        json.dumps({"pull_request": {"number": 7, "head": {"sha": "h" * 40}, "base": {"sha": "b" * 40}}})
    )
    return {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(workspace / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
        "GITHUB_OUTPUT": str(workspace / "output.txt"),
        "INPUT_SPEC": "spec.yaml",
        "INPUT_TRACES": "t.jsonl",
        "INPUT_GITHUB-TOKEN": "ghs_token",
        "INPUT_GITHUB-API-URL": api_url,
        "INPUT_RESULTS-PATH": "results.json",
        **extra,
    }


def test_the_action_publishes_everything_despite_a_lone_surrogate(write, tmp_path, monkeypatch):
    write("spec.yaml", SURROGATE_SPEC)
    (tmp_path / "t.jsonl").write_text(CUT)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with FakeGitHub() as github:
        code = action_main(action_environment(tmp_path, github.url), out)
        [comment] = github.comments("octo/agent", 7)
        assert github.state.violations == []
    assert code == 1, out.getvalue()
    assert "\ufffd" in comment["body"] and "\ufffd" in out.getvalue()
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["summary"]["failed"] == 1
    assert "\ufffd" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "status<<" in (tmp_path / "output.txt").read_text(encoding="utf-8")


def test_an_unwritable_github_output_is_a_warning_and_the_results_file_is_still_written(
    write, write_traces, tmp_path, monkeypatch
):
    write("spec.yaml", SPEC)
    write_traces("t.jsonl", GOOD)
    (tmp_path / "outputs-dir").mkdir()
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with FakeGitHub() as github:
        code = action_main(action_environment(tmp_path, github.url, GITHUB_OUTPUT=str(tmp_path / "outputs-dir")), out)
    log = out.getvalue()
    assert code == 0, log
    assert json.loads((tmp_path / "results.json").read_text())["summary"]["passed"] == 1
    assert (
        f"::warning title=AgentCI::Could not write the step outputs to {tmp_path / 'outputs-dir'}: Is a directory."
        in log
    )


# Report files are never written through a symbolic link: the workspace is a checkout the pull request controls.


def test_a_planted_link_as_the_html_report_or_results_file_is_refused_and_its_target_kept(workspace, api):
    traces(workspace, "No refunds.")
    victim = workspace.parent / "victim.txt"
    victim.write_text("untouched")
    (workspace / "out").mkdir()
    (workspace / "out" / "agentci-results.html").symlink_to(victim)
    code, log = run_action(environment(workspace, api.url))
    assert code == 2 and victim.read_text() == "untouched"  # a link on the way is an error (exit 2), nothing written
    assert "out/agentci-results.html is a symbolic link, and AgentCI never writes through one" in log
    assert json.loads((workspace / "out" / "agentci-results.json").read_text())["summary"]["total"] == 2
    (workspace / "out" / "agentci-results.json").unlink()
    (workspace / "out" / "agentci-results.json").symlink_to(victim)
    code, log = run_action(environment(workspace, api.url))
    assert code == 2 and victim.read_text() == "untouched"  # an unwritable results file is exit 2


def test_a_planted_directory_link_on_the_way_to_a_report_is_refused(workspace, api):
    traces(workspace, "No refunds.")
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    (workspace / "out").symlink_to(elsewhere, target_is_directory=True)
    code, log = run_action(environment(workspace, api.url))
    assert code == 2 and list(elsewhere.iterdir()) == []
    assert "could not write the results file to out/agentci-results.json: out is a symbolic link" in log


def test_the_cli_writes_no_report_through_a_link_but_into_real_directories_it_makes(write, write_traces, tmp_path):
    spec, traces = write("spec.yaml", SPEC), write_traces("t.jsonl", GOOD)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (tmp_path / "report.json").symlink_to(victim)
    done = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json", "--output", tmp_path / "report.json")
    assert done.returncode == 2 and victim.read_text() == "untouched"
    assert done.stderr.strip().endswith("is a symbolic link, and AgentCI never writes through one (remove it)")
    deep = tmp_path / "made" / "for" / "it.json"
    assert run_cli("test", "--spec", spec, "--traces", traces, "--format", "json", "--output", deep).returncode == 0
    assert json.loads(deep.read_text())["summary"]["passed"] == 1


def test_a_link_planted_beside_the_verdict_cache_is_never_written_through(tmp_path, monkeypatch):
    from agentci_action.engine.judge.cache import VerdictCache
    from agentci_action.engine.judge.verdict import Verdict

    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (tmp_path / ".agentci").mkdir()
    (tmp_path / ".agentci" / "judge-cache.json.partial").symlink_to(victim)  # the old fixed temporary name
    cache = VerdictCache(tmp_path / ".agentci" / "judge-cache.json")
    cache.put("k" * 64, "m", Verdict(score=5, label="pass", rationale="r"))
    assert cache.save() and victim.read_text() == "untouched"
    assert VerdictCache(tmp_path / ".agentci" / "judge-cache.json").get("k" * 64).label == "pass"


@pytest.fixture
def api():
    with FakeGitHub() as fake:
        yield fake

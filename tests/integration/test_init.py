"""`agentci init` writes a starter that validates and passes, and never overwrites.

With `--command`, a spec with a runner and a workflow that runs the agent; without, an example trace and a workflow that
evaluates committed traces. Each workflow is pinned and least-privilege, and its commented alternatives are valid when
uncommented.
"""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, run_cli

from agentci_action.cli.cmd_init import render
from agentci_action.spec.names import SPEC_FILE
from agentci_action.trace.canonical import EXAMPLE_KEY

AGENT = """\
import json
import sys

job = json.load(sys.stdin)
print(json.dumps({"final_answer": f"I can help with {job['query']}", "tool_calls": [{"name": "search"}]}))
"""


def workflow_of(directory: Path) -> dict:
    return yaml.safe_load((directory / ".github" / "workflows" / "agentci.yml").read_text())


def steps_using(flow: dict, action: str) -> list[dict]:
    return [s for job in flow["jobs"].values() for s in job["steps"] if s.get("uses", "").startswith(action + "@")]


def test_init_writes_a_working_starter(tmp_path):
    result = run_cli("init", tmp_path)
    assert result.returncode == 0, result.stderr
    spec, trace, workflow = (
        tmp_path / "agentci_spec.yaml",
        tmp_path / "traces" / "example.jsonl",
        tmp_path / ".github" / "workflows" / "agentci.yml",
    )
    assert all(p.is_file() for p in (spec, trace, workflow))
    assert run_cli("validate", spec).returncode == 0
    tested = run_cli("test", "--spec", spec, "--traces", tmp_path / "traces")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "PASS: 1 query · 1 passed" in tested.stdout
    assert "runner" not in yaml.safe_load(spec.read_text())  # commented out: no command was given
    flow = yaml.safe_load(workflow.read_text())
    assert flow["permissions"] == {}
    assert flow["jobs"]["agentci"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    checkout, step, upload = (flow["jobs"]["agentci"]["steps"][i] for i in (0, -2, -1))
    assert checkout["with"] == {"persist-credentials": False}
    assert step["uses"].startswith("agentci/action@") and step["with"] == {"spec": SPEC_FILE, "traces": "traces/"}
    assert not steps_using(flow, "agentci/action/run")  # commented out, where it would go
    assert "# - uses: agentci/action/run@v2" in workflow.read_text()
    assert upload["uses"].startswith("actions/upload-artifact@")  # the HTML report the comment links to
    assert upload["with"]["path"] == "${{ steps." + step["id"] + ".outputs.html-report-path }}"
    assert step["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"


def test_init_with_a_command_writes_a_runner_and_a_workflow_that_runs_the_agent(tmp_path):
    result = run_cli("init", tmp_path, "--command", "python agent.py --mode 'ci run'")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "traces").exists()  # the agent makes the traces: no example to mistake for them
    assert f"  agentci test --spec {tmp_path / SPEC_FILE}   # replays them: no key, no spend" in result.stdout
    spec = yaml.safe_load((tmp_path / SPEC_FILE).read_text())
    assert spec["runner"] == {"command": "python agent.py --mode 'ci run'", "timeout_s": 120, "replay": {}}
    flow = workflow_of(tmp_path)
    # the check to require is the job's name, which GitHub takes from its id when it has no `name:`
    ((job_id, job),) = flow["jobs"].items()
    assert "name" not in job and f"require its\n  `{job_id}` check on the default branch" in result.stdout
    (run,) = steps_using(flow, "agentci/action/run")
    (evaluate,) = steps_using(flow, "agentci/action")
    steps = flow["jobs"]["agentci"]["steps"]
    assert steps.index(run) < steps.index(evaluate)
    assert run["with"] == {"spec": SPEC_FILE}  # its output is the action's traces
    assert evaluate["with"] == {"spec": SPEC_FILE, "traces": "${{ steps." + run["id"] + ".outputs.traces }}"}
    assert evaluate["if"] == "${{ !cancelled() }}"  # the runs that finished are evaluated when some failed
    assert "env" not in run  # replayed: no model key for the agent, a fork's pull request runs the same
    text = (tmp_path / ".github" / "workflows" / "agentci.yml").read_text()
    assert "\n          # traces: traces/\n" in text  # the committed-traces layout, commented out where it goes
    assert "Settings → Secrets and variables → Actions" in text

    (tmp_path / "agent.py").write_text(AGENT)
    tested = run_cli("test", cwd=tmp_path)  # the runner runs the agent on the example query
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "PASS: 1 query · 1 passed" in tested.stdout
    # The first run names the command that saves a baseline (the runner's, not the traces' folder it wrote), which
    # runs as printed; the next run compares with it.
    (save,) = re.findall(
        r"no baseline trace to compare with, .*: `(agentci save [^`]+)` saves these runs", tested.stdout
    )
    assert save == f"agentci save --spec {SPEC_FILE} --version v1"
    # `agentci baselines` says the same before there is one: runs the agent and records it
    (listed,) = re.findall(
        r"no baselines in \S+ yet; `(agentci save [^`]+)` runs the agent", run_cli("baselines", cwd=tmp_path).stdout
    )
    assert listed == save
    saved = run_cli(*shlex.split(save)[1:], cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert "v1" in run_cli("baselines", cwd=tmp_path).stdout.splitlines()[1]
    again = run_cli("test", cwd=tmp_path)
    assert again.returncode == 0 and "no baseline trace" not in again.stdout and "Unchanged (1)" in again.stdout


@pytest.mark.parametrize("command", ["", "python 'agent.py"])
def test_a_command_that_cannot_run_is_refused_before_anything_is_written(tmp_path, command):
    result = run_cli("init", tmp_path, "--command", command)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: --command: command ")
    assert list(tmp_path.iterdir()) == []


def test_the_example_trace_is_never_saved_as_a_baseline(tmp_path):
    """Saved, init's example would be the reference of the first real run: a diff against another agent's query."""
    assert run_cli("init", tmp_path).returncode == 0
    example = json.loads((tmp_path / "traces" / "example.jsonl").read_text())
    assert EXAMPLE_KEY in example["metadata"]
    saved = run_cli("save", "--traces", "traces/", "--version", "v1", cwd=tmp_path)
    assert saved.returncode == 2 and "Traceback" not in saved.stderr
    assert saved.stderr.splitlines() == [
        "error: traces/example.jsonl:1: agentci init's example trace, not a run of your agent: a baseline is the run "
        "of your agent that later runs are compared with; save one from your agent's own traces (and delete the "
        "example query and its trace)"
    ]
    assert not (tmp_path / "baselines").exists()
    forced = run_cli("save", "--traces", "traces/", "--version", "v1", "--force-save", cwd=tmp_path)
    assert forced.returncode == 2 and not (tmp_path / "baselines").exists()


def test_test_without_traces_after_init_points_at_the_recorded_ones(tmp_path):
    """The starter has no runner: `agentci test` alone cannot run the agent, and says which --traces to pass."""
    assert run_cli("init", tmp_path).returncode == 0
    alone = run_cli("test", cwd=tmp_path)
    assert alone.returncode == 2 and "pass recorded traces with --traces (e.g. --traces traces/)" in alone.stderr
    (tmp_path / "traces" / "example.jsonl").unlink()
    (tmp_path / "traces").rmdir()
    assert "--traces (e.g." not in run_cli("test", cwd=tmp_path).stderr  # no folder there, no example


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path):
    (tmp_path / "agentci_spec.yaml").write_text("mine\n")
    result = run_cli("init", tmp_path)
    assert result.returncode == 2
    assert "agentci_spec.yaml: already exists" in result.stderr
    assert (tmp_path / "agentci_spec.yaml").read_text() == "mine\n"
    assert not (tmp_path / "traces").exists() and not (tmp_path / ".github").exists()


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_init_into_a_file_is_a_named_error_not_a_traceback(tmp_path):
    (tmp_path / "afile").write_text("x\n")
    result = run_cli("init", "afile", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "error: afile: is a file where agentci init needs a directory (move it away first)"
    assert listing(tmp_path) == ["afile"]


def test_a_file_in_the_way_of_one_target_writes_none_of_them(tmp_path):
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "workflows").write_text("not a directory\n")
    result = run_cli("init", tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{tmp_path / '.github' / 'workflows'}: is a file where agentci init needs a directory" in result.stderr
    assert listing(tmp_path) == [".github", ".github/workflows"]  # no spec, no traces/: a rerun is not refused
    (tmp_path / ".github" / "workflows").unlink()
    assert run_cli("init", tmp_path).returncode == 0


def test_a_write_failing_midway_leaves_nothing_behind(tmp_path, monkeypatch):
    from agentci_action._util.errors import InputError
    from agentci_action.cli import cmd_init as init

    monkeypatch.setattr(
        init, "FILES", {**init.FILES, "agentci.yml": "deep/" + "n" * 300 + ".yml"}
    )  # the OS refuses the name
    with pytest.raises(InputError) as refused:
        init.init_project(tmp_path)
    assert "cannot write the starter files" in str(refused.value) and "File name too long" in str(refused.value)
    assert listing(tmp_path) == []


# Optional blocks in the workflow template: runs of `#  ` lines (a `#` before YAML indented as a job).
OPTIONAL_BLOCK = re.compile(r"(?:^#  .*\n)+", re.M)
TEMPLATE = ROOT / "agentci_action" / "templates" / "agentci.yml"
LAYOUTS = {"runner": "python agent.py", "traces": None}  # the layout → init's --command
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*")


def check_workflow(flow: dict) -> None:
    """What GitHub (and `act`) need of it.

    Jobs with runs-on and steps, steps that use or run, known needs, matrix variables a job defines, and only the
    action's declared inputs (its required ones present); and what zizmor asks: no default permissions, each job its
    own, no credentials persisted by a checkout.
    """
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    run_inputs = yaml.safe_load((ROOT / "run" / "action.yml").read_text())["inputs"]
    assert flow["permissions"] == {}
    for name, job in flow["jobs"].items():
        assert job.get("runs-on") and job.get("steps") and "permissions" in job, name
        needs = job.get("needs") or []
        assert set([needs] if isinstance(needs, str) else needs) <= set(flow["jobs"]) - {name}, name
        matrix = set((job.get("strategy") or {}).get("matrix") or {})
        assert set(re.findall(r"matrix\.(\w+)", yaml.safe_dump(job))) <= matrix, name
        ids = {step.get("id") for step in job["steps"]}
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), (name, step)
            given = set(step.get("with") or {})
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
            if step.get("uses", "").startswith("agentci/action@"):
                assert given <= set(inputs), (name, given - set(inputs))
                assert "spec" in given and ("traces" in given or "merge" in given), name
                assert set(re.findall(r"steps\.([\w-]+)\.", str(step["with"]))) <= ids, name
            if step.get("uses", "").startswith("agentci/action/run@"):
                assert given <= set(run_inputs) and "spec" in given and step.get("id"), name


def third_party_uses(text: str) -> list[str]:
    return [u for u in re.findall(r"^[#\s]*-?\s*uses:\s*(\S+.*)$", text, re.M) if not u.startswith("agentci/")]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_layout_and_each_optional_block_uncommented_is_a_valid_pinned_workflow(layout):
    text = render(TEMPLATE.read_text(), LAYOUTS[layout])
    assert "#[" not in text
    for uses in third_party_uses(text):  # commented ones too: they are uncommented as they are
        assert PINNED.fullmatch(uses), f"not pinned by SHA with its version: {uses}"
    blocks = OPTIONAL_BLOCK.findall(text)
    assert len(blocks) == 4  # the schedule, the matrix, the shard/merge layout, the scheduled drift job
    check_workflow(yaml.safe_load(text))
    jobs = {}
    for block in blocks:
        uncommented = "".join(line[1:] + "\n" for line in block.splitlines())
        flow = yaml.safe_load(text.replace(block, uncommented))
        check_workflow(flow)
        added = set(flow["jobs"]) - {"agentci"}
        if "schedule:" in block:  # the drift job's trigger: no job of its own
            continue
        assert added and not added & set(jobs)
        jobs.update({name: flow["jobs"][name] for name in added})
    assert any("shard" in (step.get("with") or {}) for job in jobs.values() for step in job["steps"])
    assert any("merge" in (step.get("with") or {}) for job in jobs.values() for step in job["steps"])
    assert any("matrix" in (job.get("strategy") or {}) and "spec" in job["strategy"]["matrix"] for job in jobs.values())
    runs_agent = [
        s for job in jobs.values() for s in job["steps"] if s.get("uses", "").startswith("agentci/action/run@")
    ]
    assert len(runs_agent) == (2 if layout == "runner" else 0)  # the matrix's and the shards' own run steps


def test_the_other_layouts_are_commented_out_where_they_go():
    """The two layouts differ only in lines one has and the other has commented out (`# ` after the same lead).

    The runner's run step and the action's `traces:` among them; the capture step, uncommented, runs the user's program
    under `agentci collect`.
    """
    traces, runner = render(TEMPLATE.read_text(), None), render(TEMPLATE.read_text(), "python agent.py")
    pairs = [(a, b) for a, b in zip(traces.splitlines(), runner.splitlines(), strict=True) if a != b]
    for a, b in pairs:
        on, off = (a, b) if len(a) < len(b) else (b, a)
        commented_at = [k for k in range(len(off)) if off[k : k + 2] == "# " and not off[:k].strip("# ")]
        assert any(off[:k] + off[k + 2 :] == on for k in commented_at), (a, b)
    assert "      - uses: agentci/action/run@v2" in {b for _, b in pairs}
    assert ("          traces: traces/", "          # traces: traces/") in pairs
    capture = re.search(r"^      # - run: \|\n(?:      #     .*\n)+", traces, re.M)
    assert capture, "the capture layout's step"
    flow = yaml.safe_load(traces.replace(capture[0], capture[0].replace("      # ", "      ")))
    check_workflow(flow)
    (collect,) = [s for s in flow["jobs"]["agentci"]["steps"] if "run" in s]
    assert (
        'pipx install "agentci-action>=2,<3"' in collect["run"]
        and "agentci collect --output traces/ --" in collect["run"]
    )


def test_zizmor_finds_nothing_in_either_workflow_but_the_agentci_refs(tmp_path):
    """Third-party actions are pinned by SHA.

    `agentci/action@v2` and `agentci/action/run@v2` are tags the release moves to a commit that pins the image by digest
    (docs/maintainers/releasing.md), so zizmor's unpinned-uses on them is all.
    """
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    assert zizmor, "zizmor is in the test extras"
    for layout, command in LAYOUTS.items():
        path = tmp_path / layout / ".github" / "workflows" / "agentci.yml"
        path.parent.mkdir(parents=True)
        path.write_text(render(TEMPLATE.read_text(), command))
        done = subprocess.run(
            [zizmor, "--offline", "--min-severity", "low", "--format", "json", str(path)],
            capture_output=True,
            text=True,
        )
        findings = [(f["ident"], f["locations"][-1]["concrete"]["feature"]) for f in json.loads(done.stdout or "[]")]
        assert {ident for ident, _ in findings} <= {"unpinned-uses"}, findings
        assert all(feature.startswith("agentci/action") for _, feature in findings), findings


def test_the_readme_shows_the_workflow_init_writes_for_a_runner():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The workflow to copy", 1)[1].split("\n## ", 1)[0]
    shown = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S)[1])
    written = yaml.safe_load(render(TEMPLATE.read_text(), "python agent.py"))
    steps = written["jobs"]["agentci"].pop("steps")
    assert shown["jobs"]["agentci"].pop("steps") == [
        s for s in steps if not s.get("uses", "").startswith("actions/upload")
    ]
    assert shown == written  # the README leaves out only the HTML report's upload, and says so

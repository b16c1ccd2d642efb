"""`agentci init` writes a starter that validates and passes, and never overwrites."""

import re

import pytest
import yaml
from conftest import ROOT, run_cli


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
    flow = yaml.safe_load(workflow.read_text())
    assert flow["permissions"] == {}  # none by default: the job asks for what it needs (zizmor: tests/test_release.py)
    assert flow["jobs"]["agentci"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert flow["jobs"]["agentci"]["steps"][0]["with"] == {"persist-credentials": False}  # no token in .git/config
    step, upload = flow["jobs"]["agentci"]["steps"][-2:]
    assert step["uses"].startswith("agentci/action@") and step["with"]["spec"] == "agentci_spec.yaml"
    assert upload["uses"].startswith("actions/upload-artifact@")  # the HTML report the comment links to
    assert upload["with"]["path"] == "${{ steps." + step["id"] + ".outputs.html-report-path }}"
    assert step["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"


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


def check_workflow(flow: dict) -> None:
    """What GitHub (and `act`) need of it: jobs with runs-on and steps, steps that use or run, known needs,
    matrix variables a job defines, and only the action's declared inputs (its required ones present)."""
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    for name, job in flow["jobs"].items():
        assert job.get("runs-on") and job.get("steps"), name
        needs = job.get("needs") or []
        assert set([needs] if isinstance(needs, str) else needs) <= set(flow["jobs"]) - {name}, name
        matrix = set((job.get("strategy") or {}).get("matrix") or {})
        assert set(re.findall(r"matrix\.(\w+)", yaml.safe_dump(job))) <= matrix, name
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), (name, step)
            if step.get("uses", "").startswith("agentci/action@"):
                given = set(step.get("with") or {})
                assert given <= set(inputs), (name, given - set(inputs))
                assert "spec" in given and ("traces" in given or "merge" in given), name


def test_the_workflow_template_and_each_optional_block_uncommented_are_valid():
    text = TEMPLATE.read_text()
    blocks = OPTIONAL_BLOCK.findall(text)
    assert len(blocks) == 2  # the matrix, and the shard/merge layout
    check_workflow(yaml.safe_load(text))
    jobs = {}
    for block in blocks:
        uncommented = "".join(line[1:] + "\n" for line in block.splitlines())
        flow = yaml.safe_load(text.replace(block, uncommented))
        check_workflow(flow)
        added = set(flow["jobs"]) - {"agentci"}
        assert added and not added & set(jobs)
        jobs.update({name: flow["jobs"][name] for name in added})
    assert any("shard" in (step.get("with") or {}) for job in jobs.values() for step in job["steps"])
    assert any("merge" in (step.get("with") or {}) for job in jobs.values() for step in job["steps"])
    assert any("matrix" in (job.get("strategy") or {}) and "spec" in job["strategy"]["matrix"] for job in jobs.values())

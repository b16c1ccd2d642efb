"""The README's matrix + merge workflow, run step by step: its commands shard, merge and report as documented."""

import re
import shlex
import shutil
import xml.etree.ElementTree as ET

import yaml

from conftest import ROOT, run_cli


def workflow() -> dict:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Sharding a large suite across a matrix", 1)[1]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def agentci_commands(job: dict, **matrix: str) -> list[list[str]]:
    """The job's `agentci ...` run steps as argument lists, with ${{ matrix.X }} filled in."""
    commands = []
    for step in job["steps"]:
        command = step.get("run", "")
        if command.startswith("agentci "):
            for name, value in matrix.items():
                command = command.replace(f"${{{{ matrix.{name} }}}}", value)
            commands.append(shlex.split(command)[1:])
    return commands


def test_the_readme_workflow_shards_and_merges_the_example(tmp_path):
    flow = workflow()["jobs"]
    example = ROOT / "examples" / "repeated-runs"
    shutil.copy(example / "agentci_spec.yaml", tmp_path / "agentci_spec.yaml")
    shutil.copytree(example / "traces", tmp_path / "traces")
    shards = flow["shard"]["strategy"]["matrix"]["shard"]
    assert flow["merge"]["needs"] == "shard" and "!cancelled()" in flow["merge"]["if"]
    upload = next(step for step in flow["shard"]["steps"] if step.get("uses", "").startswith("actions/upload-artifact"))
    download = next(step for step in flow["merge"]["steps"] if step.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["merge-multiple"] is True and upload["with"]["path"] == download["with"]["path"] == "results/"
    for shard in shards:
        (args,) = agentci_commands(flow["shard"], shard=str(shard))
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [f"shard-{i}.json" for i in shards]
    (merge,) = agentci_commands(flow["merge"])
    merged = run_cli(*merge, cwd=tmp_path)
    whole = run_cli("test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--format", "junit", cwd=tmp_path)
    assert merged.returncode == whole.returncode == 1, merged.stderr
    assert (tmp_path / "agentci.xml").read_text() == whole.stdout
    assert ET.fromstring(whole.stdout.encode()).get("tests") == "4"

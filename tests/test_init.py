"""`agentci init` writes a starter that validates and passes, and never overwrites."""

import yaml

from conftest import run_cli


def test_init_writes_a_working_starter(tmp_path):
    result = run_cli("init", tmp_path)
    assert result.returncode == 0, result.stderr
    spec, trace, workflow = tmp_path / "agentci_spec.yaml", tmp_path / "traces" / "example.jsonl", tmp_path / ".github" / "workflows" / "agentci.yml"
    assert all(p.is_file() for p in (spec, trace, workflow))
    assert run_cli("validate", spec).returncode == 0
    tested = run_cli("test", "--spec", spec, "--traces", tmp_path / "traces")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "PASS: 1 queries · 1 passed" in tested.stdout
    flow = yaml.safe_load(workflow.read_text())
    assert flow["permissions"] == {"contents": "read", "pull-requests": "write"}
    step = flow["jobs"]["agentci"]["steps"][-1]
    assert step["uses"].startswith("agentci/action@") and step["with"]["spec"] == "agentci_spec.yaml"
    assert step["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path):
    (tmp_path / "agentci_spec.yaml").write_text("mine\n")
    result = run_cli("init", tmp_path)
    assert result.returncode == 2
    assert "agentci_spec.yaml: already exists" in result.stderr
    assert (tmp_path / "agentci_spec.yaml").read_text() == "mine\n"
    assert not (tmp_path / "traces").exists() and not (tmp_path / ".github").exists()

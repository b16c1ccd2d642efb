"""The README's install line, `pip install "agentci-action @ git+https://github.com/agentci/action@v2"`, run with a
local clone in place of GitHub: the requirement form parses, pip builds the package from a tagged checkout, and the
installed command works from the wheel alone (its schema and `init` templates included), not from this checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from conftest import ROOT

from agentci_action import __version__


def _documented_requirement() -> str:
    """The requirement string the README tells a newcomer to install."""
    found = re.search(
        r'pip install "(agentci-action @ git\+https://github\.com/[^"]+)"', ROOT.joinpath("README.md").read_text()
    )
    assert found, "the README's install line is gone or changed form: update this test with it"
    return found.group(1)


def test_the_readme_install_line_builds_a_working_package_from_a_tagged_clone(tmp_path: Path):
    requirement = _documented_requirement()
    ref = requirement.rsplit("@", 1)[1]
    clone = tmp_path / "action"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "tag", ref], check=True)
    local = re.sub(r"git\+https://github\.com/[^@]+", f"git+file://localhost{clone}", requirement)

    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), local],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("agentci_action-*.whl")
    assert wheel.name.startswith(f"agentci_action-{__version__}-")

    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    python = target / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True
    ).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, wheel], check=True)

    # The dependencies come from this test's environment, after the new environment's own site-packages.
    env = {**os.environ, "PYTHONPATH": sysconfig.get_path("purelib"), "PYTHONSAFEPATH": "1"}
    where = subprocess.run(
        [python, "-c", "import agentci_action; print(agentci_action.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert where.stdout.startswith(site), where.stdout + where.stderr

    agentci = [python, "-m", "agentci_action"]
    version = subprocess.run([*agentci, "--version"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert version.returncode == 0 and __version__ in version.stdout, version.stderr
    (entry_points,) = Path(site).glob("agentci_action-*.dist-info/entry_points.txt")
    assert "agentci = agentci_action.cli.main:main" in entry_points.read_text()

    project = tmp_path / "project"
    project.mkdir()
    for command in (["init"], ["validate", "agentci_spec.yaml"], ["test", "--traces", "traces"]):
        run = subprocess.run([*agentci, *command], capture_output=True, text=True, env=env, cwd=project)
        assert run.returncode == 0, f"agentci {' '.join(command)}: {run.stdout}{run.stderr}"
    assert (project / ".github" / "workflows" / "agentci.yml").is_file()

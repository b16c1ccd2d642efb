"""One install story.

`pip install agentci-action` (with its extras named) wherever an install is named, the unrelated `agentci` project named
in the README, and the package a clone builds working from the wheel alone (its schema and `init` templates included),
not from this checkout.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

from helpers import ROOT

from agentci_action import __version__
from agentci_action._util.extras import EXTRA_OF

PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").rglob("*.md"))]
# `pip install X`, `pipx install X`, `uv tool install X`: what is installed, quotes and version ranges aside
INSTALL = re.compile(r"""(?:pip|pipx|uv tool) install (?:-[-\w]+ )*["']?(agentci[\w\-]*(?:\[[\w,]+\])?)""")
CLASH = "`pip install agentci` does not install this"  # how the README and getting started name the other project
NAMED = re.compile(r"agentci-action(?:\[(?P<extras>[\w,]+)\])?")


def installs() -> dict[str, list[str]]:
    """Where AgentCI is installed by name → what is installed.

    The docs, the image's help, init's workflow, the message of a missing extra.
    """
    from agentci_action.cli.cmd_init import render

    texts = {str(page.relative_to(ROOT)): page.read_text(encoding="utf-8") for page in PAGES}
    texts["entrypoint.py"] = (ROOT / "entrypoint.py").read_text()
    texts["agentci init's workflow"] = render((ROOT / "agentci_action/templates/agentci.yml").read_text(), None)
    texts["agentci_action/_util/extras.py"] = (
        (ROOT / "agentci_action/_util/extras.py").read_text().replace("{extra}", "judge")
    )
    texts = {where: text.replace(CLASH, "") for where, text in texts.items()}  # the one install never to run
    return {where: INSTALL.findall(text) for where, text in texts.items() if INSTALL.search(text)}


def test_every_install_named_is_agentci_action_with_known_extras():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]) - {"test"}
    assert {"judge", "github", "text", "all"} <= extras and set(EXTRA_OF.values()) <= extras
    found = installs()
    assert {"README.md", "docs/guides/getting-started.md", "docs/reference/install.md", "entrypoint.py"} <= set(found)
    for where, names in found.items():
        for name in names:
            named = NAMED.fullmatch(name)
            assert named, f"{where}: `install {name}` is not agentci-action"
            assert set((named["extras"] or "").split(",")) - {""} <= extras, f"{where}: {name}"
    for page in PAGES:
        assert "git+https://github.com/agentci" not in page.read_text(encoding="utf-8"), page.name


def test_the_readme_names_the_unrelated_agentci_and_the_extras_a_judge_and_the_comment_need():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert CLASH in readme
    for extra in ("judge", "github", "text", "all"):
        assert f"[{extra}]" in readme, extra
    # without the judge extra, the error names it (tests/unit/util/test_extras.py runs it)
    assert "needs the optional dependency" in (ROOT / "agentci_action/_util/extras.py").read_text()


def test_a_clone_builds_a_working_package(tmp_path: Path):
    clone = tmp_path / "action"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)

    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(clone)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("agentci_action-*.whl")
    assert wheel.name.startswith(f"agentci_action-{__version__}-")  # the distribution agentci-action

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

"""requirements.lock, which the action's image installs with --require-hashes.

Every runtime dependency of pyproject.toml (and of its extras) at one version its range allows, every package they pull
in, each with a hash, nothing left to float.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

from helpers import ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# One entry: `name==version \` then one or more `--hash=sha256:<64 hex>` lines.
ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s*\\\n\s+--hash=sha256:[0-9a-f]{64})+)", re.M)


def lock() -> dict[str, str]:
    text = (ROOT / "requirements.lock").read_text()
    entries = {canonicalize_name(name): version for name, version, _ in ENTRY.findall(text)}
    requirement_lines = [
        line for line in text.splitlines() if line and not line[0].isspace() and not line.startswith("#")
    ]
    assert len(entries) == len(requirement_lines), "an entry without a sha256 hash, or a line that is not name==version"
    return entries


def requirements() -> list[Requirement]:
    """pyproject.toml's runtime dependencies and every extra but `test` (the image installs them all).

    Without the extras' references to the package itself.
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] + [
        line for extra, group in project["optional-dependencies"].items() if extra != "test" for line in group
    ]
    return [r for r in map(Requirement, lines) if canonicalize_name(r.name) != canonicalize_name(project["name"])]


def test_pyproject_declares_ranges_not_pins():
    """The package installs beside an agent: each dependency a range with a lower bound, none an exact pin."""
    for requirement in requirements():
        operators = {spec.operator for spec in requirement.specifier}
        assert "==" not in operators and ">=" in operators, f"{requirement}: declare a compatible range"


def test_the_lock_holds_every_pyproject_requirement_at_a_version_it_allows():
    locked = lock()
    outside = {
        str(r): locked.get(canonicalize_name(r.name))
        for r in requirements()
        if locked.get(canonicalize_name(r.name)) is None or not r.specifier.contains(locked[canonicalize_name(r.name)])
    }
    assert outside == {}, "regenerate requirements.lock with the command at its top"


def test_the_lock_holds_every_dependency_of_what_it_locks():
    """Closed under Requires-Dist, read from the installed distributions, which must be the locked versions.

    Markers are evaluated here, Python 3.11 on Linux like the image.
    """
    locked = lock()
    missing = []
    for name, version in locked.items():
        assert metadata.version(name) == version, f"{name}: installed {metadata.version(name)}, locked {version}"
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            applies = requirement.marker is None or requirement.marker.evaluate({"extra": ""})
            if applies and canonicalize_name(requirement.name) not in locked:
                missing.append(f"{requirement.name} (required by {name})")
    assert missing == []


def test_the_image_installs_only_from_the_lock():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^RUN pip install --require-hashes .*-r /tmp/requirements\.lock", dockerfile, re.M)
    assert dockerfile.count("pip install") == 1
    assert "!requirements.lock" in (ROOT / ".dockerignore").read_text().splitlines()

"""requirements.lock, which the action's image installs with --require-hashes: every runtime dependency of
pyproject.toml at its pinned version, every package the pins pull in, each with a hash, nothing left to float."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
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


def pins() -> dict[str, str]:
    """pyproject.toml's runtime dependencies: name → exact version (each must be pinned with ==)."""
    found = {}
    for line in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        requirement = Requirement(line)
        [spec] = requirement.specifier
        assert spec.operator == "==", f"{line}: pin runtime dependencies exactly"
        found[canonicalize_name(requirement.name)] = spec.version
    return found


def test_the_lock_holds_every_pyproject_pin_at_its_version():
    locked = lock()
    assert {name: locked.get(name) for name in pins()} == pins()


def test_the_lock_holds_every_dependency_of_what_it_locks():
    """Closed under Requires-Dist (markers evaluated here, Python 3.11 on Linux like the image), read from the
    installed distributions, which must be the locked versions."""
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
    assert re.search(r"^RUN pip install --require-hashes -r /tmp/requirements\.lock", dockerfile, re.M)
    assert dockerfile.count("pip install") == 1
    assert "!requirements.lock" in (ROOT / ".dockerignore").read_text().splitlines()

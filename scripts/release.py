"""Release tooling, run by .github/workflows/release.yml (docs/releasing.md):

    python scripts/release.py check v2.1.0          the tag names this package's version and CHANGELOG has its section
    python scripts/release.py notes 2.1.0           print that CHANGELOG section (the GitHub release's notes)
    python scripts/release.py pin-image 2.1.0 sha256:<64 hex> [--image ghcr.io/agentci/action] [--action action.yml]
                                                    make action.yml pull the published image instead of building

Development keeps `image: Dockerfile`; only the release commit, which the workflow makes on top of the tagged
commit, names the image by version and digest, so a user's job pulls it and never builds.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(r"2\.(0|[1-9]\d*)\.(0|[1-9]\d*)")  # the action's major is 2: tags v2.M.P
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
IMAGE = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)+")  # ghcr.io/owner/name
IMAGE_LINE = re.compile(r"^(?P<indent>[ \t]+)image:[ \t]*(?P<value>\S.*?)[ \t]*$", re.M)


class ReleaseError(ValueError):
    """A release input that would publish something wrong; the message says what."""


def package_version(root: Path = ROOT) -> str:
    text = (root / "agentci_action" / "_version.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, re.M).group(1)


def changelog_section(version: str, changelog: str) -> str:
    """The body of `## [version] - date` up to the next `## ` heading, stripped; ReleaseError when absent or empty."""
    heading = re.search(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}[ \t]*$", changelog, re.M)
    if heading is None:
        raise ReleaseError(f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' section")
    rest = changelog[heading.end() :]
    following = re.search(r"^## |^\[[^\]]+\]: ", rest, re.M)
    body = (rest[: following.start()] if following else rest).strip()
    if not body:
        raise ReleaseError(f"CHANGELOG.md's section for {version} is empty")
    return body


def check_tag(tag: str, version: str, changelog: str) -> None:
    """A release tag is v + the package's version, of the form v2.M.P, with a CHANGELOG section."""
    if not re.fullmatch(r"v" + VERSION.pattern, tag):
        raise ReleaseError(f"{tag!r} is not a release tag of the form v2.M.P")
    if tag != f"v{version}":
        raise ReleaseError(f"tag {tag} but the package's version is {version} (agentci_action/_version.py)")
    changelog_section(version, changelog)


def pin_image(action_yml: str, image: str, version: str, digest: str) -> str:
    """action.yml with `runs.image` = docker://IMAGE:VERSION@DIGEST; every other byte unchanged.

    The digest makes the reference immutable (a re-pushed tag changes nothing); the version keeps it legible.
    """
    if not VERSION.fullmatch(version):
        raise ReleaseError(f"version {version!r} is not 2.M.P")
    if not DIGEST.fullmatch(digest):
        raise ReleaseError(f"digest {digest!r} is not sha256: and 64 lowercase hex digits")
    if not IMAGE.fullmatch(image):
        raise ReleaseError(f"image {image!r} is not a lowercase registry/owner/name")
    lines = IMAGE_LINE.findall(action_yml)
    if len(lines) != 1:
        raise ReleaseError(f"action.yml must have exactly one `image:` line under `runs:`, found {len(lines)}")
    return IMAGE_LINE.sub(lambda m: f"{m['indent']}image: docker://{image}:{version}@{digest}", action_yml)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="the tag matches the version and CHANGELOG has its section")
    check.add_argument("tag")
    notes = commands.add_parser("notes", help="print the CHANGELOG section of a version")
    notes.add_argument("version")
    pin = commands.add_parser("pin-image", help="rewrite action.yml's runs.image for a published image")
    pin.add_argument("version")
    pin.add_argument("digest")
    pin.add_argument("--image", default="ghcr.io/agentci/action")
    pin.add_argument("--action", type=Path, default=ROOT / "action.yml")
    args = parser.parse_args(argv)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    try:
        if args.command == "check":
            check_tag(args.tag, package_version(), changelog)
        elif args.command == "notes":
            print(changelog_section(args.version, changelog))
        else:
            text = args.action.read_text(encoding="utf-8")
            args.action.write_text(pin_image(text, args.image, args.version, args.digest), encoding="utf-8")
    except ReleaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

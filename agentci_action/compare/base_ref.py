"""The baseline as it is on the base branch (`--baseline-ref REF`, the action's `baseline: base`).

The trace paths the run was given and the spec's baseline_dir are read as they are at the base commit: through git
when the checkout has that commit, else (a shallow checkout, say) through GitHub's contents API with the token
(PyGithub). The files are copied into a scratch directory (every path checked to stay inside it) and read there by
the ordinary loaders, then evaluated by the current spec like any baseline:

- without a named version, the traces at the base commit (at the run's own trace paths) are the baseline, as a
  saved version's runs are; when the base commit has none there, its newest saved version whose precheck passed;
- with `--baseline V`, version V as saved at the base commit.

Nothing runs through a shell: git gets its arguments as a list, after `--end-of-options`.
"""

from __future__ import annotations

import base64
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from agentci_action._util.errors import InfraError, InputError
from agentci_action._util.git import run_git
from agentci_action._util.github_client import client
from agentci_action.compare.baselines import (
    Baseline,
    BaselineMetadata,
    StoredBaseline,
    load_baseline,
    version_reference,
)
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.load import load_traces

if TYPE_CHECKING:
    from github.ContentFile import ContentFile
    from github.Repository import Repository

    from agentci_action.compare.baselines import Reference
    from agentci_action.trace.canonical import Trace

REF_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/@{}~^-]{0,254}$")  # a commit id or a ref name, never an option
MAX_FILES = 10_000  # files copied from the base commit
MAX_BYTES = 512 * 1024 * 1024  # bytes copied from the base commit
GLOB_CHARACTERS = frozenset("*?[")
CONTENTS_DIRECTORY_LIMIT = 1000  # entries the contents API lists of one directory
KINDS = ("added", "changed", "removed")  # what a recording or a golden query did since the base commit, in that order


@dataclass(frozen=True)
class GitHubAccess:
    """The contents API of `repository`, for a checkout without the base commit."""

    repository: str  # owner/name
    token: str = field(repr=False)
    api_url: str = "https://api.github.com"


@dataclass(frozen=True)
class BaseRef:
    """The commit (or git ref) to read the baseline at, and how to reach GitHub when git cannot."""

    ref: str
    github: GitHubAccess | None = None


class Snapshot(Protocol):
    """The files of one commit."""

    sha: str

    def files(self, prefix: str) -> list[str]:
        """Repository paths of the regular files at `prefix` (a file) or under it (a directory); [] when none."""
        ...

    def read(self, path: str) -> bytes: ...


def check_ref(ref: str) -> str:
    if not REF_PATTERN.match(ref) or ".." in ref:
        raise InputError.at("--baseline-ref", 0, f"{ref!r} is not a commit or ref name")
    return ref


def safe_path(path: str) -> bool:
    """A relative path of plain segments: nothing absolute, no '..' or '.', no backslash or NUL."""
    parts = path.split("/")
    return bool(path) and "\\" not in path and "\0" not in path and all(p not in ("", ".", "..") for p in parts)


class GitSnapshot:
    def __init__(self, root: Path, sha: str):
        self.root, self.sha = root, sha

    @classmethod
    def toplevel(cls, directory: Path) -> Path | None:
        try:
            done = run_git(directory, "rev-parse", "--show-toplevel")
        except OSError:  # no git installed
            return None
        return Path(done.stdout.decode().strip()) if done.returncode == 0 else None

    @classmethod
    def open(cls, root: Path, ref: str) -> GitSnapshot | None:
        """The commit `ref` names in the repository at `root`, or None when the checkout does not have it."""
        done = run_git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        return cls(root, done.stdout.decode().strip()) if done.returncode == 0 else None

    def files(self, prefix: str) -> list[str]:
        done = run_git(self.root, "ls-tree", "-r", "-z", "--full-tree", self.sha, "--", prefix or ".")
        if done.returncode:
            raise InputError.at("git", 0, f"git ls-tree {self.sha[:12]} failed: {done.stderr.decode(errors='replace')}")
        found = []
        for entry in done.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
            meta, _, path = entry.partition("\t")
            mode, kind = [*meta.split(" "), "", ""][:2]
            if kind == "blob" and mode in ("100644", "100755") and _under(path, prefix):
                found.append(path)
        return found

    def read(self, path: str) -> bytes:
        done = run_git(self.root, "cat-file", "blob", f"{self.sha}:{path}")
        if done.returncode:
            raise InputError.at(path, 0, f"cannot read it at {self.sha[:12]} through git")
        return bytes(done.stdout)


class ApiSnapshot:
    """The contents API at one commit (files over its 1 MB inline limit are read as git blobs)."""

    def __init__(self, repo: Repository, sha: str):
        self.repo, self.sha = repo, sha

    def _contents(self, path: str) -> ContentFile | list[ContentFile] | None:
        from github import GithubException

        try:
            return self.repo.get_contents(path, ref=self.sha)
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise InfraError(
                f"GitHub answered {exc.status} reading {path!r} at the base commit {self.sha[:12]}"
                + (" (the token needs contents: read)" if exc.status in (401, 403) else "")
            ) from None
        except Exception as exc:  # the network: the base cannot be read, so nothing can be compared with it
            raise InfraError(
                f"cannot reach GitHub to read the base commit {self.sha[:12]}: {type(exc).__name__}"
            ) from None

    def files(self, prefix: str) -> list[str]:
        found, pending = [], [prefix]
        while pending:
            path = pending.pop()
            listing = self._contents(path)
            entries = listing if isinstance(listing, list) else [] if listing is None else [listing]
            if len(entries) >= CONTENTS_DIRECTORY_LIMIT:  # GitHub cuts a listing there, silently
                raise InfraError(
                    f"{path!r} holds {CONTENTS_DIRECTORY_LIMIT:,} or more entries at the base commit "
                    f"{self.sha[:12]}, more than GitHub's contents API lists: fetch the base commit into the "
                    "checkout (actions/checkout with fetch-depth: 0, or git fetch --depth=1 origin SHA)"
                )
            for entry in entries:
                if not safe_path(entry.path) or not _under(entry.path, prefix):
                    continue  # an answer naming a path outside what was asked is never followed
                if entry.type == "dir":
                    pending.append(entry.path)
                elif entry.type == "file":
                    found.append(entry.path)
            if len(found) > MAX_FILES:
                break
        return sorted(found)

    def read(self, path: str) -> bytes:
        entry = self._contents(path)
        if entry is None or isinstance(entry, list) or entry.type != "file":
            raise InputError.at(path, 0, f"not a file at {self.sha[:12]}")
        if entry.encoding == "base64" and (entry.content or not entry.size):
            return bytes(entry.decoded_content)
        return base64.b64decode(self.repo.get_git_blob(entry.sha).content)


def _under(path: str, prefix: str) -> bool:
    return not prefix or path == prefix or path.startswith(prefix.rstrip("/") + "/")


def open_snapshot(base: BaseRef, directory: Path) -> tuple[Snapshot, Path]:
    """(the base commit's files, the repository root the run's paths are relative to).

    Git when the checkout has the commit, else the contents API; InputError saying what to do when neither can.
    """
    ref = check_ref(base.ref)
    root = GitSnapshot.toplevel(directory)
    if root is not None and (found := GitSnapshot.open(root, ref)) is not None:
        return found, root
    if base.github is None or not base.github.token:
        raise InputError.at(
            "--baseline-ref",
            0,
            f"{ref!r} is not a commit of this checkout (a shallow clone?) and no GitHub token is set to read it "
            "through the API: fetch it (git fetch --depth=1 origin REF), or set GITHUB_TOKEN and GITHUB_REPOSITORY",
        )
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", ref):
        raise InputError.at("--baseline-ref", 0, f"{ref!r}: through the GitHub API the base must be a full commit id")

    repo = client(base.github.token, base.github.api_url).get_repo(base.github.repository)
    return ApiSnapshot(repo, ref), root or directory


def repository_path(path: str, root: Path, directory: Path) -> str:
    """`path` (relative to `directory`, the working directory) as a path in the repository at `root`.

    InputError when it leaves the repository.
    """
    absolute = Path(path) if Path(path).is_absolute() else directory / path
    parts: list[str] = []
    for part in PurePosixPath(absolute.as_posix()).parts:  # '..' resolved by text: the base's tree is not on disk
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    resolved = PurePosixPath(*parts) if parts else PurePosixPath("/")
    try:
        relative = resolved.relative_to(PurePosixPath(root.resolve().as_posix()))
    except ValueError:
        raise InputError.at(path, 0, f"outside the repository {root}: cannot be read at the base commit") from None
    return "" if str(relative) == "." else str(relative)


def fixed_prefix(pattern: str) -> str:
    """The leading segments of a repository path pattern without glob characters: what to list."""
    parts = []
    for part in pattern.split("/"):
        if GLOB_CHARACTERS & set(part):
            break
        parts.append(part)
    return "/".join(parts)


def copy_files(snapshot: Snapshot, prefixes: list[str], scratch: Path, suffix: str = "", depth: int = 0) -> int:
    """Copy the files at or under `prefixes` at the snapshot into `scratch` (same repository paths); how many.

    Only those ending in `suffix` and (with `depth`) at most that many directories below the prefix.
    """

    def kept(path: str, prefix: str) -> bool:
        below = path[len(prefix) :].strip("/").count("/") if prefix else path.count("/")
        return path.endswith(suffix) and (not depth or below < depth)

    found = {path for prefix in dict.fromkeys(prefixes) for path in snapshot.files(prefix) if kept(path, prefix)}
    wanted = sorted(found)
    if len(wanted) > MAX_FILES:
        raise InputError.at(
            "--baseline-ref", 0, f"more than {MAX_FILES:,} files to read at the base commit: name narrower paths"
        )
    root, total = scratch.resolve(), 0
    for path in wanted:
        target = (root / path).resolve()
        if not safe_path(path) or not target.is_relative_to(root):
            continue
        data = snapshot.read(path)
        total += len(data)
        if total > MAX_BYTES:
            raise InputError.at("--baseline-ref", 0, f"more than {MAX_BYTES >> 20} MiB to read at the base commit")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return len(wanted)


def base_reference(
    whole: AgentCISpec,
    selected: AgentCISpec,
    traces: list[str],
    version: str | None,
    base: BaseRef,
    trace_format: str | None = None,
) -> tuple[Reference | None, list[str]]:
    """(the Reference read at the base commit, or None; notes). See the module docstring for what is read."""
    directory = Path.cwd().resolve()  # where the paths in `traces` are relative to
    snapshot, root = open_snapshot(base, directory)
    short, wanted = snapshot.sha[:7], {q.key for q in selected.queries}
    spec_path = Path(whole.path).resolve()
    with tempfile.TemporaryDirectory(prefix="agentci-base-") as scratch_dir:
        scratch = Path(scratch_dir)
        if version is None and traces:
            patterns = _inside(traces, root, directory)
            found = []
            if patterns and copy_files(snapshot, [fixed_prefix(p) for p in patterns], scratch):
                found = load_traces([str(scratch / p) for p in patterns], trace_format, whole.pricing)
            if found:
                for trace in found:  # name the commit, not the scratch directory, in messages
                    trace._source = f"{short}:{trace.source.removeprefix(str(scratch) + '/')}"
                by_key: dict[str, list[Trace]] = {}
                for trace in found:
                    by_key.setdefault(trace.id or trace.query or "", []).append(trace)
                baseline = Baseline(
                    version=f"base {short}",
                    agent=whole.agent,
                    captured_at="",
                    metadata=BaselineMetadata(git_commit=snapshot.sha, precheck_passed=True),
                    queries=by_key,
                )
                reference = version_reference(whole, StoredBaseline(baseline, Path(f"{short}:")), wanted)
                return _at(reference, snapshot.sha), []
        baselines = repository_path(str(spec_path.parent / whole.baseline_dir), root, directory)
        copy_files(snapshot, [baselines], scratch, ".json", depth=2)  # <dir>/V.json, <dir>/<agent>/V.json
        at_base = whole.model_copy()
        at_base._path = str(scratch / repository_path(str(spec_path), root, directory))
        stored = load_baseline(at_base, version)
    if stored is None:
        at = f"no traces at {', '.join(traces)} and " if traces and version is None else ""
        return None, [f"base commit {short} has {at}no saved baseline version whose precheck passed"]
    label = f"{stored.baseline.version} @ base {short}"
    reference = version_reference(whole, StoredBaseline(stored.baseline, Path(f"{short}:{baselines}")), wanted)
    return _at(reference, snapshot.sha, label), []


def read_at(base: BaseRef, path: str | Path, directory: Path | None = None) -> bytes | None:
    """The file at `path` (relative to `directory`, the working directory) as it is at the base commit.

    None when the base commit has no such file or the path is outside the repository. InputError or InfraError when the
    base commit cannot be read (open_snapshot).
    """
    directory = Path.cwd().resolve()  # where the paths in `traces` are relative to
    snapshot, root = open_snapshot(base, directory)
    try:
        relative = repository_path(str(path), root, directory)
    except InputError:
        return None
    return snapshot.read(relative) if relative and relative in snapshot.files(relative) else None


def _inside(paths: list[str], root: Path, directory: Path) -> list[str]:
    """The paths inside the repository, as repository paths ('' never: the whole tree is not a trace path).

    A path outside it (the runner's scratch directory, say) has no version at the base commit.
    """
    found = []
    for path in paths:
        try:
            relative = repository_path(path, root, directory)
        except InputError:
            continue
        if relative:
            found.append(relative)
    return found


def _at(reference: Reference, sha: str, label: str | None = None) -> Reference:
    from dataclasses import replace

    return replace(reference, label=label or reference.label, commit=sha)

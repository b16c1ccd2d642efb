"""Cut GitHub's OpenAPI description down to the operations the fake server serves.

Regenerate (after `npm install @octokit/openapi` in a scratch directory):
    python tests/fakes/openapi/trim.py node_modules/@octokit/openapi/generated/api.github.com.json

Keeps the listed operations, every component they reference (transitively), and drops prose
(`description`, `summary`, `examples`) that validation does not need.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OPERATIONS = {
    "/user": ["get"],
    "/repos/{owner}/{repo}/issues/{issue_number}/comments": ["get", "post"],
    "/repos/{owner}/{repo}/issues/comments/{comment_id}": ["patch"],
    "/repos/{owner}/{repo}/check-runs": ["post"],
    "/repos/{owner}/{repo}/check-runs/{check_run_id}": ["patch"],
    "/repos/{owner}/{repo}/pulls": ["get"],  # publish-only mode: a fork PR found by its head
    # baseline: base, in a checkout without the base commit; the history branch, read on pull requests and
    # appended to on pushes (put), made on first use from a tree, a commit and a ref
    "/repos/{owner}/{repo}/contents/{path}": ["get", "put"],
    "/repos/{owner}/{repo}/git/trees": ["post"],
    "/repos/{owner}/{repo}/git/commits": ["post"],
    "/repos/{owner}/{repo}/git/refs": ["post"],
    "/repos/{owner}/{repo}/git/blobs/{file_sha}": ["get"],  # ... for a file over the contents API's 1 MB
}
PROSE = {"description", "summary", "examples", "example", "externalDocs", "x-github"}
OUT = Path(__file__).with_name("api.github.com.trimmed.json")


def _strip(node, in_properties: bool = False):
    """Drop prose keys, except where they name a property (`properties: {description: ...}`)."""
    if isinstance(node, dict):
        return {k: _strip(v, k == "properties") for k, v in node.items() if in_properties or k not in PROSE}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _refs(node):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for v in node.values():
            yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def trim(full: dict) -> dict:
    paths = {p: {m: full["paths"][p][m] for m in methods} for p, methods in OPERATIONS.items()}
    components: dict[str, dict] = {}
    pending = list(_refs(paths))
    while pending:
        ref = pending.pop()
        _, _, kind, name = ref.split("/", 3)
        if name in components.setdefault(kind, {}):
            continue
        components[kind][name] = full["components"][kind][name]
        pending.extend(_refs(components[kind][name]))
    trimmed = {
        "openapi": full["openapi"],
        "info": {"title": full["info"]["title"], "version": full["info"]["version"]},
        "paths": paths,
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }
    return _strip(trimmed)


if __name__ == "__main__":
    OUT.write_text(json.dumps(trim(json.loads(Path(sys.argv[1]).read_text())), indent=1, sort_keys=False) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")

"""A small stateful GitHub REST API on 127.0.0.1 for the real PyGithub (and the real action container) to talk to.

It keeps issue comments and check runs in memory and validates every request body and every response body it
sends against GitHub's official OpenAPI description (npm @octokit/openapi, trimmed to the operations served here:
see openapi/trim.py). A request that does not match the description is answered 422 and recorded in `violations`;
a response that does not match is recorded too (except the failures a test injects on purpose: `fail_status`
and `read_only`, which GitHub answers with statuses its description does not list), so tests assert `violations == []`.

Tokens: `users` maps a token to a login; `apps` maps a GitHub App installation token to the bot login it writes
as ('<app-slug>[bot]'; GET /user answers 403); a token in neither is the GitHub Actions installation token
(GET /user answers 403, comments are written as github-actions[bot]). `read_only` tokens get 403 on writes,
as a fork PR's token does.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from unittest import mock
from urllib.parse import parse_qs, unquote, urlsplit

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC_FILE = Path(__file__).with_name("openapi") / "api.github.com.trimmed.json"
SPEC_URI = "urn:github-openapi"
BOT_LOGIN = "github-actions[bot]"
MAX_COMMENT_CHARS = 65536


def _to_json_schema(node):
    """OpenAPI 3.0 schema → JSON Schema 2020-12: `nullable: true` becomes anyOf [..., null]; refs become absolute."""
    if isinstance(node, list):
        return [_to_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_json_schema(v) for k, v in node.items() if k not in ("nullable", "discriminator")}
    if isinstance(out.get("$ref"), str) and out["$ref"].startswith("#"):
        out["$ref"] = SPEC_URI + out["$ref"]
    if node.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


class OpenAPI:
    """Request and response validation for the operations in the trimmed description."""

    def __init__(self, path: Path = SPEC_FILE):
        self.raw = json.loads(path.read_text())
        self.doc = _to_json_schema(self.raw)
        self.registry = Registry().with_resource(
            SPEC_URI, Resource.from_contents(self.doc, default_specification=DRAFT202012)
        )
        self.routes = [
            (re.compile("^" + re.sub(r"\{[^}]+\}", _parameter, template) + "$"), template)
            for template in self.doc["paths"]
        ]

    def route(self, method: str, path: str) -> tuple[str, list[str]] | None:
        for pattern, template in self.routes:
            match = pattern.match(path)
            if match and method.lower() in self.doc["paths"][template]:
                return template, list(match.groups())
        return None

    def _resolve(self, node: dict) -> dict:
        while "$ref" in node:
            node = self.registry.resolver().lookup(node["$ref"]).contents
        return node

    def _validate(self, schema: dict, instance) -> list[str]:
        validator = jsonschema.Draft202012Validator(schema, registry=self.registry)
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in validator.iter_errors(instance)
        ]

    def check_request(self, template: str, method: str, body) -> list[str]:
        op = self.doc["paths"][template][method.lower()]
        request = op.get("requestBody")
        if request is None:
            return [] if body is None else ["this operation takes no request body"]
        request = self._resolve(request)
        if body is None:
            return ["request body is required"] if request.get("required") else []
        return self._validate(request["content"]["application/json"]["schema"], body)

    def example(self, node: dict) -> object:
        """The smallest instance of an OpenAPI schema (of the raw description).

        Required properties only, null where nullable, an enum's first value, the first alternative of anyOf/oneOf.
        """
        while "$ref" in node:
            _, _, kind, name = node["$ref"].split("/", 3)
            node = self.raw["components"][kind][name]
        if node.get("nullable"):
            return None
        if "enum" in node:
            return node["enum"][0]
        if "allOf" in node:
            return {k: v for part in node["allOf"] for k, v in self.example(part).items()}
        if "anyOf" in node or "oneOf" in node:
            return self.example((node.get("anyOf") or node["oneOf"])[0])
        kind = node.get("type")
        if kind == "object" or "properties" in node:
            properties = node.get("properties", {})
            return {key: self.example(properties.get(key, {})) for key in node.get("required", [])}
        if kind == "string":
            return {"date-time": _now(), "uri": "https://github.invalid/"}.get(node.get("format"), "x")
        return {"integer": 1, "number": 1, "boolean": False, "array": []}.get(kind)

    def check_response(self, template: str, method: str, status: int, body) -> list[str]:
        responses = self.doc["paths"][template][method.lower()]["responses"]
        if str(status) not in responses:
            return [f"status {status} is not documented for {method} {template}"]
        response = self._resolve(responses[str(status)])
        content = (response.get("content") or {}).get("application/json")
        if content is None:
            return []
        return self._validate(content["schema"], body)


def _parameter(match: re.Match) -> str:
    """A path parameter's pattern: one segment, except a file `{path}`, which spans several."""
    return "(.+)" if match.group(0) == "{path}" else "([^/]+)"


DIRECTORY_LIMIT = 1000  # entries the contents API lists of one directory
CONTENTS_LIMIT = 1_000_000  # bytes the contents API inlines; a larger file reads "encoding: none" (then git blobs)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class State:
    users: dict[str, str] = field(default_factory=dict)  # token → login (absent: an Actions installation token)
    apps: dict[str, str] = field(default_factory=dict)  # App installation token → '<slug>[bot]' (no /user)
    read_only: set[str] = field(default_factory=set)
    fail_status: int | None = None  # answer every request with this status (an outage)
    comments: dict[tuple[str, str, int], list[dict]] = field(default_factory=dict)
    check_runs: list[dict] = field(default_factory=list)
    pulls: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  # (owner, repo) → pull requests
    files: dict[tuple[str, str, str], dict[str, bytes]] = field(default_factory=dict)  # (owner, repo, commit) → tree
    trees: dict[tuple[str, str, str], dict[str, bytes]] = field(default_factory=dict)  # (owner, repo, tree sha) → files
    parents: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)  # (owner, repo, commit) → parents
    branches: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (owner, repo, branch) → commit
    requests: list[tuple[str, str]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    next_id: int = 1000


def _unthrottled_client() -> type:
    """PyGithub's client without its pause before each request (0.25 s, 1 s after a write).

    The pause keeps a client under GitHub's secondary rate limits; against this local server it only waits, a second per
    comment or check run written. Clients made in this process while the server runs are of this class.
    """
    from github import Github

    class Unthrottled(Github):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs, seconds_between_requests=None, seconds_between_writes=None)

    return Unthrottled


class FakeGitHub:
    """Start with `with FakeGitHub() as gh:`; `gh.url` is the API base URL to give PyGithub."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.state = State()
        self.openapi = OpenAPI()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, port), self._handler())
        self.server.daemon_threads = True
        # shutdown() is seen within 0.02 s, not the standard library's 0.5 s: half a second at every test's end
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        self._unthrottled = mock.patch("github.Github", _unthrottled_client())
        self._unthrottled.start()
        return self

    def __exit__(self, *exc) -> None:
        self._unthrottled.stop()
        self.server.shutdown()
        self.server.server_close()

    # ---- state helpers for tests ----
    def user(self, login: str, user_id: int | None = None) -> dict:
        uid = user_id or abs(hash(login)) % 10_000_000
        base = f"{self.url}/users/{login}"
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_{uid}",
            "avatar_url": f"{self.url}/avatars/{uid}",
            "gravatar_id": "",
            "url": base,
            "html_url": f"{self.url}/{login}",
            "followers_url": f"{base}/followers",
            "following_url": f"{base}/following{{/other_user}}",
            "gists_url": f"{base}/gists{{/gist_id}}",
            "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{base}/subscriptions",
            "organizations_url": f"{base}/orgs",
            "repos_url": f"{base}/repos",
            "events_url": f"{base}/events{{/privacy}}",
            "received_events_url": f"{base}/received_events",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False,
        }

    def add_comment(self, repository: str, number: int, login: str, body: str) -> dict:
        owner, repo = repository.split("/")
        with self.lock:
            return self._create_comment(owner, repo, number, login, body)

    def add_pull(self, repository: str, number: int, head_repository: str, head_ref: str, head_sha: str) -> dict:
        """An open pull request into `repository` from branch `head_ref` of `head_repository` (a fork or itself)."""
        pull = self.openapi.example({"$ref": "#/components/schemas/pull-request-simple"})
        owner = head_repository.split("/")[0]
        pull.update(number=number, state="open", url=f"{self.url}/repos/{repository}/pulls/{number}")
        pull["head"].update(label=f"{owner}:{head_ref}", ref=head_ref, sha=head_sha)
        pull["head"]["repo"].update(full_name=head_repository, name=head_repository.split("/")[1])
        pull["base"]["repo"].update(full_name=repository, name=repository.split("/")[1])
        owner_name, repo_name = repository.split("/")
        self.state.pulls.setdefault((owner_name, repo_name), []).append(pull)
        return pull

    def add_commit(self, repository: str, sha: str, files: dict[str, bytes]) -> None:
        """A commit of `repository` holding `files` (repository path → content), read by the contents API."""
        owner, repo = repository.split("/")
        self.state.files[(owner, repo, sha)] = dict(files)

    def _entry(self, owner: str, repo: str, sha: str, path: str, data: bytes | None) -> dict:
        """A contents API entry for a file (`data`) or a directory (None).

        A file inlines its base64 content up to CONTENTS_LIMIT bytes, as GitHub does.
        """
        import hashlib

        base = f"{self.url}/repos/{owner}/{repo}"
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() if data is not None else "0" * 40
        entry = {
            "type": "dir" if data is None else "file",
            "size": 0 if data is None else len(data),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": blob,
            "url": f"{base}/contents/{path}?ref={sha}",
            "git_url": f"{base}/git/blobs/{blob}",
            "html_url": f"https://github.test/{owner}/{repo}/blob/{sha}/{path}",
            "download_url": None,
            "_links": {"git": f"{base}/git/blobs/{blob}", "html": None, "self": f"{base}/contents/{path}"},
        }
        return entry

    def branch_files(self, repository: str, branch: str) -> dict[str, bytes] | None:
        """The files at the head of `branch` (None when it does not exist)."""
        owner, repo = repository.split("/")
        head = self.state.branches.get((owner, repo, branch))
        return None if head is None else self.state.files[(owner, repo, head)]

    def _contents(self, owner: str, repo: str, path: str, ref: str | None):
        import base64

        ref = self.state.branches.get((owner, repo, ref or ""), ref)  # a branch name reads its head commit
        tree = self.state.files.get((owner, repo, ref or ""))
        if tree is None:
            return self._error(404, "No commit found for the ref")
        path = path.strip("/")
        if path in tree:
            data = tree[path]
            inline = len(data) <= CONTENTS_LIMIT
            entry = self._entry(owner, repo, ref, path, data)
            entry.update(
                encoding="base64" if inline else "none", content=base64.b64encode(data).decode() if inline else ""
            )
            return 200, entry, {}
        children: dict[str, bytes | None] = {}
        for name, data in tree.items():
            if name.startswith(path + "/") or not path:
                rest = name[len(path) + 1 :] if path else name
                head, _, tail = rest.partition("/")
                child = f"{path}/{head}" if path else head
                children[child] = None if tail else data
        if not children:
            return self._error(404, "Not Found")
        listed = sorted(children.items())[:DIRECTORY_LIMIT]  # GitHub cuts a long listing, silently
        return 200, [self._entry(owner, repo, ref, child, data) for child, data in listed], {}

    def _commit_body(self, owner: str, repo: str, sha: str, message: str, tree: str) -> dict:
        base = f"{self.url}/repos/{owner}/{repo}"
        who = {"name": "AgentCI", "email": "agentci@users.noreply.github.com", "date": _now()}
        return {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": f"{base}/git/commits/{sha}",
            "html_url": f"https://github.test/{owner}/{repo}/commit/{sha}",
            "author": who,
            "committer": who,
            "tree": {"sha": tree, "url": f"{base}/git/trees/{tree}"},
            "message": message,
            "parents": [
                {
                    "sha": p,
                    "url": f"{base}/git/commits/{p}",
                    "html_url": f"https://github.test/{owner}/{repo}/commit/{p}",
                }
                for p in self.state.parents.get((owner, repo, sha), [])
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def _new_commit(self, owner: str, repo: str, files: dict[str, bytes], parents: list[str], message: str) -> str:
        import hashlib

        sha = hashlib.sha1(repr((sorted(files.items()), parents, message, self.state.next_id)).encode()).hexdigest()
        self.state.next_id += 1
        self.state.files[(owner, repo, sha)] = dict(files)
        self.state.parents[(owner, repo, sha)] = list(parents)
        return sha

    def _put_contents(self, owner: str, repo: str, path: str, body: dict):
        """Create or update one file on a branch (PUT contents): a new commit on the branch's head."""
        import base64

        branch = body.get("branch") or "main"
        head = self.state.branches.get((owner, repo, branch))
        if head is None:
            return self._error(404, f"Branch {branch} not found")
        files = dict(self.state.files[(owner, repo, head)])
        old = files.get(path)
        if old is not None and body.get("sha") != self._entry(owner, repo, head, path, old)["sha"]:
            return self._error(409, f"{path} does not match {body.get('sha')}")
        if old is None and body.get("sha"):
            return self._error(422, "sha given for a file that does not exist")
        files[path] = base64.b64decode(body["content"])
        commit = self._new_commit(owner, repo, files, [head], body["message"])
        self.state.branches[(owner, repo, branch)] = commit
        entry = self._entry(owner, repo, commit, path, files[path])
        entry["download_url"] = entry["html_url"]
        entry["_links"]["html"] = entry["html_url"]
        return (
            (201 if old is None else 200),
            {"content": entry, "commit": self._commit_body(owner, repo, commit, body["message"], commit)},
            {},
        )

    def _git_data(self, owner: str, repo: str, template: str, body: dict):
        """POST git/trees (blobs given inline), git/commits and git/refs: enough to make a branch without parents."""
        import hashlib

        base = f"{self.url}/repos/{owner}/{repo}"
        if template.endswith("/git/trees"):
            files = {item["path"]: item.get("content", "").encode() for item in body["tree"]}
            sha = hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()
            self.state.trees[(owner, repo, sha)] = files
            listed = [
                {
                    "path": p,
                    "mode": "100644",
                    "type": "blob",
                    "sha": self._entry(owner, repo, sha, p, d)["sha"],
                    "size": len(d),
                }
                for p, d in files.items()
            ]
            return 201, {"sha": sha, "url": f"{base}/git/trees/{sha}", "truncated": False, "tree": listed}, {}
        if template.endswith("/git/commits"):
            files = self.state.trees.get((owner, repo, body["tree"]))
            if files is None:
                return self._error(422, "tree not found")
            sha = self._new_commit(owner, repo, files, body.get("parents") or [], body["message"])
            return 201, self._commit_body(owner, repo, sha, body["message"], body["tree"]), {}
        branch = body["ref"].removeprefix("refs/heads/")
        if (owner, repo, branch) in self.state.branches:
            return self._error(422, "Reference already exists")
        if (owner, repo, body["sha"]) not in self.state.files:
            return self._error(422, "Object does not exist")
        self.state.branches[(owner, repo, branch)] = body["sha"]
        ref = {
            "ref": body["ref"],
            "node_id": f"R_{body['sha'][:8]}",
            "url": f"{base}/git/refs/heads/{branch}",
            "object": {"type": "commit", "sha": body["sha"], "url": f"{base}/git/commits/{body['sha']}"},
        }
        return 201, ref, {}

    def _blob(self, owner: str, repo: str, blob: str):
        import base64

        for (o, r, _), tree in self.state.files.items():
            for data in tree.values() if (o, r) == (owner, repo) else ():
                entry = self._entry(owner, repo, "", "x", data)
                if entry["sha"] == blob:
                    content = base64.encodebytes(data).decode()
                    url = f"{self.url}/repos/{owner}/{repo}/git/blobs/{blob}"
                    return (
                        200,
                        {
                            "sha": blob,
                            "node_id": f"B_{blob[:8]}",
                            "size": len(data),
                            "url": url,
                            "content": content,
                            "encoding": "base64",
                        },
                        {},
                    )
        return self._error(404, "Not Found")

    def comments(self, repository: str, number: int) -> list[dict]:
        owner, repo = repository.split("/")
        return self.state.comments.get((owner, repo, number), [])

    def _create_comment(self, owner: str, repo: str, number: int, login: str, body: str) -> dict:
        self.state.next_id += 1
        cid = self.state.next_id
        comment = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{self.url}/repos/{owner}/{repo}/issues/comments/{cid}",
            "html_url": f"https://github.test/{owner}/{repo}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{self.url}/repos/{owner}/{repo}/issues/{number}",
            "body": body,
            "user": self.user(login),
            "created_at": _now(),
            "updated_at": _now(),
            "author_association": "NONE",
        }
        self.state.comments.setdefault((owner, repo, number), []).append(comment)
        return comment

    def _check_run(self, owner: str, repo: str, body: dict) -> dict:
        self.state.next_id += 1
        rid = self.state.next_id
        output = body.get("output") or {}
        run = {
            "id": rid,
            "node_id": f"CR_{rid}",
            "head_sha": body["head_sha"],
            "name": body["name"],
            "external_id": body.get("external_id", ""),
            "url": f"{self.url}/repos/{owner}/{repo}/check-runs/{rid}",
            "html_url": f"https://github.test/{owner}/{repo}/runs/{rid}",
            "details_url": body.get("details_url"),
            "status": body.get("status", "queued"),
            "conclusion": body.get("conclusion"),
            "started_at": _now(),
            "completed_at": _now() if body.get("status") == "completed" else None,
            "output": {
                "title": output.get("title"),
                "summary": output.get("summary"),
                "text": output.get("text"),
                "annotations_count": len(output.get("annotations") or []),
                "annotations_url": f"{self.url}/repos/{owner}/{repo}/check-runs/{rid}/annotations",
            },
            "check_suite": {"id": 1},
            "app": None,
            "pull_requests": [],
            "annotations": list(output.get("annotations") or []),
        }
        self.state.check_runs.append(run)
        return run

    # ---- HTTP ----
    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self._serve("GET")

            def do_POST(self):
                self._serve("POST")

            def do_PATCH(self):
                self._serve("PATCH")

            def do_PUT(self):
                self._serve("PUT")

            def _serve(self, method: str):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                token = (self.headers.get("Authorization") or "").removeprefix("token ").removeprefix("Bearer ").strip()
                with fake.lock:
                    fake.state.requests.append((method, parts.path))
                    status, body, headers = fake._dispatch(method, parts.path, parse_qs(parts.query), raw, token)
                payload = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

        return Handler

    def _error(self, status: int, message: str) -> tuple[int, dict, dict]:
        return (
            status,
            {"message": message, "documentation_url": "https://docs.github.com/rest", "status": str(status)},
            {},
        )

    def _dispatch(self, method: str, path: str, query: dict, raw: bytes, token: str):
        found = self.openapi.route(method, path)
        if found is None:
            self.state.violations.append(f"{method} {path}: not an operation of the trimmed OpenAPI description")
            return self._error(404, "Not Found")
        template, args = found
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            self.state.violations.append(f"{method} {path}: request body is not JSON")
            return self._error(400, "Problems parsing JSON")
        problems = self.openapi.check_request(template, method, body)
        if problems:
            self.state.violations.extend(f"{method} {template} request: {p}" for p in problems)
            return self._error(422, "Validation Failed: " + "; ".join(problems))
        if not token:
            status, out, headers = self._error(401, "Requires authentication")
        elif self.state.fail_status:
            status, out, headers = self._error(self.state.fail_status, "Server Error")
        else:
            status, out, headers = self._operation(method, template, args, query, body, token)
        injected = bool(self.state.fail_status) or (method != "GET" and token in self.state.read_only)
        problems = [] if injected else self.openapi.check_response(template, method, status, out)
        if problems:
            self.state.violations.extend(f"{method} {template} response {status}: {p}" for p in problems)
        return status, out, headers

    def _operation(self, method: str, template: str, args: list[str], query: dict, body, token: str):
        login = self.state.users.get(token)
        writer = login or self.state.apps.get(token) or BOT_LOGIN
        if template == "/user":
            if login is None:
                return self._error(403, "Resource not accessible by integration")
            return (
                200,
                {
                    **self.user(login),
                    "user_view_type": "public",
                    "name": login,
                    "company": None,
                    "blog": "",
                    "location": None,
                    "email": None,
                    "hireable": None,
                    "bio": None,
                    "public_repos": 0,
                    "public_gists": 0,
                    "followers": 0,
                    "following": 0,
                    "created_at": _now(),
                    "updated_at": _now(),
                },
                {},
            )
        if method != "GET" and token in self.state.read_only:
            return self._error(403, "Resource not accessible by integration")
        owner, repo = args[0], args[1]
        if template.endswith("/issues/{issue_number}/comments"):
            number = int(args[2])
            if method == "GET":
                return self._page(
                    self.state.comments.get((owner, repo, number), []),
                    query,
                    f"{self.url}/repos/{owner}/{repo}/issues/{number}/comments",
                )
            if len(body["body"]) > MAX_COMMENT_CHARS:
                return self._error(422, "Validation Failed: body is too long (maximum is 65536 characters)")
            return 201, self._create_comment(owner, repo, number, writer, body["body"]), {}
        if template.endswith("/issues/comments/{comment_id}"):
            comment = next((c for cs in self.state.comments.values() for c in cs if c["id"] == int(args[2])), None)
            if comment is None:
                return self._error(404, "Not Found")
            if comment["user"]["login"] != writer:
                return self._error(403, "You cannot edit a comment written by someone else")
            if len(body["body"]) > MAX_COMMENT_CHARS:
                return self._error(422, "Validation Failed: body is too long (maximum is 65536 characters)")
            comment.update(body=body["body"], updated_at=_now())
            return 200, comment, {}
        if template == "/repos/{owner}/{repo}/pulls":
            state, head = (query.get("state") or ["open"])[0], (query.get("head") or [None])[0]
            pulls = [
                p
                for p in self.state.pulls.get((owner, repo), [])
                if state in ("all", p["state"]) and head in (None, p["head"]["label"])
            ]
            return self._page(pulls, query, f"{self.url}/repos/{owner}/{repo}/pulls")
        if template == "/repos/{owner}/{repo}/contents/{path}" and method == "PUT":
            return self._put_contents(owner, repo, unquote(args[2]), body)
        if template == "/repos/{owner}/{repo}/contents/{path}":
            return self._contents(owner, repo, unquote(args[2]), (query.get("ref") or [None])[0])
        if template.startswith("/repos/{owner}/{repo}/git/") and method == "POST":
            return self._git_data(owner, repo, template, body)
        if template == "/repos/{owner}/{repo}/git/blobs/{file_sha}":
            return self._blob(owner, repo, args[2])
        if template == "/repos/{owner}/{repo}/check-runs":
            return 201, self._public(self._check_run(owner, repo, body)), {}
        if template == "/repos/{owner}/{repo}/check-runs/{check_run_id}":
            run = next((r for r in self.state.check_runs if r["id"] == int(args[2])), None)
            if run is None:
                return self._error(404, "Not Found")
            output = body.get("output") or {}
            run["annotations"].extend(output.get("annotations") or [])
            run["output"].update(
                title=output.get("title", run["output"]["title"]),
                summary=output.get("summary", run["output"]["summary"]),
                annotations_count=len(run["annotations"]),
            )
            for key in ("status", "conclusion", "name"):
                if key in body:
                    run[key] = body[key]
            return 200, self._public(run), {}
        return self._error(404, "Not Found")

    @staticmethod
    def _public(run: dict) -> dict:
        return {k: v for k, v in run.items() if k != "annotations"}

    def _page(self, items: list[dict], query: dict, base: str):
        """GitHub pagination: per_page (max 100, default 30), page, and a Link header with next/last."""
        per_page = min(int((query.get("per_page") or ["30"])[0]), 100)
        page = int((query.get("page") or ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        links = []
        if page < last:
            links.append(f'<{base}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{base}?per_page={per_page}&page={last}>; rel="last"')
        return 200, items[(page - 1) * per_page : page * per_page], ({"Link": ", ".join(links)} if links else {})


def main() -> None:
    """Run standalone: `python tests/fakes/github_server.py PORT [TOKEN=LOGIN ...]`."""
    import sys
    import time

    fake = FakeGitHub(port=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    for pair in sys.argv[2:]:
        token, login = pair.split("=", 1)
        fake.state.users[token] = login
    with fake:
        print(fake.url, flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()

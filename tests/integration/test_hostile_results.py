"""A forged results file in publish-only mode (a fork's artifact, published by a trusted workflow with a write token).

Every string of the results schema (RunResult and its diff) is either closed (an enum, a constant, a pattern), so a
forged value is refused, or free text, which every report makes inert. The test walks the schema itself, so a field
added later is covered: a document generated from the schema with every free string hostile, and real results
(the every-way suite, first run and against its baseline; repeated runs) with every free string and free key replaced
by hostile text, each published by the action as a fork's trusted workflow would. GitHub's own markdown renderer
(cmark-gfm, with its autolink and table extensions) renders the comment, the check run's summary and the job
summary; the HTML report is parsed; the log and the outputs are read as the runner reads them.
"""

from __future__ import annotations

import json
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from fakes.github_server import FakeGitHub
from helpers import ROOT, github_outputs, outside_stop_commands, run_cli

from agentci_action.compare.diff_schema import RunDiff
from agentci_action.engine.results import RunResult
from integration.test_action import run_action
from integration.test_action import workspace as action_workspace
from integration.test_publish import HEAD, publish_env

workspace = action_workspace  # the action's workspace fixture, by its name

PAYLOAD = (
    "../../../../../attacker/repo/blob/main/x.yaml @org/team <details open><summary>click</summary> [phish](https://evil.example/login) https://evil.example/bare "
    "www.evil.example <img src=x onerror=alert(1)> <script>x</script> <!-- agentci-comment: agentci --> | cell "
    "::error file=x.py::pwned %0A\n# Pwned heading\n```\n` ~~~"
)
PATTERN_EXAMPLES = {"agentci_version": "2.0.0", "reference": "baseline"}  # a valid value of each patterned string


def schema() -> dict[str, Any]:
    """The results file's JSON Schema: the run, and its diff under `diff` (json_report writes both in one file)."""
    run = RunResult.model_json_schema()
    diff = RunDiff.model_json_schema(ref_template="#/$defs/{model}")
    return {**run, "properties": {**run["properties"], "diff": diff}, "$defs": {**run["$defs"], **diff["$defs"]}}


SCHEMA = schema()


def resolved(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = {**SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def closed(node: dict[str, Any]) -> bool:
    return any(key in node for key in ("enum", "const", "pattern"))


class Forger:
    """Hostile text, tagged with where it was put, in every free string (and free key) of a document."""

    def __init__(self) -> None:
        self.places: dict[str, str] = {}  # tag → where

    def text(self, where: str) -> str:
        tag = f"F{len(self.places)}x"
        self.places[tag] = where
        return f"{PAYLOAD} {tag}"

    def generate(self, node: dict[str, Any], where: str = "") -> Any:
        """A document of the schema `node` with every free string hostile.

        Every array of one item, every optional value present, and one hostile key in every free-form object.
        """
        node = resolved(node)
        if "anyOf" in node:
            present = [branch for branch in node["anyOf"] if resolved(branch).get("type") != "null"]
            return self.generate(present[0], where) if present else None
        kind = node.get("type")
        if "enum" in node or "const" in node:
            return node.get("const", (node.get("enum") or [None])[0])
        if kind == "string":
            if "pattern" in node:  # a valid value: the schema's default, else one of ours
                return (
                    node["default"]
                    if isinstance(node.get("default"), str)
                    else PATTERN_EXAMPLES[where.rsplit(".", 1)[-1]]
                )
            return self.text(where)
        if kind == "integer":
            return 1
        if kind == "number":
            return 0.5
        if kind == "boolean":
            return False
        if kind == "array":
            items = node.get("prefixItems") or [node.get("items", {})]
            return [self.generate(item, f"{where}[]") for item in items]
        if kind == "object" or "properties" in node:
            found = {name: self.generate(prop, f"{where}.{name}") for name, prop in node.get("properties", {}).items()}
            extra = node.get("additionalProperties")
            names = resolved(node.get("propertyNames", {}))
            if extra is not None and extra is not False and closed(names):
                found[self.generate(names, f"{where}{{key}}")] = self.generate(extra, f"{where}{{}}")
            elif extra is not None and extra is not False:
                found[self.text(f"{where}{{key}}")] = self.generate(
                    extra if isinstance(extra, dict) else {}, f"{where}{{}}"
                )
            return found
        return self.text(where)  # any value (a free-form dict's): hostile text

    def forge(self, value: Any, node: dict[str, Any], where: str = "") -> Any:
        """`value` with every string its schema `node` leaves free (and every key of a free-form object) replaced."""
        node = resolved(node)
        if "anyOf" in node:
            kinds = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number"}
            wanted = kinds.get(type(value), "null")
            branches = [resolved(b) for b in node["anyOf"]]
            fits = [
                b for b in branches if b.get("type") == wanted or (wanted == "integer" and b.get("type") == "number")
            ]
            if not fits:  # a number written as text ("Infinity"): not free text
                return value
            node = fits[0]
        if isinstance(value, str):
            return value if closed(node) else self.text(where)
        if isinstance(value, list):
            items = node.get("prefixItems")
            return [
                self.forge(v, items[i] if items else node.get("items", {}), f"{where}[]") for i, v in enumerate(value)
            ]
        if isinstance(value, dict):
            properties, extra = node.get("properties", {}), node.get("additionalProperties", {})
            extra = extra if isinstance(extra, dict) else {}
            keys_closed = closed(resolved(node.get("propertyNames", {})))
            return {
                (key if key in properties or keys_closed else self.text(f"{where}{{key}}")): self.forge(
                    item, properties.get(key, extra), f"{where}.{key}"
                )
                for key, item in value.items()
            }
        return value


def real_results(*args: str, cwd: Path) -> dict[str, Any]:
    done = run_cli("test", *args, "--format", "json", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


EVERYWAY = ROOT / "tests" / "fixtures" / "everyway"
REAL = {
    "everyway-against-v1": lambda: real_results(
        "agentci_spec.yaml", "--traces", "current.jsonl", "--baseline", "v1", cwd=EVERYWAY
    ),
    "everyway-first-run": lambda: real_results(
        "agentci_spec.yaml", "--traces", "current.jsonl", "--baseline", "none", cwd=EVERYWAY
    ),
    "repeated-runs": lambda: real_results(
        "examples/repeated-runs/agentci_spec.yaml", "--traces", "examples/repeated-runs/traces", cwd=ROOT
    ),
}


def forged_documents() -> list[tuple[str, dict[str, Any], Forger]]:
    found = []
    generated = Forger()
    document = generated.generate(SCHEMA)
    document["shard"] = None  # publish-only refuses a shard's file (tests/integration/test_publish.py)
    found.append(("generated from the schema", document, generated))
    for name, make in REAL.items():
        forger = Forger()
        found.append((name, forger.forge(make(), SCHEMA), forger))
    return found


class Elements(HTMLParser):
    """Every element (tag, attributes) and the text outside <code>/<pre>, of rendered HTML."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[list[int]] = [[]]  # per table: cells in each row
        self._code = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._code += tag in ("code", "pre")
        if tag == "tr":
            self.rows[-1].append(0)
        elif tag in ("td", "th"):
            self.rows[-1][-1] += 1

    def handle_endtag(self, tag: str) -> None:
        self._code -= tag in ("code", "pre")
        if tag == "table":
            self.rows.append([])

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text.append(data)


def ours(href: str) -> bool:
    """A link to this repository (its dot segments resolved, as a browser does) or to a place in the page."""
    url = urlsplit(href)
    return href.startswith("#") or (
        (url.scheme, url.netloc) == ("https", "github.com") and posixpath.normpath(url.path).startswith("/octo/agent/")
    )


def assert_inert_markdown(markdown: str, where: str, markers: int) -> None:
    """Rendered as GitHub renders it.

    No element or attribute from the payload, no link off our own, no mention, every table row as wide as its header,
    and only our own hidden comments (`markers` of them).
    """
    assert markdown.count("<!--") == markers, f"{where}: a hidden comment from the payload"
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    page = Elements(html)
    tags = {tag for tag, _ in page.elements}
    assert not tags & {"img", "script", "h1"}, f"{where}: {tags & {'img', 'script', 'h1'}} from the payload"
    for tag, attrs in page.elements:
        assert not (tag == "details" and "open" in attrs), f"{where}: a <details open> from the payload"
        if tag == "a":
            assert ours(attrs.get("href") or ""), f"{where}: a link to {attrs.get('href')}"
    text = "".join(page.text)
    assert not re.search(r"@[A-Za-z0-9]", text), f"{where}: a mention: {re.search(r'.{20}@[A-Za-z0-9].{20}', text)}"
    for table in page.rows:
        assert len(set(table)) <= 1, f"{where}: a table row broken by a cell's text: {table}"


def assert_inert_log(log: str) -> None:
    """Outside the stop-commands blocks every line that is a workflow command is one of ours, its file not forged."""
    commands = [line for line in outside_stop_commands(log) if line.startswith("::")]
    assert not [c for c in commands if re.match(r"::\w+ (?:[^:]*,)?file=x\.py", c)], commands


def assert_inert_html(html: str) -> None:
    page = Elements(html)
    for tag, attrs in page.elements:
        assert tag not in ("img", "script"), f"HTML report: <{tag}> from the payload"
        assert not any(name.startswith("on") for name in attrs), f"HTML report: an event handler on <{tag}>"
        if tag == "a":
            assert (attrs.get("href") or "").startswith("#"), f"HTML report: a link to {attrs.get('href')}"


@pytest.mark.parametrize("name, document, forger", forged_documents(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_forged_results_file_with_every_free_string_hostile_is_published_inert(workspace, name, document, forger):
    RunResult.model_validate(document)  # a valid results file: only its free text is hostile
    (workspace / "forged.json").write_text(json.dumps(document))
    with FakeGitHub() as github:
        github.add_pull("octo/agent", 7, "mallory/agent", "feature", HEAD)
        code, log = run_action(publish_env(workspace, github.url, "forged.json", check_run="true", html_report="true"))
        [comment] = github.comments("octo/agent", 7)
        [check] = github.state.check_runs
        assert github.state.violations == []
    assert code == 0, log
    shown = comment["body"] + check["output"]["summary"] + (workspace / "summary.md").read_text()
    assert "@\u200borg/team" in shown and any(tag in shown for tag in forger.places), "the forged text was shown"
    assert_inert_markdown(comment["body"], f"{name}: comment", markers=2)
    assert_inert_markdown(check["output"]["summary"], f"{name}: check run", markers=0)
    assert_inert_markdown((workspace / "summary.md").read_text(), f"{name}: job summary", markers=0)
    assert_inert_html((workspace / "out" / "agentci-results.html").read_text())
    assert_inert_log(log)
    outputs = github_outputs((workspace / "output.txt").read_text())
    assert set(outputs) == {
        "status",
        "total",
        "passed",
        "failed",
        "warnings",
        "cost-usd",
        "results-path",
        "html-report-path",
        "comment-url",
    }


def test_the_walk_reaches_every_free_string_of_the_schema():
    """The generated document holds hostile text at every free string the schema has (so a new field is forged too)."""
    forger = Forger()
    forger.generate(SCHEMA)
    places = set(forger.places.values())
    for expected in (
        ".results[].answer",
        ".results[].path.details{}",
        ".warnings[]",
        ".diff.queries[].why[]",
        ".gates[].message",
    ):
        assert expected in places, sorted(places)


def closed_strings(value: Any, node: dict[str, Any], path: tuple = ()) -> list[tuple]:
    """Where a document holds a string its schema closes (an enum, a constant, a pattern), or a closed key."""
    node = resolved(node)
    if "anyOf" in node:
        branches = [resolved(b) for b in node["anyOf"] if resolved(b).get("type") != "null"]
        node = branches[0] if len(branches) == 1 else node
    if isinstance(value, str):
        return [path] if closed(node) else []
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in closed_strings(v, node.get("items", {}), (*path, i))]
    if isinstance(value, dict):
        properties, extra = node.get("properties", {}), node.get("additionalProperties", {})
        keys = [(*path, ("key", k)) for k in value if closed(resolved(node.get("propertyNames", {})))]
        return keys + [
            p
            for k, v in value.items()
            for p in closed_strings(v, properties.get(k, extra if isinstance(extra, dict) else {}), (*path, k))
        ]
    return []


def test_every_closed_string_of_the_schema_refuses_hostile_text():
    """The other half of the walk: where the schema closes a string, a forged value makes the file invalid."""
    from pydantic import ValidationError

    document = Forger().generate(SCHEMA)
    document["shard"] = None
    places = closed_strings(document, SCHEMA)
    assert {("summary", "grade"), ("summary", "fail_on", 0), ("agentci_version",), ("schema_version",)} <= set(places)
    assert ("results", 0, "path", "details", "reference") in places
    for place in places:
        forged = json.loads(json.dumps(document))
        *parents, last = place
        target = forged
        for step in parents:
            target = target[step]
        if isinstance(last, tuple):  # a closed key
            target[PAYLOAD] = target.pop(last[1])
        else:
            target[last] = PAYLOAD
        with pytest.raises(ValidationError):
            RunResult.model_validate(forged)
            RunDiff.model_validate(forged["diff"])

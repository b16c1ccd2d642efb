"""Spec loading: every invalid spec names its file and line; defaults, includes, ids, tags and the schema."""

import json

import pytest
from helpers import ROOT, run_cli

from agentci_action._util.errors import SpecError
from agentci_action.spec.loader import deep_merge, load_spec, slugify
from agentci_action.spec.models import MatchMode
from agentci_action.spec.schema import SCHEMA_FILE, render_schema

VALID = """
version: 1
agent: demo
defaults:
  path:
    max_tool_calls: 5
  cost:
    max_cost_usd: 0.5
queries:
  - query: "How do I install it?"
    tags: [smoke]
    correctness:
      expected_in_answer: [pip]
    path:
      expected_tools: [retriever]
  - id: weather
    query: "Weather in Tokyo?"
    tags: [edge]
    path:
      max_tool_calls: 0
      forbidden_tools: [web_search]
"""

INVALID = [
    # (spec text, line, message fragment)
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      expected_in_anwser: [x]\n",
        5,
        "did you mean 'expected_in_answer'",
    ),
    ("agent: demo\nqueries:\n  - query: q\n    pth:\n      max_tool_calls: 1\n", 4, "did you mean 'path'"),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      regex_match: '(oops'\n",
        5,
        "regex does not compile",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      regex_match: 'a{4294967294}'\n",
        5,
        "regex is too large once its repeat counts are expanded (4,294,967,294 items, at most 100,000)",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    path:\n      expected_tool_calls:\n        - tool: t\n"
        "          arguments: {q: {regex: '(x{999}){999}'}}\n",
        7,
        "regex is too large once its repeat counts are expanded (999,000 items",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      regex_match: '(?a)(?u)x'\n",
        5,
        "regex does not compile: ASCII and UNICODE flags are incompatible",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      json_schema: {type: objekt}\n",
        5,
        "invalid JSON Schema",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      json_schema: {$ref: '#/definitions/nope'}\n",
        5,
        "$ref '#/definitions/nope' at $ref does not resolve within the schema",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      json_schema:\n        properties:\n          a: {$ref: 'https://example.com/a.json'}\n",
        5,
        "$ref 'https://example.com/a.json' at properties/a/$ref does not resolve",
    ),
    ("agent: demo\nqueries:\n  - query: q\n    path:\n      max_tool_calls: -1\n", 5, "greater than or equal to 0"),
    (
        "agent: demo\nqueries:\n  - query: q\n    path:\n      match_mode: fuzzy\n",
        5,
        "'strict', 'unordered', 'subset', 'superset' or 'subsequence'",
    ),
    ("agent: demo\nqueries:\n  - query: q\n    path:\n      min_tool_recall: 1.5\n", 5, "less than or equal to 1"),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      llm_judge:\n        - rule: r\n          threshold: 2\n",
        7,
        "less than or equal to 1",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness:\n      llm_judge:\n        - threshold: 0.5\n",
        6,
        "rule: required key is missing",
    ),
    ("agent: demo\nqueries: []\n", 2, "at least 1 item"),
    ("queries:\n  - query: q\n", 1, "agent: required key is missing"),
    ("agent: demo\nqueries:\n  - query: '   '\n", 3, "query must not be empty"),
    ("agent: demo\nqueries:\n  - id: a\n    query: q1\n  - id: a\n    query: q2\n", 5, "duplicate query id 'a'"),
    (
        "agent: demo\nqueries:\n  - query: q\n    path: {max_tool_calls: 1, max_tool_calls: 2}\n",
        4,
        "duplicate key 'max_tool_calls'",
    ),
    ("agent: demo\nqueries:\n  - query: q\n    cost:\n      max_latency_ms: fast\n", 5, "valid number"),
    ("agent: demo\nqueries:\n  - query: q\n    tags: smoke\n", 4, "valid list"),
    ("version: 2\nagent: demo\nqueries:\n  - query: q\n", 1, "version: Input should be 1"),
    ("agent: demo\nqueries:\n  - query: q\n    id: 'has space'\n", 4, "should match pattern"),
    ("agent: demo\njudge_config:\n  provider: mistral\nqueries:\n  - query: q\n", 3, "'anthropic' or 'openai'"),
    ("agent: demo\nqueries:\n  - query: q\n    cost:\n      max_cost_multiplier: 0\n", 5, "greater than 0"),
    (
        "agent: demo\nqueries:\n  - query: q\n    correctness: !include ../outside.yaml\n",
        4,
        "outside the spec's directory",
    ),
    ("agent: demo\nqueries:\n  - query: q\n    correctness: !include missing.yaml\n", 4, "file not found"),
    (
        "agent: demo\nqueries:\n  - query: [q\n",
        3,
        "YAML syntax error: expected ',' or ']', but got '<stream end>' while parsing a flow sequence that starts here",
    ),
    (
        'agent: demo\nqueries:\n  - query: "unclosed\n    path: {max_tool_calls: 1}\n',
        3,
        "while scanning a quoted scalar that starts here",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n   bad: 1\n",
        4,
        "YAML syntax error: expected <block end>",
    ),  # mid-file: the problem's own line
    (
        "agent: demo\nqueries:\n  - query: q\n    path:\n      expected_tool_calls:\n        - name: a\n          argument_rules:\n"
        "            lat: {tolerence: 1}\n",
        8,
        "unknown key 'tolerence'; did you mean 'tolerance'?",
    ),
    (
        "agent: demo\npricing:\n  my-model: {inptu: 1, output: 2}\nqueries:\n  - query: q\n",
        3,
        "unknown key 'inptu'; did you mean 'input'?",
    ),
    (
        "agent: demo\nqueries:\n  - query: q\n    process:\n      expected_steps: [{tool: a, wieght: 2}]\n",
        5,
        "did you mean 'weight'?",
    ),
    ("- just\n- a list\n", 1, "must be a mapping"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), INVALID)
def test_invalid_spec_names_file_line_and_problem(write, text, line, fragment):
    path = write("spec.yaml", text)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    rendered = [str(p) for p in caught.value.problems]
    assert any(p.file == str(path) and p.line == line and fragment in p.message for p in caught.value.problems), (
        rendered
    )


def test_every_problem_is_reported_not_only_the_first(write):
    path = write(
        "spec.yaml",
        """
        agent: demo
        queries:
          - query: a
            correctness: {expected_in_anwser: [x]}
          - query: b
            path: {max_tool_calls: -3, match_mode: nope}
    """,
    )
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert [p.line for p in caught.value.problems] == [4, 6, 6]


def test_missing_and_empty_spec_files(tmp_path, write):
    with pytest.raises(SpecError, match="spec file not found"):
        load_spec(tmp_path / "nope.yaml")
    with pytest.raises(SpecError, match="file is empty"):
        load_spec(write("empty.yaml", "# nothing here\n"))


def test_defaults_deep_merge_query_values_win(write):
    spec = load_spec(write("spec.yaml", VALID))
    first, second = spec.queries
    assert first.path.max_tool_calls == 5 and first.path.expected_tools == ["retriever"]
    assert second.path.max_tool_calls == 0
    assert first.cost.max_cost_usd == 0.5 and second.cost.max_cost_usd == 0.5
    assert first.path.match_mode is MatchMode.SUBSET


def test_deep_merge_replaces_lists():
    assert deep_merge({"a": {"x": [1, 2], "y": 1}}, {"a": {"x": [3]}}) == {"a": {"x": [3], "y": 1}}


def test_ids_lines_and_tags(write):
    path = write("spec.yaml", VALID)
    spec = load_spec(path)
    assert [q.key for q in spec.queries] == ["how-do-i-install-it", "weather"]
    assert [q.line for q in spec.queries] == [9, 15]
    assert load_spec(path, tags=["edge"]).queries[0].key == "weather"
    with pytest.raises(SpecError, match="no query has any of the tags nope"):
        load_spec(path, tags=["nope"])


def test_derived_ids_are_unique(write):
    spec = load_spec(
        write(
            "spec.yaml",
            "agent: a\nqueries:\n  - query: Hello world\n  - query: hello, world!\n  - id: hello-world-3\n    query: x\n",
        )
    )
    assert [q.key for q in spec.queries] == ["hello-world", "hello-world-2", "hello-world-3"]
    assert slugify("What's the weather in Tokyo?") == "what-s-the-weather-in-tokyo"


def test_include_pulls_a_fragment_and_reports_lines_in_it(write):
    write("shared/judge.yaml", "expected_in_answer: [pip]\nregex_match: '('\n")
    path = write("spec.yaml", "agent: a\nqueries:\n  - query: q\n    correctness: !include shared/judge.yaml\n")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    (problem,) = caught.value.problems
    assert problem.file.endswith("shared/judge.yaml") and problem.line == 2
    write("shared/judge.yaml", "expected_in_answer: [pip]\n")
    assert load_spec(path).queries[0].correctness.expected_in_answer == ["pip"]


def test_include_cycle_is_refused(write):
    write("a.yaml", "x: !include b.yaml\n")
    write("b.yaml", "y: !include a.yaml\n")
    path = write("spec.yaml", "agent: a\nqueries:\n  - query: q\n    correctness: !include a.yaml\n")
    with pytest.raises(SpecError, match="cycle"):
        load_spec(path)


def test_checked_in_schema_matches_the_models():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render_schema(), (
        "regenerate: python -m agentci_action schema --output agentci_action/spec/agentci_spec.schema.json"
    )


def test_example_specs_point_at_the_schema_and_validate_against_it():
    import jsonschema
    import yaml

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    specs = sorted((ROOT / "examples").rglob("agentci_spec.yaml"))
    assert specs
    for spec in specs:
        text = spec.read_text(encoding="utf-8")
        assert text.startswith("# yaml-language-server: $schema="), spec
        jsonschema.validate(yaml.safe_load(text), schema)


def test_validate_command_exit_codes(write):
    good = run_cli("validate", write("good.yaml", VALID))
    assert good.returncode == 0 and "valid · agent 'demo' · 2 queries" in good.stdout
    bad = run_cli("validate", write("bad.yaml", INVALID[0][0]))
    assert bad.returncode == 1
    assert "bad.yaml:5: unknown key 'expected_in_anwser'; did you mean 'expected_in_answer'?" in bad.stderr
    assert "Traceback" not in bad.stderr

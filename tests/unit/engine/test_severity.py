"""A path, process or cost rule made blocking (or relaxed) per query and as a spec-wide default.

The spec's syntax and its errors, the engine's statuses, how it composes with fail-on (the table in docs/explanation/severity-and-gates.md, read
from there), and what every report says about the rule that blocked.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

from agentci_action.engine.evaluate_spec import Settings, evaluate_spec
from agentci_action.engine.results import Status
from agentci_action.report import console, html, junit
from agentci_action.report.file_annotations import annotations_for
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import DEFAULT_SEVERITY, CostRule, PathRule, ProcessRule
from agentci_action.trace.canonical import Trace

REFUND_SPEC = """\
agent: refund-agent
defaults:
  path:
    severity: {expected_tool_calls: fail}
queries:
  - id: refund-damaged
    query: "Order 1042 arrived broken. Can I get my money back?"
    path:
      match_mode: strict
      expected_tool_calls: [{name: lookup_order}, {name: refund}]
  - id: refund-late
    query: "My order 1043 is late, refund it."
    path:
      match_mode: strict
      expected_tool_calls: [{name: lookup_order}, {name: refund}]
      severity: {expected_tool_calls: warn}
"""
WRONG_ORDER = [{"name": "refund", "arguments": {"order_id": "1042"}}, {"name": "lookup_order"}]


def trace(qid: str, calls: list[dict], **extra) -> dict:
    return {"id": qid, "final_answer": "Refunded.", "tool_calls": calls, **extra}


def evaluate(spec_path: Path, traces: list[dict], fail_on: frozenset[str] = frozenset({"correctness", "suite"})):
    spec = load_spec(spec_path)
    return evaluate_spec(spec, [Trace.model_validate(t) for t in traces], settings=Settings(fail_on=fail_on))


def test_a_default_severity_blocks_every_query_and_a_query_relaxes_it(write):
    run = evaluate(
        write("spec.yaml", REFUND_SPEC), [trace("refund-damaged", WRONG_ORDER), trace("refund-late", WRONG_ORDER)]
    )
    damaged, late = run.results
    assert (damaged.status, damaged.blocking, damaged.path.status) == (Status.FAIL, True, Status.FAIL)
    assert (late.status, late.blocking, late.path.status) == (Status.WARN, False, Status.WARN)
    [blocked] = damaged.path.findings()
    assert (blocked.status, blocked.rule) == (Status.FAIL, "expected_tool_calls")
    assert blocked.message.startswith("[expected_tool_calls: severity fail] expected_tool_calls not matched (strict)")
    [relaxed] = late.path.findings()
    assert relaxed.message.startswith("[expected_tool_calls: severity warn] ")  # the same rule, its reason in view
    check = next(c for c in damaged.path.checks if c.name == "expected_tool_calls")
    assert check.data["severity"] == "fail"
    good = evaluate(
        write("s2.yaml", REFUND_SPEC), [trace("refund-damaged", WRONG_ORDER[::-1]), trace("refund-late", [])]
    )
    assert good.results[0].status is Status.PASS


def test_a_forbidden_tool_relaxed_to_a_warning_no_longer_fails(write):
    spec = write(
        "spec.yaml",
        """
        agent: a
        queries:
          - id: hello
            query: Hello
            path: {forbidden_tools: [refund], severity: {forbidden_tools: warn}}
          - id: bye
            query: Bye
            path: {forbidden_tools: [refund]}
        """,
    )
    hello, bye = evaluate(spec, [trace("hello", [{"name": "refund"}]), trace("bye", [{"name": "refund"}])]).results
    assert (hello.status, hello.blocking) == (Status.WARN, False)
    assert hello.path.messages == ["[forbidden_tools: severity warn] forbidden tools used: refund at step 0"]
    assert (bye.status, bye.blocking) == (Status.FAIL, True)  # the default: a forbidden tool fails


# One failing case per rule: (block, its settings, the trace's fields). Every rule the models list is here.
FAILING = {
    "forbidden_tools": ("path", {"forbidden_tools": ["shell"]}, {"tool_calls": [{"name": "shell"}]}),
    "allowed_tools": ("path", {"allowed_tools": ["search"]}, {"tool_calls": [{"name": "shell"}]}),
    "max_tool_calls": ("path", {"max_tool_calls": 0}, {"tool_calls": [{"name": "search"}]}),
    "min_tool_recall": ("path", {"expected_tools": ["a", "b"], "min_tool_recall": 1}, {"tool_calls": [{"name": "a"}]}),
    "min_tool_precision": (
        "path",
        {"expected_tools": ["a"], "min_tool_precision": 1},
        {"tool_calls": [{"name": "a"}, {"name": "b"}]},
    ),
    "min_sequence_similarity": (
        "path",
        {"expected_tools": ["a", "b"], "min_sequence_similarity": 0.9},
        {"tool_calls": [{"name": "b"}, {"name": "c"}]},
    ),
    "match_mode": (
        "path",
        {"expected_tools": ["a", "b"], "match_mode": "strict"},
        {"tool_calls": [{"name": "b"}, {"name": "a"}]},
    ),
    "expected_tool_calls": ("path", {"expected_tool_calls": [{"name": "a"}]}, {"tool_calls": [{"name": "b"}]}),
    "max_loops": ("path", {"max_loops": 0}, {"tool_calls": [{"name": "a"}, {"name": "a"}]}),
    "expected_handoff": ("path", {"expected_handoff": "billing"}, {"handoffs": [{"from": "triage", "to": "tech"}]}),
    "expected_handoffs_available": (
        "path",
        {"expected_handoffs_available": ["billing"]},
        {"handoffs": [{"from": "triage", "to": "tech"}]},
    ),
    "max_handoff_count": ("path", {"max_handoff_count": 0}, {"handoffs": [{"from": "triage", "to": "tech"}]}),
    "min_progress_rate": (
        "process",
        {"expected_steps": ["a", "b"], "min_progress_rate": 1},
        {"tool_calls": [{"name": "a"}]},
    ),
    "max_strategic_drift": (
        "process",
        {"aligned_tools": ["a"], "max_strategic_drift": 0},
        {"tool_calls": [{"name": "a"}, {"name": "b"}]},
    ),
    "max_total_tokens": ("cost", {"max_total_tokens": 10}, {"total_tokens": 500}),
    "max_llm_calls": ("cost", {"max_llm_calls": 0}, {"total_llm_calls": 3}),
    "max_latency_ms": ("cost", {"max_latency_ms": 100}, {"total_duration_ms": 900}),
    "max_cost_usd": ("cost", {"max_cost_usd": 0.001}, {"total_cost_usd": 0.5}),
    "max_turns": ("cost", {"max_turns": 1}, {"turns": [{"query": "a"}, {"query": "b"}]}),
}
RULES = [*PathRule.__args__, *ProcessRule.__args__, *CostRule.__args__]


def test_every_rule_has_a_failing_case_here():
    assert sorted([*FAILING, "max_cost_multiplier"]) == sorted(RULES)  # the multiplier needs a baseline: below


@pytest.mark.parametrize("rule", sorted(FAILING))
@pytest.mark.parametrize("severity", ["fail", "warn"])
def test_every_rule_fails_or_warns_as_its_severity_says(write, rule, severity):
    block, settings, fields = FAILING[rule]
    default = DEFAULT_SEVERITY[rule].value
    spec = {"agent": "a", "queries": [{"id": "q", "query": "q", block: {**settings, "severity": {rule: severity}}}]}
    plain = {"agent": "a", "queries": [{"id": "q", "query": "q", block: settings}]}
    [result] = evaluate(write("spec.yaml", json.dumps(spec)), [trace("q", [], **fields)]).results
    [unset] = evaluate(write("plain.yaml", json.dumps(plain)), [trace("q", [], **fields)]).results
    layer = "path" if block == "process" else block
    [finding] = [f for f in result.layer(layer).findings() if f.rule == rule]
    assert finding.status is Status(severity) and finding.message.startswith(f"[{rule}: severity {severity}] ")
    assert result.blocking is (severity == "fail")
    [plain_finding] = [f for f in unset.layer(layer).findings() if f.rule == rule]
    assert plain_finding.status is Status(default) and not plain_finding.message.startswith("[")


def test_the_cost_multiplier_against_a_baseline_can_block(write):
    spec = load_spec(
        write(
            "spec.yaml",
            "agent: a\nqueries:\n  - {id: q, query: q, cost: {max_cost_multiplier: 2, severity: {max_cost_multiplier: fail}}}\n",
        )
    )
    baseline = Trace.model_validate(trace("q", [], total_cost_usd=0.0000401))
    run = evaluate_spec(
        spec, [Trace.model_validate(trace("q", [], total_cost_usd=0.00014))], baselines={"q": [baseline]}
    )
    [result] = run.results
    assert (result.status, result.blocking) == (Status.FAIL, True)
    # enough digits that the two figures explain the ratio (not "$0.0001 vs $0.0000")
    assert result.cost.messages == [
        "[max_cost_multiplier: severity fail] cost 3.49× the baseline (max 2×): $0.00014 vs $0.0000401"
    ]


def test_a_blocking_cost_rule_fails_the_run_for_the_pass_rate(write):
    spec = write(
        "spec.yaml",
        """
        agent: a
        queries:
          - id: q
            query: q
            runs: 3
            min_pass_rate: 0.6
            cost: {max_cost_usd: 0.01, severity: {max_cost_usd: fail}}
        """,
    )
    runs = [trace("q", [], run=n, total_cost_usd=cost) for n, cost in enumerate((0.001, 0.5, 0.5))]
    [result] = evaluate(spec, runs).results
    assert result.reliability.run_statuses == [Status.PASS, Status.FAIL, Status.FAIL]
    assert result.correctness.status is Status.FAIL  # 1 of 3 runs passed, below 60%
    assert "run 1: [max_cost_usd: severity fail] cost: $0.5 > max $0.01" in result.correctness.messages[0]


def composition_table() -> dict[tuple[str, str], str]:
    """docs/explanation/severity-and-gates.md's table of severity × fail-on: (severity, column) → cell."""
    docs = (ROOT / "docs" / "explanation" / "severity-and-gates.md").read_text(encoding="utf-8")
    head = next(line for line in docs.splitlines() if line.startswith("| the rule's severity |"))
    columns = [cell.strip() for cell in head.strip("|").split("|")][1:]
    rows = re.findall(r"^\| `(fail|warn)` \|(.*)\|$", docs, re.M)
    return {
        (severity, column): cell.strip() for severity, cells in rows for column, cell in zip(columns, cells.split("|"))
    }


@pytest.mark.parametrize("layer", ["path", "cost"])
def test_the_docs_table_of_severity_and_fail_on_is_what_happens(write, layer):
    table = composition_table()
    assert len(table) == 6
    fail_on_of = {  # each column of the table, as a fail-on this rule's layer falls under
        "`fail-on` names the rule's layer (`path`, `cost`)": frozenset({layer}),
        "`fail-on` names `correctness` but not the rule's layer (the default)": frozenset({"correctness", "suite"}),
        "`fail-on` names neither (`none`, `suite`)": frozenset(),
    }
    assert {column for _, column in table} == set(fail_on_of)
    block, settings, fields = FAILING["max_loops"] if layer == "path" else FAILING["max_total_tokens"]
    rule = "max_loops" if layer == "path" else "max_total_tokens"
    for (severity, column), cell in table.items():
        spec = {"agent": "a", "queries": [{"id": "q", "query": "q", block: {**settings, "severity": {rule: severity}}}]}
        [result] = evaluate(
            write("spec.yaml", json.dumps(spec)), [trace("q", [], **fields)], fail_on_of[column]
        ).results
        assert result.status is (Status.FAIL if cell.startswith("fails") else Status.WARN), (severity, column)
        assert result.blocking is ("does not block" not in cell), (severity, column)


def test_every_report_says_the_query_failed_and_which_rule_blocked_it(write):
    run = evaluate(
        write("spec.yaml", REFUND_SPEC + "      expected_tools: [lookup_order, refund]\n"),
        [trace("refund-damaged", WRONG_ORDER), trace("refund-late", WRONG_ORDER)],
    )
    tag = "[expected_tool_calls: severity fail]"
    text = console.render(run)
    block = text[text.index("✗ FAIL  refund-damaged") :].split("\n\n")[0]
    assert f"path        fail  {tag} expected_tool_calls not matched (strict)" in block
    annotation = next(a for a in annotations_for(run) if "refund-damaged" in a.title)
    assert (annotation.level, annotation.line) == ("error", 6) and annotation.message.startswith(tag)
    case = ET.fromstring(junit.render(run)).find(".//testcase[@name='refund-damaged']")
    failure = case.find("failure")
    assert failure.get("type") == "path" and failure.get("message").startswith(f"path: {tag}")
    page = html.render_html(run)
    assert "[expected_tool_calls: severity fail] expected_tool_calls not matched" in page
    late = text[text.index("! WARN  refund-late") :].split("\n\n")[0]
    assert "path        warn  match mode 'strict'" in late and "  [expected_tool_calls: severity warn] " in late


def test_the_cli_exits_1_and_annotates_the_query_line_with_an_error(write, write_traces):
    spec = write("spec.yaml", REFUND_SPEC)
    traces = write_traces("t.jsonl", [trace("refund-damaged", WRONG_ORDER), trace("refund-late", WRONG_ORDER)])
    done = run_cli("test", str(spec), "--traces", str(traces), "--format", "github")
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and errors[0].startswith("::error file=")
    assert ",line=6,title=AgentCI path%3A refund-damaged::[expected_tool_calls: severity fail]" in errors[0]
    relaxed = run_cli("test", str(spec), "--traces", str(traces), "--fail-on", "none")
    assert relaxed.returncode == 0  # fail-on stays the suite-wide switch


@pytest.mark.parametrize(
    ("block", "line", "expected"),
    [
        (
            "path:\n      severity: {match_mod: fail}",
            7,
            "queries[0].path.severity: unknown rule 'match_mod'; did you mean 'match_mode'?",
        ),
        (
            "cost:\n      severity: {max_cost: fail}",
            7,
            "queries[0].cost.severity: unknown rule 'max_cost'; did you mean 'max_cost_usd'?",
        ),
        ("process:\n      severity: {min_progress: fail}", 7, "did you mean 'min_progress_rate'?"),
        (
            "path:\n      severity: {max_loops: block}",
            7,
            "queries[0].path.severity.max_loops: Input should be 'fail' or 'warn'",
        ),
        (
            "checks:\n      agent: {task_completion: true, severity: {task_completon: fail}}",
            7,
            "did you mean 'task_completion'?",
        ),
    ],
)
def test_validate_names_a_misspelt_rule_at_its_line_with_the_closest_one(write, block, line, expected):
    spec = write("spec.yaml", f"version: 1\nagent: a\nqueries:\n  - id: q\n    query: q\n    {block}\n")
    done = run_cli("validate", str(spec))
    assert done.returncode == 1
    assert f"spec.yaml:{line}: " in done.stderr and expected in done.stderr, done.stderr


def test_a_severity_in_defaults_is_validated_too(write):
    spec = write(
        "spec.yaml",
        "agent: a\ndefaults:\n  path:\n    severity: {expected_tool_call: fail}\nqueries:\n  - {id: q, query: q}\n",
    )
    done = run_cli("validate", str(spec))
    assert (
        done.returncode == 1 and "spec.yaml:4: defaults.path.severity: unknown rule 'expected_tool_call'" in done.stderr
    )


def test_the_json_schema_completes_and_checks_the_rule_names():
    import jsonschema
    import yaml

    schema = json.loads((ROOT / "agentci_action" / "spec" / "agentci_spec.schema.json").read_text(encoding="utf-8"))
    good = yaml.safe_load(REFUND_SPEC)
    jsonschema.validate(good, schema)
    for block, rule in (("path", "match_mod"), ("cost", "max_cost"), ("process", "min_progress")):
        bad = {**good, "queries": [{"id": "q", "query": "q", block: {"severity": {rule: "fail"}}}]}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    path = schema["$defs"]["PathSpec"]["properties"]["severity"]
    assert path["propertyNames"]["enum"] == list(PathRule.__args__)

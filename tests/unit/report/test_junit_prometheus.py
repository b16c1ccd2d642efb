"""JUnit XML and Prometheus exports, read back by real parsers (junitparser, prometheus-client's text parser)."""

import math
import re
import xml.etree.ElementTree as ET

import junitparser
import pytest
from helpers import run_cli
from prometheus_client.parser import text_string_to_metric_families

from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import Check, Status
from agentci_action.report import junit, prometheus
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace

SPEC = """
agent: 'demo "agent" \\ one'
queries:
  - id: passes
    query: "Capital of France?"
    correctness: {expected_in_answer: ["Paris"]}
    path: {expected_tools: [search]}
  - id: warns
    query: "Warns"
    path: {expected_tools: [search], max_tool_calls: 1}
  - id: fails
    query: "Fails <b>&amp;</b>"
    correctness: {expected_in_answer: ["ok"]}
    path: {forbidden_tools: [shell]}
"""


def traces():
    rows = [
        {
            "id": "passes",
            "final_answer": "Paris",
            "tool_calls": [{"name": "search"}],
            "llm_calls": [{"input_tokens": 10, "cost_usd": 0.5, "duration_ms": 1500}],
        },
        {"id": "warns", "final_answer": "x", "tool_calls": [{"name": "search"}, {"name": "search"}]},
        {"id": "fails", "final_answer": "<script>\x00\x1b[31m", "tool_calls": [{"name": "shell"}], "run": 0},
        {"id": "fails", "final_answer": "ok", "run": 1},
    ]
    return [Trace.model_validate(r).with_derived_totals() for r in rows]


def run(write):
    return evaluate_spec(load_spec(write("s.yaml", SPEC)), traces())


# The JUnit structure test-report tools accept (Surefire/Jenkins schema, plus xunit1's file and line): element →
# (allowed attributes, required attributes, allowed children).
JUNIT = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {"name", "tests", "failures", "errors", "skipped", "time", "timestamp", "hostname", "id", "package", "file"},
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": (
        {"name", "time", "classname", "file", "line"},
        {"name"},
        {"skipped", "error", "failure", "system-out", "system-err"},
    ),
    "failure": ({"type", "message"}, set(), set()),
    "error": ({"type", "message"}, set(), set()),
    "system-out": (set(), set(), set()),
}


def assert_junit_structure(element: ET.Element) -> None:
    allowed, required, children = JUNIT[element.tag]
    assert set(element.attrib) <= allowed and required <= set(element.attrib), (element.tag, element.attrib)
    if "time" in element.attrib:
        assert re.fullmatch(r"[0-9]+(\.[0-9]+)?", element.get("time"))
    for name in ("tests", "failures", "errors", "skipped", "line"):
        if name in element.attrib:
            assert element.get(name).isdigit()
    for child in element:
        assert child.tag in children, (element.tag, child.tag)
        assert_junit_structure(child)


def test_junit_has_one_testcase_per_query_with_failures_and_warnings(write):
    result = run(write)
    text = junit.render(result)
    root = ET.fromstring(text.encode())
    assert_junit_structure(root)
    assert root.tag == "testsuites" and [child.tag for child in root] == ["testsuite"]
    suite = root[0]
    assert (
        suite.get("name"),
        suite.get("tests"),
        suite.get("failures"),
        suite.get("errors"),
        suite.get("skipped"),
    ) == ('demo "agent" \\ one', "3", "1", "0", "0")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "0")
    assert {p.get("name"): p.get("value") for p in suite.find("properties")}["agentci.grade"] == result.summary.grade
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["passes", "warns", "fails"]
    assert [c.get("line") for c in cases] == ["3", "7", "10"] and cases[0].get("time") == "1.500"
    assert list(cases[0]) == []
    (out,) = list(cases[1])
    assert out.tag == "system-out" and out.text == "warning: path: tool calls: 2 > max 1 (search ×2)"
    (failure,) = list(cases[2])
    assert failure.tag == "failure" and failure.get("type") == "correctness,path"
    # with runs: and no min_pass_rate a failing run warns; the forbidden tool in that run fails the query
    assert failure.get("message").startswith("path: run 0: forbidden tools used: shell")
    assert "correctness: 1 of 2 runs passed (50%), no min_pass_rate set" in failure.text

    parsed = junitparser.JUnitXml.fromstring(
        text.encode()
    )  # bytes: lxml (installed with sacrebleu) refuses a str with an XML declaration
    (psuite,) = list(parsed)
    assert (psuite.tests, psuite.failures, psuite.errors) == (3, 1, 0)
    outcomes = {case.name: [type(r).__name__ for r in case.result] for case in psuite}
    assert outcomes == {"passes": [], "warns": [], "fails": ["Failure"]}


def test_junit_keeps_untrusted_text_inert(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        queries:
          - id: q
            query: "q"
            correctness: {not_in_answer: ["</failure><x>"]}
        """,
        )
    )
    trace = Trace.model_validate({"id": "q", "final_answer": "a </failure><x> \x00 \x1b b"})
    text = junit.render(evaluate_spec(spec, [trace]))
    root = ET.fromstring(text.encode())  # well-formed despite markup and control characters
    assert_junit_structure(root)
    failure = root.find("testsuite/testcase/failure")
    assert "</failure><x>" in failure.get("message") and root.find(".//x") is None
    assert "\x00" not in text and junit.xml_text("a\x00b\x1bc\td") == "a\ufffdb\ufffdc\td"


def test_prometheus_exposition_parses_with_the_real_parser(write):
    result = run(write)
    text = prometheus.render(result)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in (
        "agentci_correctness_pass",
        "agentci_tool_recall",
        "agentci_tool_precision",
        "agentci_cost_usd",
        "agentci_latency_ms",
        "agentci_total_tokens",
        "agentci_pass_rate",
        "agentci_score",
        "agentci_suite_pass_rate",
        "agentci_suite_composite_score",
    ):
        assert families[name].type == "gauge", name
    samples = {(s.name, s.labels["query"]): s.value for s in families["agentci_correctness_pass"].samples}
    assert samples == {
        ("agentci_correctness_pass", "passes"): 1.0,
        ("agentci_correctness_pass", "warns"): 1.0,
        ("agentci_correctness_pass", "fails"): 0.0,
    }
    agents = {s.labels["agent"] for f in families.values() for s in f.samples}
    assert agents == {'demo "agent" \\ one'}  # escaped on the way out, unescaped by the parser
    assert {s.labels["query"]: s.value for s in families["agentci_cost_usd"].samples} == {
        "passes": 0.5,
        "warns": 0.0,
        "fails": 0.0,
    }
    assert {s.labels["query"] for s in families["agentci_tool_recall"].samples} == {
        "passes",
        "warns",
    }  # only where measured
    assert {s.labels["query"]: s.value for s in families["agentci_pass_rate"].samples}["fails"] == 0.5
    assert families["agentci_suite_pass_rate"].samples[0].value == result.summary.pass_rate
    assert (
        "pass_weight" in families["agentci_suite_composite_score"].documentation
    )  # weights are configurable, not a fixed / 2


def test_prometheus_escapes_label_values_and_writes_infinity():
    assert prometheus.escape_label('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
    assert prometheus.format_value(math.inf) == "+Inf" and prometheus.format_value(3) == "3.0"
    family = "\n".join(prometheus._family("m", "help", [({"q": 'x"\n\\'}, math.inf)])) + "\n"
    (parsed,) = text_string_to_metric_families(family)
    assert parsed.samples[0].labels == {"q": 'x"\n\\'} and parsed.samples[0].value == math.inf


def test_cli_formats(write, write_traces):
    spec = write("s.yaml", SPEC)
    path = write_traces("t.jsonl", [t.model_dump(by_alias=True, exclude_none=True) for t in traces()])
    xml = run_cli("test", "--spec", spec, "--traces", path, "--format", "junit")
    assert xml.returncode == 1 and ET.fromstring(xml.stdout.encode()).tag == "testsuites"
    prom = run_cli("test", "--spec", spec, "--traces", path, "--format", "prometheus")
    assert prom.returncode == 1 and any(f.name == "agentci_score" for f in text_string_to_metric_families(prom.stdout))


class UnavailableJudge:
    def evaluate(self, request):
        return Check(name=request.kind, status=Status.ERROR, message="judge unavailable: HTTP 500 after 3 attempts")


def test_junit_error_for_a_query_that_could_not_be_evaluated(write):
    spec = load_spec(
        write(
            "s.yaml",
            """
        agent: demo
        queries:
          - id: q
            query: "q"
            correctness: {llm_judge: [{rule: "helpful"}]}
        """,
        )
    )
    root = ET.fromstring(
        junit.render(evaluate_spec(spec, [Trace.model_validate({"id": "q"})], judge=UnavailableJudge())).encode()
    )
    assert_junit_structure(root)
    assert root[0].get("errors") == "1"
    (error,) = list(root.find("testsuite/testcase"))
    assert error.tag == "error" and error.get("message") == "correctness: judge unavailable: HTTP 500 after 3 attempts"
    bad = ET.fromstring(
        '<testsuites><testsuite name="x" tests="1" failures="0" errors="0"><testcase/></testsuite></testsuites>'
    )
    with pytest.raises(AssertionError):
        assert_junit_structure(bad)  # the structure check itself rejects a test case without a name

"""JUnit XML: one test case per query, for the test-report tools users already have.

Elements and attributes are those of the Surefire/Jenkins JUnit schema, plus `file` and `line` on
<testcase> (the xunit1 attributes pytest writes and annotating tools read) pointing at the query in the spec.
A failed query is a <failure> (type: the failing layers; message: the first finding that failed, the rule that
blocked), a query that could not be evaluated an <error>.
JUnit has no warnings: a query that passed with warnings is a passing test case whose <system-out> lists
them as `warning: LAYER: message`. time is the query's mean latency in seconds over its runs.
The spec's `suite:` gates follow, one test case each (classname agentci.<agent>.suite, at the gate's line): a
<failure> when the gate failed, <skipped> when its figure is unknown, a `warning:` line in <system-out> when the
noise left it undecided. Against a baseline, a query's pass-rate verdict is a line of its <system-out> (`verdict
against V: regressed: 3 of 10 runs passed vs 9 of 10 in V (p = 0.0099)`). Suite properties carry the pass rate,
composite score and grade, the runs (and with adaptive runs the runs at the maximum), and the suite's change in pass
rate against the baseline with its interval. Untrusted text is escaped by the XML
writer, and characters XML 1.0 cannot hold at all are replaced by U+FFFD.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from agentci_action.compare.diff_schema import RunDiff
from agentci_action.engine.results import LAYERS, GateResult, QueryResult, RunResult, Status
from agentci_action.report import diff_format, finding_phrases

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: object) -> str:
    """Text XML 1.0 can hold: characters outside its Char production become U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


def _seconds(result: QueryResult) -> str:
    return f"{(result.figure('latency_ms') or 0.0) / 1000:.3f}"


def _lines(result: QueryResult, statuses: tuple[Status, ...]) -> list[str]:
    """'layer: message' for every finding of the layers in `statuses`.

    Each labelled with its own status where that is not its layer's (finding_phrases).
    """
    return [
        f"{name}: {line}"
        for name in LAYERS
        if result.layer(name).status in statuses
        for line in finding_phrases.lines(result.layer(name))
    ]


def _first_failure(result: QueryResult) -> str:
    """The first finding that failed (the rule that blocked), as 'layer: message'; else 'failed'."""
    return next(
        (
            f"{name}: {finding.message}"
            for name in LAYERS
            for finding in finding_phrases.said(result.layer(name))
            if finding.status is Status.FAIL
        ),
        "failed",
    )


def testcase(result: QueryResult, agent: str, verdict: str = "") -> ET.Element:
    case = ET.Element(
        "testcase",
        name=xml_text(result.id),
        classname=xml_text(f"agentci.{agent}"),
        file=xml_text(result.file),
        line=str(result.line),
        time=_seconds(result),
    )
    if result.status is Status.ERROR:
        lines = _lines(result, (Status.ERROR,))
        error = ET.SubElement(
            case, "error", message=xml_text(lines[0] if lines else "could not be evaluated"), type="error"
        )
        error.text = xml_text("\n".join(lines))
    elif result.status is Status.FAIL:
        lines = _lines(result, (Status.FAIL, Status.WARN))
        failing = [name for name in LAYERS if result.layer(name).status in (Status.FAIL, Status.WARN)]
        failure = ET.SubElement(case, "failure", message=xml_text(_first_failure(result)), type=",".join(failing))
        failure.text = xml_text("\n".join(lines))
    output = [f"warning: {line}" for line in _lines(result, (Status.WARN,))] if result.status is Status.WARN else []
    output += [verdict] if verdict else []
    if output:
        ET.SubElement(case, "system-out").text = xml_text("\n".join(output))
    return case


def gate_case(gate: GateResult, agent: str) -> ET.Element:
    case = ET.Element(
        "testcase",
        name=f"suite gate {gate.name}",
        classname=xml_text(f"agentci.{agent}.suite"),
        file=xml_text(gate.file),
        line=str(gate.line),
        time="0.000",
    )
    if gate.status is Status.FAIL:
        ET.SubElement(case, "failure", message=xml_text(gate.message), type="suite")
    elif gate.status is Status.SKIP:
        ET.SubElement(case, "skipped", message=xml_text(gate.message))
    elif gate.status is Status.WARN:
        ET.SubElement(case, "system-out").text = xml_text(f"warning: {gate.message}")
    return case


def render(run: RunResult, diff: RunDiff | None = None) -> str:
    s = run.summary
    verdicts = {q.id: diff_format.verdict_text(q, diff) for q in diff.queries} if diff else {}
    cases = [
        testcase(
            r, run.agent, f"verdict against {diff.before}: {verdicts[r.id]}" if diff and verdicts.get(r.id) else ""
        )
        for r in run.results
    ]
    total_time = f"{sum(float(case.get('time', 0)) for case in cases):.3f}"
    failed_gates = sum(g.status is Status.FAIL for g in run.gates)
    counts = {
        "tests": str(s.total + len(run.gates)),
        "failures": str(s.failed + failed_gates),
        "errors": str(s.errors),
    }
    root = ET.Element("testsuites", {"name": "agentci", "time": total_time, **counts})
    skipped = str(sum(g.status is Status.SKIP for g in run.gates))
    suite = ET.SubElement(
        root, "testsuite", {"name": xml_text(run.agent), "time": total_time, "skipped": skipped, **counts}
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("spec", run.spec),
        ("pass_rate", f"{s.pass_rate:.4f}"),
        ("composite_score", f"{s.composite_score:.4f}"),
        ("grade", s.grade),
        ("runs", str(s.runs)),
        *([("max_runs", str(s.max_runs))] if s.max_runs is not None else []),
        *(
            [("pass_rate_change", diff_format.suite_change_text(diff))]
            if diff and diff_format.suite_change_text(diff)
            else []
        ),
    ):
        ET.SubElement(properties, "property", name=f"agentci.{name}", value=xml_text(value))
    suite.extend(cases)
    suite.extend(gate_case(gate, run.agent) for gate in run.gates)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

"""JUnit XML: one test case per query, for the test-report tools users already have.

Elements and attributes are those of the Surefire/Jenkins JUnit schema, plus `file` and `line` on
<testcase> (the xunit1 attributes pytest writes and annotating tools read) pointing at the query in the spec.
A failed query is a <failure> (type: the failing layers), a query that could not be evaluated an <error>.
JUnit has no warnings: a query that passed with warnings is a passing test case whose <system-out> lists
them as `warning: LAYER: message`. time is the query's mean latency in seconds over its runs.
Suite properties carry the pass rate, composite score and grade. Untrusted text is escaped by the XML
writer, and characters XML 1.0 cannot hold at all are replaced by U+FFFD.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..engine.results import LAYERS, QueryResult, RunResult, Status

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: object) -> str:
    """Text XML 1.0 can hold: characters outside its Char production become U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


def _seconds(result: QueryResult) -> str:
    return f"{(result.figure('latency_ms') or 0.0) / 1000:.3f}"


def _lines(result: QueryResult, statuses: tuple[Status, ...]) -> list[str]:
    return [
        f"{name}: {m}" for name in LAYERS if result.layer(name).status in statuses for m in result.layer(name).messages
    ]


def testcase(result: QueryResult, agent: str) -> ET.Element:
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
        failure = ET.SubElement(
            case, "failure", message=xml_text(lines[0] if lines else "failed"), type=",".join(failing)
        )
        failure.text = xml_text("\n".join(lines))
    elif result.status is Status.WARN:
        out = ET.SubElement(case, "system-out")
        out.text = xml_text("\n".join(f"warning: {line}" for line in _lines(result, (Status.WARN,))))
    return case


def render(run: RunResult) -> str:
    s = run.summary
    cases = [testcase(result, run.agent) for result in run.results]
    total_time = f"{sum(float(case.get('time', 0)) for case in cases):.3f}"
    counts = {"tests": str(s.total), "failures": str(s.failed), "errors": str(s.errors)}
    root = ET.Element("testsuites", {"name": "agentci", "time": total_time, **counts})
    suite = ET.SubElement(
        root, "testsuite", {"name": xml_text(run.agent), "time": total_time, "skipped": "0", **counts}
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("spec", run.spec),
        ("pass_rate", f"{s.pass_rate:.4f}"),
        ("composite_score", f"{s.composite_score:.4f}"),
        ("grade", s.grade),
        ("runs", str(s.runs)),
    ):
        ET.SubElement(properties, "property", name=f"agentci.{name}", value=xml_text(value))
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

"""JUnit XML, as CI test report views read it: a suite a file, a failed test case a finding."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby

from ddplint.diagnostics import Diagnostic

# XML 1.0 cannot carry these, not even escaped (a NUL or form feed in a message, a lone surrogate
# from an undecodable file name): they are spelled as Python would, as the text formats print them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _spelled(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    return _NOT_XML.sub(_spelled, text)


def failure_details(d: Diagnostic) -> str:
    lines = [f"{d.filename}:{d.place}: {d.code} {d.message}"]
    lines.extend(d.notes)
    if d.help:
        lines.append(f"help: {d.help}")
    if d.fix is not None:
        lines.append(f"fix: {d.fix.message} ({d.fix.applicability.value})")
    return "\n".join(lines)


def add_test_case(parent: ET.Element, d: Diagnostic) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        name=xml_text(f"{d.code} at {d.place}"),
        classname=xml_text(d.filename),
        file=xml_text(d.filename),
        line=str(d.file_row),  # of the file: in a notebook, the row of its JSON
    )
    failure = ET.SubElement(case, "failure", message=xml_text(d.message), type=d.code)
    failure.text = xml_text(failure_details(d))


def junit_tree(diagnostics: list[Diagnostic]) -> ET.Element:
    count = str(len(diagnostics))
    root = ET.Element("testsuites", name="ddplint", tests=count, failures=count, errors="0")
    for filename, found in groupby(diagnostics, lambda d: d.filename):
        cases = list(found)
        suite = ET.SubElement(
            root, "testsuite", name=xml_text(filename), tests=str(len(cases)), failures=str(len(cases))
        )
        suite.set("errors", "0")
        for d in cases:
            add_test_case(suite, d)
    if not diagnostics:
        # One passing case: some CI systems take a report without tests for a broken run.
        root.set("tests", "1")
        suite = ET.SubElement(root, "testsuite", name="ddplint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="no findings", classname="ddplint")
    return root


def render_junit(diagnostics: list[Diagnostic]) -> str:
    body = ET.tostring(junit_tree(diagnostics), encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'

"""The CI formats (`gitlab`, `junit`, `json-lines`, `pylint`, `azure`, `grouped`), each read back
the way its consumer reads it, over findings with fixes, notes, non-ASCII text and input errors."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from surfaces import EXAMPLE, run

from ddplint import lint_source
from ddplint.diagnostics import INTERNAL_ERROR, input_error
from ddplint.report.azure import escape_data, escape_property, log_issue
from ddplint.report.gitlab import gitlab_issues
from ddplint.report.grouped import render_grouped
from ddplint.report.json_format import diagnostic_dict
from ddplint.report.json_lines import render_json_lines
from ddplint.report.junit import render_junit
from ddplint.report.pylint import render_pylint

# GitLab's documented Code Quality fields (ci/testing/code_quality: "Code Quality report format").
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}

NON_ASCII = "from torch.utils.data import DataLoader\nx = 'é'; DataLoader(d, shuffle=True, sampler=s)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a fixable finding in a non-ASCII file, findings with notes, and a syntax error."""
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\n", encoding="utf-8")
    src = tmp_path / "src"
    src.mkdir()
    (src / "bad.py").write_text("def f(:\n", encoding="utf-8")
    (src / "é train.py").write_text(NON_ASCII, encoding="utf-8")
    shutil.copy(EXAMPLE, src / "train.py")
    return tmp_path


def check(fmt: str, cwd: Path, *paths: str) -> str:
    result = run(["check", "--no-cache", "--output-format", fmt, *paths], cwd=cwd)
    assert result.returncode == 1, result.stderr
    return result.stdout.decode("utf-8")


EXPECTED = [
    ("bad.py", 1, "E999"),
    ("train.py", 38, "DDP002"),
    ("train.py", 39, "DDP001"),
    ("train.py", 48, "DDP004"),
    ("train.py", 52, "DDP005"),
    ("é train.py", 2, "DDP001"),
]


def test_gitlab_report_validates_with_paths_from_the_project_root(project: Path) -> None:
    # Run from a subfolder: paths still start at the folder of the configuration.
    issues = json.loads(check("gitlab", project / "src", "."))
    jsonschema.validate(issues, GITLAB_SCHEMA)
    found = [(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"]) for i in issues]
    assert found == [(f"src/{name}", row, code) for name, row, code in EXPECTED]
    assert {i["severity"] for i in issues} == {"major"}
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert issues[-1]["description"].startswith("DDP001 `DataLoader` is given `shuffle=True`")


def test_gitlab_fingerprints_survive_lines_added_above() -> None:
    before = lint_source(NON_ASCII, filename="train.py")
    shifted = NON_ASCII.replace("\n", "\nimport os\n\n", 1)
    after = lint_source(shifted, filename="train.py")
    assert [d.location.row for d in before] == [2]
    assert [d.location.row for d in after] == [4]
    [old] = gitlab_issues(before, Path.cwd())
    [new] = gitlab_issues(after, Path.cwd())
    assert old["fingerprint"] == new["fingerprint"]
    assert (old["location"]["lines"]["begin"], new["location"]["lines"]["begin"]) == (2, 4)
    # Another file, or another line text, is another issue.
    [elsewhere] = gitlab_issues(lint_source(NON_ASCII, filename="other.py"), Path.cwd())
    edited = lint_source(NON_ASCII.replace("'é'", "'e'"), filename="train.py")
    [changed] = gitlab_issues(edited, Path.cwd())
    assert len({old["fingerprint"], elsewhere["fingerprint"], changed["fingerprint"]}) == 3


def test_gitlab_fingerprints_tell_identical_findings_apart() -> None:
    line = "DataLoader(d, shuffle=True, sampler=s)\n"
    source = "from torch.utils.data import DataLoader\n" + line + "if x:\n    " + line
    diagnostics = lint_source(source, filename="train.py")
    assert [(d.code, d.location.row) for d in diagnostics] == [("DDP001", 2), ("DDP001", 4)]
    first, second = gitlab_issues(diagnostics, Path.cwd())
    assert first["fingerprint"] != second["fingerprint"]
    # Deleting the first leaves the second with the fingerprint the first had: the count matters,
    # not the row, so one issue is reported fixed.
    [left] = gitlab_issues(lint_source(source.replace(line, "", 1), filename="train.py"), Path.cwd())
    assert left["fingerprint"] == first["fingerprint"]


def test_gitlab_input_errors_and_files_outside_the_root(tmp_path: Path) -> None:
    internal = input_error(INTERNAL_ERROR, str(tmp_path / "x.py"), "the checker failed", row=0)
    [issue] = gitlab_issues([internal], tmp_path / "project")
    jsonschema.validate([issue], GITLAB_SCHEMA)
    assert issue["location"] == {"path": (tmp_path / "x.py").as_posix(), "lines": {"begin": 1}}
    assert issue["check_name"] == "E900"


def test_junit_counts_and_failures(project: Path) -> None:
    tree = ET.fromstring(check("junit", project, "src").encode("utf-8"))
    assert tree.tag == "testsuites"
    assert (tree.get("tests"), tree.get("failures"), tree.get("errors")) == ("6", "6", "0")
    suites = tree.findall("testsuite")
    assert [(s.get("name"), s.get("tests"), s.get("failures")) for s in suites] == [
        ("src/bad.py", "1", "1"),
        ("src/train.py", "4", "4"),
        ("src/é train.py", "1", "1"),
    ]
    cases = tree.findall("testsuite/testcase")
    found = [(c.get("file"), int(c.get("line")), c.find("failure").get("type")) for c in cases]
    assert found == [(f"src/{name}", row, code) for name, row, code in EXPECTED]
    ddp005 = cases[4].find("failure")
    assert ddp005.get("message").startswith("`model(...)` (forward of the DDP-wrapped model")
    # The notes (each rank's timeline) and the help follow the message.
    body = ddp005.text.splitlines()
    assert body[1].startswith("rank 0:") and body[2].startswith("other ranks:")
    assert body[3].startswith("help: run the evaluation through the wrapped module")
    fix = "\nfix: Shuffle only when there is no sampler: `shuffle=(s is None)` (safe)"
    assert cases[5].find("failure").text.endswith(fix)


def test_junit_without_findings_is_a_passing_report(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    result = run(["check", "--no-cache", "--output-format", "junit", "."], cwd=tmp_path)
    assert result.returncode == 0
    tree = ET.fromstring(result.stdout)
    assert (tree.get("tests"), tree.get("failures")) == ("1", "0")
    assert tree.findall(".//failure") == []
    assert len(tree.findall(".//testcase")) == 1


def test_junit_keeps_characters_xml_cannot_carry_parsable() -> None:
    d = input_error(INTERNAL_ERROR, "a\udcff.py", "bad byte \x00 and form feed \x0c <&>")
    tree = ET.fromstring(render_junit([d]).encode("utf-8"))
    failure = tree.find(".//failure")
    assert failure.get("message") == "bad byte \\x00 and form feed \\x0c <&>"
    assert tree.find("testsuite").get("name") == "a\\udcff.py"


def test_json_lines_are_the_json_objects(project: Path) -> None:
    lines = check("json-lines", project, "src").splitlines()
    assert [json.loads(line) for line in lines] == json.loads(check("json", project, "src"))
    assert "é" in lines[-1]
    assert render_json_lines([]) == ""
    internal = input_error(INTERNAL_ERROR, "x.py", "failed")
    assert json.loads(render_json_lines([internal])) == diagnostic_dict(internal)


def test_pylint_lines(project: Path) -> None:
    lines = check("pylint", project, "src").splitlines()
    prefixes = [f"src/{name}:{row}: [{code}] " for name, row, code in EXPECTED]
    assert [line[: len(prefix)] for line, prefix in zip(lines, prefixes)] == prefixes
    assert len(lines) == len(EXPECTED)
    assert lines[-1].endswith(
        "] `DataLoader` is given `shuffle=True` and `sampler=s`: it raises "
        "`ValueError: sampler option is mutually exclusive with shuffle` at construction "
        "whenever `s` is not None"
    )
    assert render_pylint([]) == ""


def test_azure_escaping() -> None:
    assert escape_data("100%;a]\r\nb") == "100%AZP25;a]%0D%0Ab"
    assert escape_property("a;b]c%\r\n") == "a%3Bb%5Dc%AZP25%0D%0A"


def test_azure_log_issues(project: Path) -> None:
    lines = check("azure", project, "src").splitlines()
    assert len(lines) == len(EXPECTED)
    assert lines[-1].startswith(
        "##vso[task.logissue type=error;sourcepath=src/é train.py;linenumber=2;columnnumber=24;"
        "code=DDP001;]`DataLoader` is given"
    )
    d = input_error(INTERNAL_ERROR, "a;b].py", "line one\nline two; 100%]")
    assert log_issue(d) == (
        "##vso[task.logissue type=error;sourcepath=a%3Bb%5D.py;linenumber=1;columnnumber=1;"
        "code=E900;]line one%0Aline two; 100%AZP25]\n"
    )


def test_grouped_by_file(project: Path) -> None:
    result = run(["check", "--no-cache", "--output-format", "grouped", "src"], cwd=project)
    out = result.stdout.decode("utf-8")
    groups = out.split("\n\n")
    assert [g.splitlines()[0] for g in groups[:3]] == ["src/bad.py:", "src/train.py:", "src/é train.py:"]
    assert groups[1].splitlines()[1:3] == [
        "  38:15 DDP002 [*] " + groups[1].splitlines()[1].split("[*] ", 1)[1],
        "  39:48 DDP001 [*] " + groups[1].splitlines()[2].split("[*] ", 1)[1],
    ]
    assert groups[1].splitlines()[4].startswith("  52:46 DDP005 `model(...)`")
    assert groups[2].splitlines()[1].startswith("  2:24 DDP001 [*] `DataLoader` is given")
    # The text summary follows, as with `concise`.
    assert groups[-1].splitlines()[-3:] == [
        "Found 6 errors.",
        "[*] 3 fixable with the `--fix` option.",
        "1 more fixable with the `--unsafe-fixes` option.",
    ]
    assert render_grouped([]) == ""


def test_grouped_pads_rows_and_columns_to_line_up() -> None:
    a = input_error(INTERNAL_ERROR, "x.py", "first", row=9, column=1)
    b = input_error(INTERNAL_ERROR, "x.py", "second", row=10, column=12)
    assert render_grouped([a, b]) == "x.py:\n   9:1  E900 first\n  10:12 E900 second\n"


def test_gitlab_fingerprints_are_the_same_from_the_cache(project: Path) -> None:
    def report(*options: str) -> str:
        result = run(["check", *options, "--output-format", "gitlab", "src"], cwd=project)
        return result.stdout.decode("utf-8")

    fresh = report("--no-cache")
    assert report() == fresh  # writes the cache
    assert (project / ".ddplint_cache").is_dir()
    assert report() == fresh  # reads it

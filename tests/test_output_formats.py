"""`--output-format github` and `sarif` (validated against the OASIS schema), `--statistics`."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from surfaces import EXAMPLE_FINDINGS, REPO, TWO, run

from ddplint import lint_source
from ddplint.report.github import annotation, escape_data, escape_property
from ddplint.report.sarif import sarif_log
from ddplint.rules import ALL_RULES
from ddplint.rules.pages import page_sections

SARIF_SCHEMA = REPO.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def sarif_validator():
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"the SARIF 2.1.0 schema is not at {SARIF_SCHEMA} (shared/ beside the clone)")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_github_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("C:\\a,b%\n") == "C%3A\\a%2Cb%25%0A"


def test_github_annotations_of_the_example() -> None:
    result = run(["check", "--output-format", "github", "examples/"], cwd=REPO)
    assert result.returncode == 1
    lines = result.stdout.decode().splitlines()
    assert len(lines) == len(EXAMPLE_FINDINGS)
    assert lines[1].startswith(
        "::error file=examples/train.py,line=39,col=48,endLine=39,endColumn=60,"
        "title=ddplint (DDP001)::examples/train.py:39:48: DDP001 `DataLoader` is given"
    )
    assert lines[0].startswith("::error file=examples/train.py,line=38,col=15,")


def test_github_escapes_file_names_and_messages() -> None:
    source = "from torch.utils.data import DataLoader\nDataLoader(d, shuffle=True, sampler=s)\n"
    [d] = lint_source(source, filename="a,b:c%.py")
    d.message = "line one\nline two: 100%"
    assert annotation(d) == (
        "::error file=a%2Cb%3Ac%25.py,line=2,col=15,endLine=2,endColumn=27,title=ddplint (DDP001)"
        "::a,b:c%25.py:2:15: DDP001 line one%0Aline two: 100%25\n"
    )


def test_sarif_of_the_examples_validates(sarif_validator) -> None:
    result = run(["check", "--output-format", "sarif", "examples/"], cwd=REPO)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    sarif_validator.validate(log)
    [sarif_run] = log["runs"]
    assert sarif_run["columnKind"] == "unicodeCodePoints"
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in ALL_RULES]
    found = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in sarif_run["results"]
    ]
    assert found == [(code, "examples/train.py", row, col) for row, col, code in EXAMPLE_FINDINGS]
    for r in sarif_run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] == "error"


def test_sarif_rules_come_from_the_rule_pages() -> None:
    [sarif_run] = sarif_log([])["runs"]
    ddp001 = sarif_run["tool"]["driver"]["rules"][0]
    page = (REPO / "rules" / "DDP001.md").read_text(encoding="utf-8")
    assert ddp001["name"] == "shuffle-with-sampler"
    assert ddp001["shortDescription"]["text"] == ALL_RULES[0].summary
    assert ddp001["fullDescription"]["text"] == page_sections("DDP001")["What it does"]
    assert ddp001["help"]["markdown"] == page
    assert ddp001["helpUri"].endswith("/rules/DDP001.md")
    assert ddp001["defaultConfiguration"] == {"level": "error"}


def test_sarif_region_fixes_and_input_errors_validate(sarif_validator, tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def f(:\n", encoding="utf-8")
    (tmp_path / "é train.py").write_text(
        "from torch.utils.data import DataLoader\nx = 'é'; DataLoader(d, shuffle=True, sampler=s)\n",
        encoding="utf-8",
    )
    result = run(["check", "--output-format", "sarif", "."], cwd=tmp_path)
    log = json.loads(result.stdout)
    sarif_validator.validate(log)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["E999", "DDP001"]
    assert "ruleIndex" not in results[0]
    location = results[1]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "%C3%A9%20train.py", "uriBaseId": "%SRCROOT%"}
    # Columns count code points: `é` is one column.
    assert location["region"] == {"startLine": 2, "startColumn": 24, "endLine": 2, "endColumn": 36}
    [change] = results[1]["fixes"][0]["artifactChanges"]
    # `s` may be None: the fix rewrites the value to `(s is None)`.
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 2, "startColumn": 32, "endLine": 2, "endColumn": 36},
            "insertedContent": {"text": "(s is None)"},
        }
    ]


def test_statistics_count_per_code() -> None:
    result = run(["check", "--statistics", "examples/"], cwd=REPO)
    assert result.returncode == 1
    assert result.stdout.decode() == (
        "1\tDDP001\t[*] shuffle-with-sampler\n"
        "1\tDDP002\t[*] missing-set-epoch\n"
        "1\tDDP004\t[ ] divergent-exit-before-collective\n"
        "1\tDDP005\t[ ] collective-in-rank-branch\n"
    )
    as_json = run(["check", "--statistics", "--output-format", "json", "examples/"], cwd=REPO)
    assert json.loads(as_json.stdout)[:2] == [
        {"code": "DDP001", "name": "shuffle-with-sampler", "count": 1, "fixable": True},
        {"code": "DDP002", "name": "missing-set-epoch", "count": 1, "fixable": True},
    ]
    assert [s["code"] for s in json.loads(as_json.stdout)] == ["DDP001", "DDP002", "DDP004", "DDP005"]


def test_show_fixes_lists_what_was_fixed(tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_bytes(TWO.read_bytes())
    result = run(["check", "--fix", "--show-fixes", "train.py"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.decode() == (
        "Fixed 2 errors:\n"
        "- train.py:\n"
        "    1 \u00d7 DDP001 (shuffle-with-sampler)\n"
        "    1 \u00d7 DDP002 (missing-set-epoch)\n"
        "Found 2 errors (2 fixed, 0 remaining).\n"
    )

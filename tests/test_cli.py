"""The `ddplint` console script, run as a user runs it: exit codes, formats, fixes, selection."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ddplint

DDPLINT = str(Path(sys.executable).with_name("ddplint"))

BAD = """\
from torch.utils.data import DataLoader, DistributedSampler


def main(ds):
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler)
    for epoch in range(3):
        for batch in loader:
            batch.sum().backward()
"""

BAD_FIXED = """\
from torch.utils.data import DataLoader, DistributedSampler


def main(ds):
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=2, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch.sum().backward()
"""

# A finding without a fix next to one with a fix.
PARTLY_FIXABLE = """\
from torch.utils.data import DataLoader


def make(ds, batches):
    a = DataLoader(ds, batch_sampler=batches, drop_last=True)
    b = DataLoader(ds, shuffle=True, sampler=batches)
    return a, b
"""

CLEAN = "from torch.utils.data import DataLoader\n\nloader = DataLoader([1, 2, 3], batch_size=2)\n"

OLD = 1_000_000_000  # a modification time no run can produce by accident


def ddplint_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DDPLINT, *args], cwd=cwd, capture_output=True, text=True, check=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (OLD, OLD))
    return path


def codes(stdout: str) -> list[tuple[str, int, str]]:
    """(filename, row, code) from concise output."""
    out = []
    for line in stdout.splitlines():
        filename, row, _column, rest = line.split(":", 3)
        out.append((filename, int(row), rest.split()[0]))
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "bad.py", BAD)
    write(tmp_path / "clean.py", CLEAN)
    return tmp_path


# Exit codes ----------------------------------------------------------------------------------


def test_clean_file_exits_0(project: Path) -> None:
    done = ddplint_cli("check", "clean.py", cwd=project)
    assert done.returncode == 0
    assert done.stdout == "All checks passed!\n"


def test_findings_exit_1(project: Path) -> None:
    done = ddplint_cli("check", "--output-format", "concise", cwd=project)
    assert done.returncode == 1
    assert codes(done.stdout.split("Found")[0]) == [("bad.py", 5, "DDP002"), ("bad.py", 6, "DDP001")]


# What `--diff` prints for BAD after the file names.
HUNK = "".join(
    f"{line}\n"
    for line in (
        "@@ -3,7 +3,8 @@",
        " ",
        " def main(ds):",
        "     sampler = DistributedSampler(ds)",
        "-    loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler)",
        "+    loader = DataLoader(ds, batch_size=2, sampler=sampler)",
        "     for epoch in range(3):",
        "+        sampler.set_epoch(epoch)",
        "         for batch in loader:",
        "             batch.sum().backward()",
    )
)


def test_diff_written_to_a_pipe_arrives_whole(tmp_path: Path) -> None:
    # The command ends its process without tearing the heap down: what it wrote must be
    # flushed first (`--diff` writes to stdout directly, and a pipe is block-buffered).
    write(tmp_path / "bad.py", BAD)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    argv = [DDPLINT, "check", "--diff", "--no-cache", "bad.py"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 1
    assert done.stdout == f"--- a/bad.py\n+++ b/bad.py\n{HUNK}"


def test_unknown_code_in_select_exits_2(project: Path) -> None:
    done = ddplint_cli("check", "--select", "DDP9", "bad.py", cwd=project)
    assert done.returncode == 2
    assert "DDP9" in done.stderr
    assert done.stdout == ""


def test_missing_path_exits_2(project: Path) -> None:
    done = ddplint_cli("check", "no_such_file.py", cwd=project)
    assert done.returncode == 2
    assert "no_such_file.py" in done.stderr


def test_unknown_option_exits_2(project: Path) -> None:
    assert ddplint_cli("check", "--no-such-option", cwd=project).returncode == 2


def test_exit_zero_still_prints(project: Path) -> None:
    done = ddplint_cli("check", "--exit-zero", "--output-format", "concise", "bad.py", cwd=project)
    assert done.returncode == 0
    assert [c for _, _, c in codes(done.stdout.split("Found")[0])] == ["DDP002", "DDP001"]


def test_version() -> None:
    done = subprocess.run([DDPLINT, "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout == f"ddplint, version {ddplint.__version__}\n"


# Output formats ------------------------------------------------------------------------------


def test_concise_format_and_summary(project: Path) -> None:
    done = ddplint_cli("check", "--output-format", "concise", "bad.py", cwd=project)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("bad.py:5:15: DDP002 [*] `DistributedSampler` `sampler` shuffles")
    assert lines[1] == (
        "bad.py:6:43: DDP001 [*] `DataLoader` is given `shuffle=True` and `sampler=sampler`: it raises "
        "`ValueError: sampler option is mutually exclusive with shuffle` at construction"
    )
    assert lines[2:] == ["Found 2 errors.", "[*] 2 fixable with the `--fix` option."]


def test_full_format_shows_source_and_carets(project: Path) -> None:
    done = ddplint_cli("check", "bad.py", cwd=project)
    lines = done.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("bad.py:6:43: DDP001")))
    assert lines[header].startswith("bad.py:6:43: DDP001 [*] [shuffle-with-sampler] `DataLoader` is given")
    assert lines[header + 1 : header + 6] == [
        "  |",
        "6 |     loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler)",
        "  |                                           ^^^^^^^^^^^^",
        "  |",
        "  = help: the sampler decides the order (`DistributedSampler` shuffles by default); "
        "remove `shuffle=True`",
    ]


def test_quiet_prints_findings_without_summary(project: Path) -> None:
    done = ddplint_cli("check", "-q", "--output-format", "concise", "bad.py", cwd=project)
    assert done.returncode == 1
    assert len(done.stdout.splitlines()) == 2
    assert "Found" not in done.stdout
    clean = ddplint_cli("check", "-q", "clean.py", cwd=project)
    assert (clean.returncode, clean.stdout) == (0, "")


def test_json_has_ruff_shape(project: Path) -> None:
    write(project / "sub" / "bad.py", BAD)
    done = ddplint_cli("check", "--output-format", "json", "sub/bad.py", cwd=project)
    assert done.returncode == 1
    findings = json.loads(done.stdout)
    assert [f["code"] for f in findings] == ["DDP002", "DDP001"]
    keys = ["code", "name", "message", "filename", "cell", "location", "end_location", "noqa_row", "url"]
    keys += ["severity", "fix"]
    assert all(list(f) == keys for f in findings)
    shuffle = findings[1]
    assert shuffle == {
        "code": "DDP001",
        "name": "shuffle-with-sampler",
        "message": "`DataLoader` is given `shuffle=True` and `sampler=sampler`: it raises "
        "`ValueError: sampler option is mutually exclusive with shuffle` at construction",
        "filename": "sub/bad.py",
        "cell": None,
        "location": {"row": 6, "column": 43},
        "end_location": {"row": 6, "column": 55},
        "noqa_row": 6,
        "url": "https://github.com/ddplint/ddplint/blob/main/rules/DDP001.md",
        "severity": "error",
        "fix": {
            "applicability": "safe",
            "message": "Remove `shuffle=True`",
            "edits": [
                {
                    "content": "",
                    "location": {"row": 6, "column": 43},
                    "end_location": {"row": 6, "column": 57},
                }
            ],
        },
    }
    epoch = findings[0]
    assert (epoch["location"], epoch["end_location"]) == ({"row": 5, "column": 15}, {"row": 5, "column": 37})
    assert epoch["fix"]["edits"] == [
        {
            "content": "sampler.set_epoch(epoch)\n        ",
            "location": {"row": 8, "column": 9},
            "end_location": {"row": 8, "column": 9},
        }
    ]


def test_json_without_findings_is_an_empty_list(project: Path) -> None:
    done = ddplint_cli("check", "--output-format", "json", "clean.py", cwd=project)
    assert (done.returncode, json.loads(done.stdout)) == (0, [])


# --diff and --fix ----------------------------------------------------------------------------


def test_diff_prints_and_writes_nothing(project: Path) -> None:
    before = (project / "bad.py").stat()
    done = ddplint_cli("check", "--diff", "bad.py", "clean.py", cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["--- a/bad.py", "+++ b/bad.py", *HUNK.splitlines()]
    after = (project / "bad.py").stat()
    assert after.st_mtime_ns == before.st_mtime_ns
    assert (project / "bad.py").read_text(encoding="utf-8") == BAD


def test_diff_without_changes_exits_0(project: Path) -> None:
    done = ddplint_cli("check", "--diff", "clean.py", cwd=project)
    assert (done.returncode, done.stdout) == (0, "")


def test_fix_rewrites_and_reports_counts(project: Path) -> None:
    done = ddplint_cli("check", "--fix", ".", cwd=project)
    assert done.returncode == 0
    assert done.stdout == "Found 2 errors (2 fixed, 0 remaining).\n"
    assert (project / "bad.py").read_text(encoding="utf-8") == BAD_FIXED
    assert (project / "clean.py").stat().st_mtime_ns == OLD * 10**9


def test_fix_reports_what_remains(project: Path) -> None:
    write(project / "partly.py", PARTLY_FIXABLE)
    done = ddplint_cli("check", "--fix", "--output-format", "concise", "partly.py", cwd=project)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert codes("\n".join(lines[:-1])) == [("partly.py", 5, "DDP001")]
    assert lines[-1] == "Found 2 errors (1 fixed, 1 remaining)."
    text = (project / "partly.py").read_text(encoding="utf-8")
    # `batches` is a parameter and may be None: shuffle only then.
    assert "    b = DataLoader(ds, shuffle=(batches is None), sampler=batches)\n" in text


def test_fix_leaves_a_file_without_fixes_alone(project: Path) -> None:
    write(project / "nofix.py", PARTLY_FIXABLE.replace("shuffle=True, ", ""))
    done = ddplint_cli("check", "--fix", "nofix.py", "clean.py", cwd=project)
    assert done.returncode == 1
    assert (project / "nofix.py").stat().st_mtime_ns == OLD * 10**9
    assert (project / "clean.py").stat().st_mtime_ns == OLD * 10**9


# Selection and suppression -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ((), ["DDP002", "DDP001"]),
        (("--select", "ALL"), ["DDP002", "DDP001"]),
        (("--select", "DDP00"), ["DDP002", "DDP001"]),
        (("--select", "DDP001"), ["DDP001"]),
        (("--select", "DDP001,DDP002"), ["DDP002", "DDP001"]),
        (("--ignore", "DDP002"), ["DDP001"]),
        (("--select", "ALL", "--ignore", "DDP"), []),
        (("--select", "DDP001", "--extend-select", "DDP002"), ["DDP002", "DDP001"]),
    ],
)
def test_select_and_ignore(project: Path, options: tuple[str, ...], expected: list[str]) -> None:
    done = ddplint_cli("check", "-q", "--output-format", "concise", *options, "bad.py", cwd=project)
    assert [c for _, _, c in codes(done.stdout)] == expected
    assert done.returncode == (1 if expected else 0)


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# noqa: DDP001", ["DDP002"]),
        ("# noqa: DDP", ["DDP002"]),
        ("# noqa:DDP001,DDP002", ["DDP002"]),
        ("# noqa", ["DDP002"]),
        ("# NOQA", ["DDP002"]),
        ("# noqa: DDP002", ["DDP002", "DDP001"]),
    ],
)
def test_noqa_on_the_finding_line(project: Path, comment: str, expected: list[str]) -> None:
    marked = BAD.replace("sampler=sampler)\n", f"sampler=sampler)  {comment}\n")
    write(project / "marked.py", marked)
    done = ddplint_cli("check", "-q", "--output-format", "concise", "marked.py", cwd=project)
    assert [c for _, _, c in codes(done.stdout)] == expected


# Bad input -----------------------------------------------------------------------------------


@pytest.fixture
def with_broken(project: Path) -> Path:
    write(project / "broken.py", "def train(:\n    pass\n")
    (project / "latin.py").write_bytes(b"name = '\xe9t\xe9'\n")
    return project


def test_unparsable_files_reported_in_concise(with_broken: Path) -> None:
    done = ddplint_cli("check", "--output-format", "concise", ".", cwd=with_broken)
    assert done.returncode == 1
    found = codes(done.stdout.split("Found")[0])
    assert [c for c in found if c[0] == "bad.py"] == [("bad.py", 5, "DDP002"), ("bad.py", 6, "DDP001")]
    assert [(c[0], c[2]) for c in found if c[0] != "bad.py"] == [("broken.py", "E999"), ("latin.py", "E902")]
    assert "broken.py:" in done.stdout and ": E999 cannot parse" in done.stdout
    assert "latin.py:1:1: E902 cannot read file" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_unparsable_files_reported_in_full(with_broken: Path) -> None:
    done = ddplint_cli("check", ".", cwd=with_broken)
    assert done.returncode == 1
    assert "E999 [syntax-error] cannot parse" in done.stdout
    assert "latin.py:1:1: E902 [io-error] cannot read file" in done.stdout
    assert "bad.py:6:43: DDP001" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_unparsable_files_reported_in_json(with_broken: Path) -> None:
    done = ddplint_cli("check", "--output-format", "json", ".", cwd=with_broken)
    assert done.returncode == 1
    findings = json.loads(done.stdout)
    by_file = [(f["filename"], f["code"]) for f in findings]
    expected = [("bad.py", "DDP002"), ("bad.py", "DDP001"), ("broken.py", "E999"), ("latin.py", "E902")]
    assert by_file == expected
    broken = next(f for f in findings if f["code"] == "E999")
    assert broken["message"].startswith("cannot parse")
    assert broken["fix"] is None


def test_unparsable_file_alone_is_not_a_success(with_broken: Path) -> None:
    done = ddplint_cli("check", "--fix", "broken.py", cwd=with_broken)
    assert done.returncode == 1
    assert "broken.py" in done.stdout
    assert (with_broken / "broken.py").stat().st_mtime_ns == OLD * 10**9


class _Exited(Exception):
    pass


def _exit_instead(code: int) -> None:
    raise _Exited(code)


def test_the_command_runs_with_the_cycle_collector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process ends at once after the run: a collection would only walk the trees it held."""
    from ddplint.integrations import cli

    seen = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(gc.isenabled()))
    monkeypatch.setattr(cli.os, "_exit", _exit_instead)
    gc.enable()
    try:
        with pytest.raises((_Exited, SystemExit)):  # SystemExit under a tracer (coverage)
            cli.entry()
    finally:
        gc.enable()
    assert seen == [False]


def test_the_language_server_runs_with_the_cycle_collector_on(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pygls", reason="`ddplint server` needs the lsp extra (pygls)")
    from click.testing import CliRunner

    from ddplint.integrations import cli, server

    seen = []
    monkeypatch.setattr(server, "serve", lambda: seen.append(gc.isenabled()))
    gc.disable()
    try:
        result = CliRunner().invoke(cli.main, ["server"])
    finally:
        gc.enable()
    assert result.exit_code == 0, result.output
    assert seen == [True]


# `ddplint clean` -----------------------------------------------------------------------------


def test_clean_removes_the_cache_a_run_kept_and_those_below(project: Path) -> None:
    sub = project / "sub"
    write(sub / "bad.py", BAD)
    assert ddplint_cli("check", cwd=project).returncode == 1
    assert ddplint_cli("check", cwd=sub).returncode == 1
    not_ours = project / "other" / ".ddplint_cache"
    write(not_ours / "keep.txt", "not made by ddplint\n")
    done = ddplint_cli("clean", cwd=project)
    assert done.returncode == 0
    removed = [project / ".ddplint_cache", sub / ".ddplint_cache"]
    assert done.stdout == "".join(f"Removed {p.resolve()}\n" for p in removed)
    assert not any(p.exists() for p in removed)
    assert (not_ours / "keep.txt").is_file()
    assert ddplint_cli("clean", cwd=project).stdout == "No cache found.\n"


def test_clean_finds_the_cache_of_the_project_a_path_belongs_to(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ddplint]\n")
    write(tmp_path / "pkg" / "bad.py", BAD)
    assert ddplint_cli("check", "pkg", cwd=tmp_path).returncode == 1
    done = ddplint_cli("clean", "bad.py", "missing.py", cwd=tmp_path / "pkg")
    assert done.returncode == 2
    assert done.stdout == f"Removed {(tmp_path / '.ddplint_cache').resolve()}\n"
    assert done.stderr == "ddplint: missing.py: no such file or folder\n"


def test_clean_says_when_it_cannot_remove_a_cache(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from ddplint.integrations import cli

    assert ddplint_cli("check", cwd=project).returncode == 1
    monkeypatch.chdir(project)
    monkeypatch.setattr(cli.shutil, "rmtree", lambda path, ignore_errors=False: None)  # as if denied
    done = CliRunner().invoke(cli.main, ["clean"])
    assert done.exit_code == 2
    assert (
        done.stderr == f"ddplint: {(project / '.ddplint_cache').resolve()}: could not be removed entirely\n"
    )
    assert done.stdout == ""

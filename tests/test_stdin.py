"""`ddplint check --stdin-filename PATH -`: source from stdin, findings under PATH, fixes to stdout."""

from __future__ import annotations

from pathlib import Path

from surfaces import EXAMPLE, EXAMPLE_FINDINGS, TWO, positions, run

EXAMPLE_BYTES = EXAMPLE.read_bytes()


def test_findings_are_reported_under_the_given_name(tmp_path: Path) -> None:
    result = run(
        ["check", "--output-format", "concise", "--stdin-filename", "path/to/train.py", "-"],
        cwd=tmp_path,
        input=EXAMPLE_BYTES,
    )
    assert result.returncode == 1
    assert positions(result.stdout.decode()) == [
        ("path/to/train.py", row, col, code) for row, col, code in EXAMPLE_FINDINGS
    ]


def test_stdin_filename_alone_reads_stdin(tmp_path: Path) -> None:
    result = run(
        ["check", "--output-format", "concise", "--stdin-filename", "t.py"], cwd=tmp_path, input=b"x = 1\n"
    )
    assert (result.returncode, result.stdout.decode()) == (0, "All checks passed!\n")


def test_fix_writes_the_fixed_source_to_stdout(tmp_path: Path) -> None:
    # CRLF newlines and a BOM come back as they went in.
    source = b"\xef\xbb\xbf" + TWO.read_bytes().replace(b"\n", b"\r\n")
    result = run(["check", "--fix", "--stdin-filename", "train.py", "-"], cwd=tmp_path, input=source)
    assert result.returncode == 0
    fixed = result.stdout
    assert fixed.startswith(b"\xef\xbb\xbf")
    assert b"shuffle=True, sampler=sampler" not in fixed
    assert b"    for epoch in range(5):\r\n        sampler.set_epoch(epoch)\r\n" in fixed
    assert fixed.replace(b"\r\n", b"").count(b"\n") == 0
    # Findings and the summary go to stderr, so stdout is only the source.
    assert "Found 2 errors (2 fixed, 0 remaining)." in result.stderr.decode()
    # Nothing is written to disk.
    assert list(tmp_path.iterdir()) == []


def test_fix_with_nothing_to_fix_echoes_the_source(tmp_path: Path) -> None:
    result = run(["check", "--fix", "--stdin-filename", "a.py", "-"], cwd=tmp_path, input=b"x = 1\n")
    assert (result.returncode, result.stdout) == (0, b"x = 1\n")


def test_syntax_error_on_stdin_is_reported_not_raised(tmp_path: Path) -> None:
    result = run(
        ["check", "--output-format", "concise", "--stdin-filename", "a.py", "-"],
        cwd=tmp_path,
        input=b"def f(:\n",
    )
    assert result.returncode == 1
    assert [p[3] for p in positions(result.stdout.decode())] == ["E999"]


def test_force_exclude_skips_an_excluded_stdin_filename(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nextend-exclude = ["vendored/"]\n')
    args = ["check", "--force-exclude", "--stdin-filename", "vendored/train.py", "-"]
    result = run(args, cwd=tmp_path, input=EXAMPLE_BYTES)
    assert (result.returncode, result.stdout) == (0, b"")
    fixed = run([*args[:1], "--fix", *args[1:]], cwd=tmp_path, input=EXAMPLE_BYTES)
    assert (fixed.returncode, fixed.stdout) == (0, EXAMPLE_BYTES)
    # Without --force-exclude, a name given explicitly is checked.
    kept = run(["check", "--stdin-filename", "vendored/train.py", "-"], cwd=tmp_path, input=EXAMPLE_BYTES)
    assert kept.returncode == 1


def test_dash_cannot_be_mixed_with_paths(tmp_path: Path) -> None:
    result = run(["check", "-", "a.py"], cwd=tmp_path, input=b"")
    assert result.returncode == 2
    assert "cannot be combined" in result.stderr.decode()


def test_diff_prints_the_fixes_and_writes_nothing(tmp_path: Path) -> None:
    result = run(
        ["check", "--diff", "--stdin-filename", "train.py", "-"], cwd=tmp_path, input=TWO.read_bytes()
    )
    assert result.returncode == 1
    diff = result.stdout.decode()
    assert diff.startswith("--- a/train.py\n+++ b/train.py\n")
    assert "+        sampler.set_epoch(epoch)\n" in diff
    assert list(tmp_path.iterdir()) == []

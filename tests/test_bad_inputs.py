"""Bad input never stops a run: each case names the file and the reason, the other file is
still checked, and the exit code is the documented one (1: findings, E902/E999 included;
2: usage or configuration error)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest
from robust_support import GOOD, ddplint, finding_lines, good_finding

from ddplint.report import FORMAT_NAMES


def _check_with_good(tmp_path: Path, name: str, content: bytes) -> list[str]:
    """Lint a bad file beside a good one; return the bad file's lines, check the rest."""
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / name).write_bytes(content)
    outcome = ddplint(tmp_path, ".")
    assert [line for line in outcome.lines if line.startswith("good.py")] == [
        line for line in outcome.lines if line.startswith(good_finding())
    ]
    assert len(finding_lines(outcome, "good.py")) == 1
    assert outcome.exit_code == 1
    assert "Traceback" not in outcome.stdout + outcome.stderr
    return finding_lines(outcome, name)


def test_syntax_error(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "bad.py", b"def f(:\n    pass\n")
    assert lines == ["bad.py:1:7: E999 cannot parse: invalid syntax"]


def test_python2_code(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "py2.py", b'x = 1\nprint "hello"\nexec "y = 2"\n')
    assert len(lines) == 1
    assert lines[0].startswith("py2.py:2:1: E999 cannot parse: Missing parentheses in call to 'print'")


def test_syntax_error_message_is_bounded(tmp_path: Path) -> None:
    """libcst lists every token it expected; a 60 kB line must not be printed whole."""
    lines = _check_with_good(tmp_path, "long.py", b"x = [" + b"1, " * 20_000 + b"\n")
    assert len(lines) == 1 and lines[0].startswith("long.py:1:") and len(lines[0]) < 400


def test_non_utf8_bytes(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "bytes.py", b'x = 1\ny = "caf\xe9"\n')
    assert lines == ["bytes.py:1:1: E902 cannot read file: not valid utf-8 (byte 0xe9 on line 2)"]


def test_non_utf8_first_line(tmp_path: Path) -> None:
    # tokenize looks for a coding cookie on the first two lines and gives up there.
    lines = _check_with_good(tmp_path, "bytes.py", b'x = "\xff"\n')
    assert lines == [
        "bytes.py:1:1: E902 cannot read file: not valid UTF-8 (byte 0xff on line 1) "
        "and no coding declaration says otherwise"
    ]


def test_unknown_coding_cookie(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "cookie.py", b"# -*- coding: klingon -*-\nx = 1\n")
    assert lines == [
        "cookie.py:1:1: E902 cannot read file: bad encoding declaration: unknown encoding: klingon"
    ]


def test_utf8_bom_is_read_and_columns_skip_it(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "bom.py", b"\xef\xbb\xbf" + GOOD.encode())
    assert len(lines) == 1 and lines[0].startswith(good_finding("bom.py"))


def test_latin1_coding_cookie(tmp_path: Path) -> None:
    text = "# -*- coding: latin-1 -*-\n" + GOOD + "name = 'café'  # é\n"
    lines = _check_with_good(tmp_path, "latin.py", text.encode("latin-1"))
    assert len(lines) == 1 and lines[0].startswith("latin.py:4:25: DDP001 ")


def test_crlf_newlines(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "crlf.py", GOOD.replace("\n", "\r\n").encode())
    assert len(lines) == 1 and lines[0].startswith(good_finding("crlf.py"))


def test_mixed_newlines(tmp_path: Path) -> None:
    text = (
        "import os\r\nx = 1\rfrom torch.utils.data import DataLoader\n\n"
        "DataLoader(ds, shuffle=True, sampler=s)\r\n"
    )
    lines = _check_with_good(tmp_path, "mixed.py", text.encode())
    assert len(lines) == 1 and lines[0].startswith("mixed.py:5:16: DDP001 ")


def test_tabs(tmp_path: Path) -> None:
    text = (
        "from torch.utils.data import DataLoader\n\n"
        "if True:\n\tloader = DataLoader(ds, shuffle=True, sampler=s)\n"
    )
    lines = _check_with_good(tmp_path, "tabs.py", text.encode())
    assert len(lines) == 1 and lines[0].startswith("tabs.py:4:26: DDP001 ")


def test_empty_file(tmp_path: Path) -> None:
    assert _check_with_good(tmp_path, "empty.py", b"") == []


def test_only_whitespace_and_comments(tmp_path: Path) -> None:
    assert _check_with_good(tmp_path, "blank.py", b"\n\n   \n# nothing here\n") == []


def test_nul_bytes(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "nul.py", b"x = 1\x00\n")
    assert lines == ["nul.py:1:1: E902 cannot read file: file contains NUL bytes (binary file?)"]


def test_binary_file_named_py(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "image.py", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    assert lines == ["image.py:1:1: E902 cannot read file: file contains NUL bytes (binary file?)"]


def test_binary_file_without_nul(tmp_path: Path) -> None:
    lines = _check_with_good(tmp_path, "blob.py", bytes(range(128, 256)))
    assert lines == [
        "blob.py:1:1: E902 cannot read file: not valid UTF-8 (byte 0x80 on line 1) "
        "and no coding declaration says otherwise"
    ]


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    """A 5 MB generated file is reported, not parsed (that would take minutes)."""
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(200_000))
    data = body.encode()[: 5 * 1024 * 1024]
    data = data[: data.rindex(b"\n\n") + 2]
    assert len(data) > 5_000_000
    lines = _check_with_good(tmp_path, "generated.py", data)
    assert lines == [
        "generated.py:1:1: E902 not checked: the file is 5.0 MiB, over the 2.0 MiB limit "
        "(raise `max-file-size` in [tool.ddplint], or exclude the file)"
    ]


def test_size_limit_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\nmax-file-size = 50\n")
    (tmp_path / "small.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "small.py")
    assert outcome.lines == [
        "small.py:1:1: E902 not checked: the file is 0.0 MiB, over the 0.0 MiB limit "
        "(raise `max-file-size` in [tool.ddplint], or exclude the file)"
    ]
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\nmax-file-size = 0\n")
    outcome = ddplint(tmp_path, "small.py")
    assert len(outcome.lines) == 1 and outcome.lines[0].startswith(good_finding("small.py"))


@pytest.mark.parametrize(
    "kind, expression",
    [
        ("parentheses", "(" * 5000 + "1" + ")" * 5000),
        ("lists", "[" * 3000 + "]" * 3000),
        ("unary minus", "-" * 100_000 + "1"),
        ("binary operators", "1" + " + 1" * 100_000),
        ("attribute chain", "a" + ".b" * 50_000),
        ("calls", "f" + "()" * 50_000),
        ("lambdas", "lambda: " * 10_000 + "1"),
    ],
    ids=lambda value: value if len(value) < 40 else "",
)
def test_nesting_deeper_than_python_accepts(tmp_path: Path, kind: str, expression: str) -> None:
    lines = _check_with_good(tmp_path, "deep.py", f"x = {expression}\n".encode())
    assert len(lines) == 1
    assert lines[0].startswith("deep.py:1:1: E999 cannot parse: nested too deeply for Python's parser (")


@pytest.mark.parametrize(
    "expression",
    [
        "1" + " and 1" * 20_000,  # flat for CPython, 20,000 levels deep for libcst
        "(" * 199 + "1" + ")" * 199,
        "-" * 2_500 + "1",
        "a" + ".b" * 1_500,
    ],
    ids=["and-chain", "parentheses", "unary", "attributes"],
)
def test_deep_nesting_python_accepts_is_checked(tmp_path: Path, expression: str) -> None:
    """No RecursionError, no crash: the finding after the deep line is still reported."""
    text = f"x = {expression}\n" + GOOD
    lines = _check_with_good(tmp_path, "deep.py", text.encode())
    assert len(lines) == 1 and lines[0].startswith("deep.py:4:25: DDP001 ")


def test_directory_named_like_a_module(tmp_path: Path) -> None:
    (tmp_path / "x.py").mkdir()
    (tmp_path / "x.py" / "inner.py").write_text(GOOD)
    (tmp_path / "empty.py").mkdir()
    outcome = ddplint(tmp_path, ".")
    assert len(outcome.lines) == 1 and outcome.lines[0].startswith(good_finding("x.py/inner.py"))
    assert outcome.exit_code == 1
    outcome = ddplint(tmp_path, "empty.py")
    assert (outcome.exit_code, outcome.stdout) == (0, "")


def test_fifo_named_py_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    lines = _check_with_good(tmp_path, "other.py", b"x = 1\n")
    assert lines == []
    outcome = ddplint(tmp_path, ".")
    assert "pipe.py:1:1: E902 not a regular file (device, FIFO or socket)" in outcome.lines


def _drop_file_permission_override() -> None:  # pragma: no cover - runs in the child
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_unreadable_file(tmp_path: Path) -> None:
    """chmod 000; as root, the check runs in a child without the capability to bypass it."""
    (tmp_path / "good.py").write_text(GOOD)
    secret = tmp_path / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    preexec = None
    if os.geteuid() == 0:
        if not sys.platform.startswith("linux"):
            pytest.skip("running as root on a system where capabilities cannot be dropped")
        preexec = _drop_file_permission_override
    command = [sys.executable, "-m", "ddplint", "check", "--output-format", "concise", "--quiet", "."]
    try:
        done = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, preexec_fn=preexec, timeout=120
        )
    except subprocess.SubprocessError as exc:
        if "prctl" in str(exc):
            pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE here: {exc}")
        raise
    lines = done.stdout.splitlines()
    assert "secret.py:1:1: E902 cannot read file: Permission denied" in lines
    assert any(line.startswith(good_finding()) for line in lines)
    assert len(lines) == 2
    assert done.returncode == 1
    assert "Traceback" not in done.stderr


def test_broken_symlink(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    # Inside a folder: skipped, like any file that is not there.
    outcome = ddplint(tmp_path, ".")
    assert len(outcome.lines) == 1 and outcome.lines[0].startswith(good_finding())
    # Named on the command line: reported.
    outcome = ddplint(tmp_path, "dangling.py", "good.py")
    assert outcome.lines[0] == f"dangling.py:1:1: E902 broken symbolic link (to {tmp_path / 'missing.py'})"
    assert outcome.lines[1].startswith(good_finding())
    assert outcome.exit_code == 1


def test_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")  # a folder loop: never descended
    outcome = ddplint(tmp_path, ".")
    assert len(outcome.lines) == 1 and outcome.lines[0].startswith(good_finding())
    outcome = ddplint(tmp_path, "a.py", "good.py")
    assert outcome.lines[0] == "a.py:1:1: E902 symbolic link loop"
    assert outcome.lines[1].startswith(good_finding())
    assert len(outcome.lines) == 2
    assert outcome.exit_code == 1


def test_nonexistent_path_among_others(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "nope.py", "good.py")
    assert outcome.lines[0].startswith(good_finding())
    assert outcome.lines[1] == "nope.py:1:1: E902 no such file or directory"
    assert outcome.exit_code == 1


def test_only_nonexistent_paths(tmp_path: Path) -> None:
    outcome = ddplint(tmp_path, "nope.py", "gone/")
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    assert outcome.stderr == "ddplint: error: no such file or directory: nope.py, gone/\n"


def test_pyproject_not_valid_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint\nselect = [\n")
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, ".")
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    assert outcome.stderr.startswith(
        f"ddplint: error: {(tmp_path / 'pyproject.toml').resolve()}: not valid TOML: "
    )
    assert "Traceback" not in outcome.stderr


def test_pyproject_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.ddplint]\n# \xff\n")
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, ".")
    assert outcome.exit_code == 2
    assert outcome.stderr.startswith(
        f"ddplint: error: {(tmp_path / 'pyproject.toml').resolve()}: not valid TOML: "
    )


@pytest.mark.parametrize(
    "table, expected",
    [
        ('selct = ["DDP001"]', "unknown key `selct` in [tool.ddplint]"),
        ("per_file_ignores = {}", "unknown key `per_file_ignores` in [tool.ddplint]"),
        ('select = "DDP001"', "`select` must be a list of strings, got 'DDP001'"),
        ("ignore = [1]", "`ignore` must be a list of strings, got [1]"),
        ('per-file-ignores = { "a.py" = "DDP001" }', "`per-file-ignores` must be a table of glob = [codes]"),
        ('max-file-size = "big"', "`max-file-size` must be a number of bytes (0: no limit), got 'big'"),
        ("max-file-size = -1", "`max-file-size` must be a number of bytes (0: no limit), got -1"),
    ],
)
def test_bad_config_keys(tmp_path: Path, table: str, expected: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.ddplint]\n{table}\n")
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, ".")
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    prefix = f"ddplint: error: {(tmp_path / 'pyproject.toml').resolve()}: "
    assert outcome.stderr.startswith(prefix), outcome.stderr
    assert expected in outcome.stderr


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_rule_code_on_the_command_line(tmp_path: Path, option: str) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, option, "DDP001,XYZ123", ".")
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    name = option.lstrip("-")
    assert outcome.stderr == (
        f"ddplint: error: invalid value `XYZ123` for `{name}`: no rule code starts with it\n"
    )


def test_invalid_gitignore_patterns_are_skipped(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("!\n\\\n[z-a]\nskipped.py\n")
    (tmp_path / "skipped.py").write_text(GOOD)
    lines = _check_with_good(tmp_path, "other.py", b"x = 1\n")
    assert lines == []


def test_invalid_exclude_pattern_in_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nexclude = ["build", "[z-a]"]\n')
    (tmp_path / "good.py").write_text(GOOD)
    outcome = ddplint(tmp_path, ".")
    assert outcome.exit_code == 2
    assert outcome.stderr == (
        f"ddplint: error: {(tmp_path / 'pyproject.toml').resolve()}: "
        "`exclude` has an invalid pattern: '[z-a]'\n"
    )


@pytest.mark.parametrize("output_format", sorted(FORMAT_NAMES))
def test_names_and_text_the_terminal_cannot_show(tmp_path: Path, output_format: str) -> None:
    """A non-UTF-8 file name and non-ASCII source on an ASCII-only stdout: escaped, not a crash."""
    name = os.fsdecode(b"bad\xffname.py")
    (tmp_path / name).write_text(GOOD.replace("ds,", "données,"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--output-format", output_format, "."],
        cwd=tmp_path,
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    # SARIF names files by URI: the name's own bytes, percent-encoded.
    assert (b"bad%FFname.py" if output_format == "sarif" else b"bad\\udcffname.py") in done.stdout


def test_fifo_beside_a_checked_module_does_not_block(tmp_path: Path) -> None:
    """The modules around a checked file are read for context; a FIFO among them is skipped."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(GOOD)
    (package / "user.py").write_text("import pkg.train\n")
    os.mkfifo(package / "pipe.py")
    done = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--output-format", "concise", "--quiet", "pkg/train.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines()[0].startswith(good_finding("pkg/train.py"))
    assert len(done.stdout.splitlines()) == 1
    assert done.returncode == 1

"""--fix never loses data: atomic writes that keep encoding, BOM, newlines and mode; broken fixes
are never written; a second run changes nothing; --diff writes nothing."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst
import pytest
from robust_support import GOOD, GOOD_FIXED, ddplint, good_finding

from ddplint.engine import fix as fixer
from ddplint.rules import RULES_BY_CODE


def _fix_twice(tmp_path: Path, name: str, data: bytes) -> tuple[bytes, bytes]:
    path = tmp_path / name
    path.write_bytes(data)
    first = ddplint(tmp_path, "--fix", name)
    assert first.exit_code == 0, first.stdout + first.stderr
    once = path.read_bytes()
    second = ddplint(tmp_path, "--fix", name)
    assert (second.exit_code, second.stdout) == (0, "")
    assert path.read_bytes() == once, "a second --fix changed the file"
    return once, path.read_bytes()


def test_fix_plain_file(tmp_path: Path) -> None:
    once, _ = _fix_twice(tmp_path, "good.py", GOOD.encode())
    assert once == GOOD_FIXED.encode()


def test_fix_keeps_crlf(tmp_path: Path) -> None:
    once, _ = _fix_twice(tmp_path, "crlf.py", GOOD.replace("\n", "\r\n").encode())
    assert once == GOOD_FIXED.replace("\n", "\r\n").encode()


def test_fix_keeps_mixed_newlines_untouched_elsewhere(tmp_path: Path) -> None:
    head = "import os\r\nx = 1\ry = 2\n"
    once, _ = _fix_twice(tmp_path, "mixed.py", (head + GOOD).encode())
    assert once == (head + GOOD_FIXED).encode()


def test_fix_keeps_latin1(tmp_path: Path) -> None:
    text = "# -*- coding: latin-1 -*-\n" + GOOD + "name = 'café'\n"
    once, _ = _fix_twice(tmp_path, "latin.py", text.encode("latin-1"))
    assert once == ("# -*- coding: latin-1 -*-\n" + GOOD_FIXED + "name = 'café'\n").encode("latin-1")
    assert b"caf\xe9" in once


def test_fix_keeps_bom(tmp_path: Path) -> None:
    once, _ = _fix_twice(tmp_path, "bom.py", b"\xef\xbb\xbf" + GOOD.encode())
    assert once == b"\xef\xbb\xbf" + GOOD_FIXED.encode()


def test_fix_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_text(GOOD)
    path.chmod(0o751)
    ddplint(tmp_path, "--fix", "script.py")
    assert path.read_text() == GOOD_FIXED
    assert path.stat().st_mode & 0o7777 == 0o751


def test_fix_through_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(GOOD)
    (tmp_path / "link.py").symlink_to("real.py")
    outcome = ddplint(tmp_path, "--fix", "link.py")
    assert outcome.exit_code == 0
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_text() == GOOD_FIXED


def test_fix_leaves_no_temporary_files(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    ddplint(tmp_path, "--fix", ".")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.py"]


def test_diff_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "good.py"
    path.write_text(GOOD)
    before = path.stat()
    time.sleep(0.01)
    outcome = ddplint(tmp_path, "--diff", "good.py")
    assert outcome.exit_code == 1
    assert "-loader = DataLoader(ds, shuffle=True, sampler=s)\n" in outcome.stdout
    assert "+loader = DataLoader(ds, shuffle=(s is None), sampler=s)\n" in outcome.stdout
    assert path.read_text() == GOOD
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.py"]
    # --diff wins over --fix: still nothing written.
    outcome = ddplint(tmp_path, "--diff", "--fix", "good.py")
    assert outcome.exit_code == 1 and path.read_text() == GOOD


def test_read_only_file_is_reported_and_the_run_continues(tmp_path: Path) -> None:
    locked = tmp_path / "locked.py"
    locked.write_text(GOOD)
    locked.chmod(0o444)
    (tmp_path / "open.py").write_text(GOOD)
    outcome = ddplint(tmp_path, "--fix", ".")
    assert outcome.lines[0] == "locked.py:1:1: E902 cannot write fixes: file is read-only"
    assert outcome.lines[1].startswith(good_finding("locked.py"))
    assert len(outcome.lines) == 2
    assert outcome.exit_code == 1
    assert locked.read_text() == GOOD
    assert (tmp_path / "open.py").read_text() == GOOD_FIXED


def test_write_failure_is_reported_and_the_run_continues(tmp_path: Path, monkeypatch) -> None:
    """A folder we cannot create the temporary file in (full disk, no permission)."""
    (tmp_path / "a.py").write_text(GOOD)
    (tmp_path / "b.py").write_text(GOOD)
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        if kwargs.get("prefix", "").startswith(".a.py."):
            raise OSError(28, "No space left on device")
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    outcome = ddplint(tmp_path, "--fix", ".")
    assert "a.py:1:1: E902 cannot write fixes: No space left on device" in outcome.lines
    assert any(line.startswith(good_finding("a.py")) for line in outcome.lines)
    assert outcome.exit_code == 1
    assert (tmp_path / "a.py").read_text() == GOOD
    assert (tmp_path / "b.py").read_text() == GOOD_FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


@pytest.mark.parametrize("failing", ["write", "fsync", "chmod", "replace"])
def test_interrupted_write_leaves_the_old_file(tmp_path: Path, monkeypatch, failing: str) -> None:
    """An interrupt at any step of the write: the old file, whole, and no temporary file."""
    path = tmp_path / "good.py"
    path.write_text(GOOD)

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if failing == "write":
        real_fdopen = os.fdopen

        class Handle:
            def __init__(self, handle) -> None:
                self.handle = handle

            def __enter__(self):
                return self

            def __exit__(self, *exc) -> None:
                self.handle.close()

            def write(self, data: bytes) -> None:
                self.handle.write(data[: len(data) // 2])
                raise KeyboardInterrupt

        monkeypatch.setattr(fixer.os, "fdopen", lambda fd, mode: Handle(real_fdopen(fd, mode)))
    else:
        monkeypatch.setattr(fixer.os, failing, interrupt)
    with pytest.raises(KeyboardInterrupt):
        fixer.write_atomically(path, fixer.Source.from_bytes(str(path), GOOD.encode()), GOOD_FIXED)
    assert path.read_text() == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.py"]


def _fix_in_child(folder: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ddplint", "check", "--fix", "--quiet", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill_after_writes(child: subprocess.Popen, folder: Path, old_size: int, writes: int) -> None:
    """SIGKILL `child` as soon as `writes` files of `folder` have their new size (or it ends)."""
    while child.poll() is None:
        written = 0
        for entry in os.scandir(folder):
            with contextlib.suppress(FileNotFoundError):  # a temporary file renamed meanwhile
                written += entry.name.endswith(".py") and entry.stat().st_size != old_size
        if written >= writes:
            child.send_signal(signal.SIGKILL)
            break
    child.wait()


def test_killed_run_leaves_old_or_new_files(tmp_path: Path) -> None:
    """SIGKILL a real `--fix` run while it writes: every file is the old or the new text.

    The run is killed once it has written its first file, half of them, all but two: the files
    are watched, so the kill lands while the run writes, however busy the machine is."""
    count = 40
    old, new = GOOD + "x = 1\n" * 300, GOOD_FIXED + "x = 1\n" * 300
    assert len(old) != len(new)
    mixed = 0
    for attempt, writes in enumerate((1, count // 2, count - 2)):
        folder = tmp_path / f"run{attempt}"
        folder.mkdir()
        for i in range(count):
            (folder / f"m{i}.py").write_text(old)
        _kill_after_writes(_fix_in_child(folder), folder, len(old), writes)
        texts = [(folder / f"m{i}.py").read_text() for i in range(count)]
        assert all(text in (old, new) for text in texts)
        mixed += old in texts and new in texts
        leftovers = [p.name for p in folder.iterdir() if not p.name.endswith(".py")]
        # At most the one temporary file being written at the kill; never a `.py`.
        assert len(leftovers) <= 1 and all(name.endswith(".ddplint-tmp") for name in leftovers)
    assert mixed, "no run was killed while it was writing; the test proved nothing"


class _BrokenFixRule:
    """Stands in for DDP001: reports its findings with a fix whose result does not parse."""

    def check(self, ctx) -> None:
        for call in ctx.facts.all_calls():
            if call.name and call.name.endswith("DataLoader"):
                edit = ctx.replace(call.node, "DataLoader((")
                ctx.report(call.node, "broken on purpose", fix=ctx.fix("break the file", edit))


def test_a_fix_that_breaks_the_code_is_never_written(tmp_path: Path, monkeypatch) -> None:
    rule = RULES_BY_CODE["DDP001"]
    monkeypatch.setattr(type(rule), "check", _BrokenFixRule.check)
    (tmp_path / "a.py").write_text(GOOD)
    (tmp_path / "b.py").write_text("x = 1\n")
    outcome = ddplint(tmp_path, "--fix", ".")
    assert outcome.exit_code == 1
    assert outcome.lines == [
        "a.py:1:1: E902 a fix produced code that does not parse (cannot parse: '(' was never closed); "
        "the file was left as it was after the previous pass",
        "a.py:3:10: DDP001 [*] broken on purpose",
    ]
    assert (tmp_path / "a.py").read_text() == GOOD
    cst.parse_module((tmp_path / "a.py").read_text())

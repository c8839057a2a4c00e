"""`ddplint check --add-noqa`: where each comment goes, what it keeps, and that it suppresses."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from ddplint.config import Settings
from ddplint.run.add_noqa import add_noqa_to_files
from ddplint.run.runner import run

FIXTURES = Path(__file__).parent / "fixtures"

HEADER = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

"""


def ddplint_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ddplint", "check", "--no-cache", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def add_noqa(tmp_path: Path, body: str) -> tuple[str, int, list[str]]:
    """(the file's text afterwards, comments added, problems) for HEADER + body."""
    path = tmp_path / "train.py"
    path.write_text(HEADER + body, encoding="utf-8")
    found = run([str(path)], Settings(root=tmp_path)).diagnostics
    outcome = add_noqa_to_files(found)
    return path.read_text(encoding="utf-8")[len(HEADER) :], outcome.added, outcome.problems


def test_plain_line(tmp_path: Path) -> None:
    body = "def make(ds, s):\n    return DataLoader(ds, shuffle=True, sampler=s)\n"
    text, added, problems = add_noqa(tmp_path, body)
    assert text == "def make(ds, s):\n    return DataLoader(ds, shuffle=True, sampler=s)  # noqa: DDP001\n"
    assert (added, problems) == (1, [])


def test_existing_noqa_is_merged_codes_sorted_explanation_kept(tmp_path: Path) -> None:
    body = "def make(ds, s):\n    return DataLoader(ds, shuffle=True, sampler=s)  # noqa:E501,B008 long\n"
    text, added, _ = add_noqa(tmp_path, body)
    assert text == (
        "def make(ds, s):\n"
        "    return DataLoader(ds, shuffle=True, sampler=s)  # noqa:B008, DDP001, E501 long\n"
    )
    assert added == 1


def test_other_trailing_comment_is_kept(tmp_path: Path) -> None:
    body = "def make(ds, s):\n    return DataLoader(ds, shuffle=True, sampler=s)  # type: ignore   \n"
    text, _, _ = add_noqa(tmp_path, body)
    assert text == (
        "def make(ds, s):\n"
        "    return DataLoader(ds, shuffle=True, sampler=s)  # type: ignore  # noqa: DDP001\n"
    )


def test_a_line_whose_string_holds_noqa_text_is_left_with_a_message(tmp_path: Path) -> None:
    # The noqa reader takes the first noqa text after a line's first `#`, even inside a string:
    # a comment added after it would not be read, so none is added.
    body = 'def make(ds, s):\n    return DataLoader(ds, shuffle=True, sampler=s), "# noqa: E501"\n'
    text, added, problems = add_noqa(tmp_path, body)
    assert (text, added) == (body, 0)
    assert problems == [
        f"{tmp_path / 'train.py'}:5:27: no `# noqa: DDP001` added: the noqa reader would read an "
        "earlier noqa text on that line"
    ]


def test_multi_line_statement_gets_it_on_the_finding_line(tmp_path: Path) -> None:
    body = (
        "def make(ds, s):\n    return DataLoader(\n        ds,\n        shuffle=True,\n"
        "        sampler=s,\n    )\n"
    )
    text, added, _ = add_noqa(tmp_path, body)
    assert text == (
        "def make(ds, s):\n    return DataLoader(\n        ds,\n        shuffle=True,  # noqa: DDP001\n"
        "        sampler=s,\n    )\n"
    )
    assert added == 1


def test_a_line_ending_in_a_backslash_moves_it_to_the_statement_first_line(tmp_path: Path) -> None:
    body = "def make(ds, s):\n    return DataLoader(ds,\n        shuffle=True, \\\n        sampler=s)\n"
    text, _, problems = add_noqa(tmp_path, body)
    assert text == (
        "def make(ds, s):\n    return DataLoader(ds,  # noqa: DDP001\n"
        "        shuffle=True, \\\n        sampler=s)\n"
    )
    assert problems == []


def test_a_line_ending_inside_a_string_moves_it_to_the_statement_first_line(tmp_path: Path) -> None:
    body = (
        "def step(t):\n    if dist.get_rank() == 0:\n        x = [\n"
        '            dist.all_reduce(t), """a\n            """]\n        return x\n'
    )
    text, _, _ = add_noqa(tmp_path, body)
    assert text == body.replace("x = [\n", "x = [  # noqa: DDP005\n")


def test_no_safe_line_is_skipped_with_a_message(tmp_path: Path) -> None:
    body = (
        "def step(t):\n    if dist.get_rank() == 0:\n        return dist.all_reduce(t) \\\n"
        "            or None\n"
    )
    text, added, problems = add_noqa(tmp_path, body)
    assert (text, added) == (body, 0)
    assert problems == [
        f"{tmp_path / 'train.py'}:6:16: no `# noqa: DDP005` added: neither its line nor the first line of "
        "its statement can end in a comment (they continue with `\\` or inside a string)"
    ]


def test_two_findings_on_one_line_share_one_comment(tmp_path: Path) -> None:
    body = (
        "def train(ds):\n    loader = DataLoader(ds, shuffle=True, sampler=DistributedSampler(ds))\n"
        "    for epoch in range(3):\n        for batch in loader:\n            batch.sum().backward()\n"
    )
    text, added, _ = add_noqa(tmp_path, body)
    assert text == body.replace("(ds))\n", "(ds))  # noqa: DDP001, DDP002\n")
    assert added == 1


def test_encoding_bom_and_newlines_are_kept(tmp_path: Path) -> None:
    body = (
        "# -*- coding: latin-1 -*-\r\nfrom torch.utils.data import DataLoader\r\n"
        "def make(ds, s):\r\n    return DataLoader(ds, shuffle=True, sampler=s)  # é\r\n"
    )
    path = tmp_path / "latin.py"
    path.write_bytes(body.encode("latin-1"))
    done = ddplint_cli("--add-noqa", "latin.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == body.replace("é", "é  # noqa: DDP001").encode("latin-1")
    bom = b"\xef\xbb\xbf" + body.removeprefix("# -*- coding: latin-1 -*-\r\n").encode()
    path.write_bytes(bom)
    ddplint_cli("--add-noqa", "latin.py", cwd=tmp_path)
    assert path.read_bytes() == bom.replace("é".encode(), "é  # noqa: DDP001".encode())


def test_command_prints_the_count_and_is_idempotent(tmp_path: Path) -> None:
    body = (
        "def make(ds, s):\n    a = DataLoader(ds, shuffle=True, sampler=s)\n"
        "    b = DataLoader(ds, shuffle=True, sampler=s)  # noqa: E501\n    return a, b\n"
    )
    (tmp_path / "train.py").write_text(HEADER + body, encoding="utf-8")
    first = ddplint_cli("--add-noqa", ".", cwd=tmp_path)
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "Added 2 noqa directives.\n")
    once = (tmp_path / "train.py").read_text(encoding="utf-8")
    second = ddplint_cli("--add-noqa", ".", cwd=tmp_path)
    assert (second.returncode, second.stderr) == (0, "Added 0 noqa directives.\n")
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == once


def test_exclusive_with_fix_diff_and_stdin(tmp_path: Path) -> None:
    for other in ("--fix", "--diff", "-"):
        done = ddplint_cli("--add-noqa", other, cwd=tmp_path)
        assert done.returncode == 2
        name = "stdin" if other == "-" else other
        assert done.stderr == f"ddplint: error: --add-noqa cannot be combined with {name}\n"


def test_fixtures_pass_after_add_noqa(tmp_path: Path) -> None:
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, copy)
    before = ddplint_cli(str(copy), cwd=tmp_path)
    assert before.returncode == 1
    first = ddplint_cli("--add-noqa", str(copy), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    count = int(first.stderr.removeprefix("Added ").removesuffix(" noqa directives.\n"))
    assert count > 100
    after = ddplint_cli(str(copy), cwd=tmp_path)
    assert (after.returncode, after.stdout) == (0, "All checks passed!\n")
    again = ddplint_cli("--add-noqa", str(copy), cwd=tmp_path)
    assert (again.returncode, again.stderr) == (0, "Added 0 noqa directives.\n")

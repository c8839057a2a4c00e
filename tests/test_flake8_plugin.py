"""The flake8 plugin, through the real flake8: same rows and columns as `ddplint check`."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from surfaces import DATA, EXAMPLE, EXAMPLE_FINDINGS, REPO, TWO, TWO_FINDINGS, positions, run


def flake8(*args: str, cwd: Path = REPO, input: bytes | None = None) -> list[tuple[str, int, int, str]]:
    result = run(["--isolated", *args], cwd=cwd, input=input, module="flake8")
    assert result.returncode in (0, 1), result.stderr.decode()
    return positions(result.stdout.decode())


def test_plugin_is_registered() -> None:
    result = run(["--version"], module="flake8")
    assert "ddplint: " in result.stdout.decode()


def test_same_rows_and_columns_as_check() -> None:
    found = flake8("--select", "DDP", "examples/train.py")
    assert found == [("examples/train.py", row, col, code) for row, col, code in EXAMPLE_FINDINGS]
    check = run(["check", "--output-format", "concise", "examples/train.py"], cwd=REPO)
    assert positions(check.stdout.decode()) == found


def test_messages_start_with_the_code() -> None:
    result = run(["--isolated", "--select", "DDP", "examples/train.py"], cwd=REPO, module="flake8")
    lines = result.stdout.decode().splitlines()
    assert lines[1].startswith(
        "examples/train.py:39:48: DDP001 `DataLoader` is given `shuffle=True` and `sampler=sampler`"
    )


def test_select_ignore_and_extend_ignore() -> None:
    assert [f[3] for f in flake8("--select", "DDP002", "examples/train.py")] == ["DDP002"]
    ignored = flake8("--select", "DDP", "--ignore", "DDP002", "examples/train.py")
    assert [f[3] for f in ignored] == [code for _, _, code in EXAMPLE_FINDINGS if code != "DDP002"]
    default = flake8("--extend-ignore", "DDP001,E,W", "examples/train.py")
    assert [(f[1], f[3]) for f in default] == [
        (row, code) for row, _, code in EXAMPLE_FINDINGS if code != "DDP001"
    ]


def test_on_by_default_beside_the_other_plugins() -> None:
    codes = {f[3] for f in flake8("examples/train.py")}
    assert {"DDP001", "DDP002", "E501"} <= codes


def test_noqa_on_the_line_and_on_a_statement_first_line() -> None:
    found = flake8("--select", "DDP", "tests/data/suppressed.py")
    assert [(f[1], f[2], f[3]) for f in found] == [(8, 24, "DDP001"), (18, 9, "DDP001")]
    everything = flake8("--select", "DDP", "--disable-noqa", "tests/data/suppressed.py")
    assert [f[1] for f in everything] == [7, 8, 9, 10, 13, 18]


def test_source_comes_from_flake8_not_from_the_file(tmp_path: Path) -> None:
    # flake8 reading stdin (as editors run it): the file on disk is clean, the buffer is not.
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    found = flake8(
        "--select", "DDP", "--stdin-display-name", "train.py", "-", cwd=tmp_path, input=EXAMPLE.read_bytes()
    )
    assert found == [("train.py", row, col, code) for row, col, code in EXAMPLE_FINDINGS]


def test_knows_the_modules_of_the_file_package(tmp_path: Path) -> None:
    # `reshuffle` in pkg/helpers.py sets the epoch: nothing to report in pkg/train.py.
    shutil.copytree(DATA / "package", tmp_path / "package")
    root = tmp_path / "package"
    assert flake8("--select", "DDP", "pkg/train.py", cwd=root) == []
    # The file alone cannot see it, and reports the sampler.
    alone = flake8("--select", "DDP", "--ddplint-context-budget", "0", "pkg/train.py", cwd=root)
    assert alone == [("pkg/train.py", 7, 15, "DDP002")]


def test_syntax_errors_are_left_to_flake8(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def f(:\n", encoding="utf-8")
    found = flake8("bad.py", cwd=tmp_path)
    assert [f[3] for f in found] == ["E999"]


def test_file_level_noqa_and_disable_noqa(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("# ddplint: noqa: DDP001\n" + TWO.read_text(encoding="utf-8"))
    assert [(f[1], f[3]) for f in flake8("--select", "DDP", "train.py", cwd=tmp_path)] == [(7, "DDP002")]
    everything = flake8("--select", "DDP", "--disable-noqa", "train.py", cwd=tmp_path)
    assert [(f[1], f[3]) for f in everything] == [(7, "DDP002"), (8, "DDP001")]


def test_an_internal_error_is_reported_not_raised(monkeypatch) -> None:
    from ddplint.integrations import flake8_findings, flake8_plugin

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(flake8_findings, "check_buffer", broken)
    [(row, col, message, _)] = list(flake8_plugin.Plugin(None, "a.py", ["x = 1\n"]).run())
    assert (row, col) == (1, 0)
    assert message.startswith("DDP900 internal error in ddplint (RuntimeError: boom)")


def test_a_folder_gets_the_findings_of_check(tmp_path: Path) -> None:
    root = tmp_path / "package"
    shutil.copytree(DATA / "package", root)
    shutil.copy(TWO, root / "two.py")
    found = flake8("--select", "DDP", ".", cwd=root)
    assert found == [("./two.py", row, col, code) for row, col, code in TWO_FINDINGS]
    check = run(["check", "--no-cache", "--output-format", "concise", "."], cwd=root)
    assert [(f"./{path}", *rest) for path, *rest in positions(check.stdout.decode())] == found


@pytest.fixture
def plugin(monkeypatch):
    """A Plugin class configured as flake8 would, over `filenames`; restored afterwards."""
    from ddplint.integrations import flake8_findings, flake8_plugin

    for name in ("options", "selection", "context_budget", "honour_noqa"):
        monkeypatch.setattr(flake8_plugin.Plugin, name, getattr(flake8_plugin.Plugin, name))
    caches = (
        flake8_findings._whole_run,
        flake8_findings._expanded,
        flake8_findings._reporting,
    )  # a test may replace them meanwhile
    for cache in caches:
        cache.cache_clear()
    yield _configured
    for cache in caches:
        cache.cache_clear()


def _configured(filenames: list[str]):
    from ddplint.integrations import flake8_plugin

    options = SimpleNamespace(filenames=filenames, ddplint_context_budget=2.0, disable_noqa=False)
    flake8_plugin.Plugin.parse_options(options)
    return flake8_plugin.Plugin


def _found(cls, filename: str, text: str) -> list[tuple[int, int, str]]:
    lines = text.splitlines(keepends=True)
    return [(row, col, message.split()[0]) for row, col, message, _ in cls(None, filename, lines).run()]


@pytest.fixture
def runs(monkeypatch) -> list:
    """The paths of every run ddplint's runner is asked for, in order."""
    from ddplint.run import runner

    asked: list = []
    real = runner.run
    monkeypatch.setattr(runner, "run", lambda paths, *rest: asked.append(paths) or real(paths, *rest))
    return asked


def test_one_run_answers_every_file_flake8_was_given(tmp_path: Path, monkeypatch, plugin, runs) -> None:
    from ddplint.integrations import flake8_findings

    (tmp_path / "two.py").write_bytes(TWO.read_bytes())
    (tmp_path / "crlf.py").write_bytes(TWO.read_bytes().replace(b"\n", b"\r\n"))
    (tmp_path / "plain.py").write_text("x = 1\n", encoding="utf-8")  # skipped by the prefilter
    monkeypatch.chdir(tmp_path)
    alone = []
    monkeypatch.setattr(flake8_findings, "check_buffer", lambda *args, **kwargs: alone.append(args))
    cls = plugin(["."])
    two = TWO.read_text(encoding="utf-8")
    expected = [(row, col - 1, code) for row, col, code in TWO_FINDINGS]
    assert _found(cls, "./two.py", two) == expected
    assert _found(cls, "./crlf.py", two) == expected  # flake8 reads with universal newlines
    assert _found(cls, "./plain.py", "x = 1\n") == []
    assert runs == [["."]]
    assert alone == []


def test_a_text_other_than_the_runs_is_checked_alone(tmp_path: Path, monkeypatch, plugin) -> None:
    # The file changed on disk after the run read it: flake8's text is what counts.
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    cls = plugin(["train.py"])
    found = _found(cls, "train.py", TWO.read_text(encoding="utf-8"))
    assert found == [(row, col - 1, code) for row, col, code in TWO_FINDINGS]


def test_stdin_is_checked_alone(monkeypatch, plugin) -> None:
    from ddplint.integrations import flake8_findings

    def no_run(*args):
        raise AssertionError("stdin needs no run over paths")

    monkeypatch.setattr(flake8_findings, "_whole_run", no_run)
    cls = plugin(["-"])
    found = _found(cls, "train.py", TWO.read_text(encoding="utf-8"))
    assert found == [(row, col - 1, code) for row, col, code in TWO_FINDINGS]


def test_flake8_runs_it_before_starting_its_workers(tmp_path: Path, monkeypatch, plugin, runs) -> None:
    # Done while flake8 parses its options, in its own process: the workers it forks inherit it.
    from flake8.options.parse_args import parse_args

    from ddplint.integrations import flake8_plugin

    (tmp_path / "two.py").write_bytes(TWO.read_bytes())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "theirs.py").write_bytes(TWO.read_bytes())
    parse_args(["--select", "E501", "."])
    parse_args(["--extend-ignore", "DDP", "."])
    assert runs == []  # flake8 reports none of ours
    parse_args(["--select", "DDP002", "--extend-exclude", "vendor", "."])
    assert runs == [["./two.py"]]  # the files flake8 checks: its own excludes apply
    found = _found(flake8_plugin.Plugin, "./two.py", TWO.read_text(encoding="utf-8"))
    assert found == [(row, col - 1, code) for row, col, code in TWO_FINDINGS]
    assert runs == [["./two.py"]]


def test_workers_that_inherit_nothing_ask_for_it_themselves(
    tmp_path: Path, monkeypatch, plugin, runs
) -> None:
    # Workers started afresh (macOS, Windows) would not inherit a run done before they start.
    from flake8.options.parse_args import parse_args

    from ddplint.integrations import flake8_findings, flake8_plugin

    (tmp_path / "two.py").write_bytes(TWO.read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(flake8_findings, "_start_method", lambda: "spawn")
    parse_args(["."])
    assert runs == []
    found = _found(flake8_plugin.Plugin, "./two.py", TWO.read_text(encoding="utf-8"))
    assert found == [(row, col - 1, code) for row, col, code in TWO_FINDINGS]
    assert runs == [["./two.py"]]


def test_a_failing_run_is_tried_once_and_each_file_checked_alone(tmp_path: Path, monkeypatch, plugin) -> None:
    from ddplint.run import runner

    (tmp_path / "a.py").write_bytes(TWO.read_bytes())
    (tmp_path / "b.py").write_bytes(TWO.read_bytes())
    monkeypatch.chdir(tmp_path)
    runs = []

    def broken(paths, *rest):
        runs.append(paths)
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "run", broken)
    cls = plugin(["."])
    expected = [(row, col - 1, code) for row, col, code in TWO_FINDINGS]
    assert _found(cls, "./a.py", TWO.read_text(encoding="utf-8")) == expected
    assert _found(cls, "./b.py", TWO.read_text(encoding="utf-8")) == expected
    assert runs == [["."]]


FLAKE8_THEN_FROZEN = """
import gc, sys
from flake8.main.cli import main
main(sys.argv[1:])
print(gc.get_freeze_count(), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "frozen"),
    [
        (["examples/train.py"], True),  # one file: flake8 exits after it
        (["-", "--stdin-display-name", "examples/train.py"], True),
        (["examples/train.py", "tests/data/two_findings.py"], False),  # its workers may copy the process
        (["--select", "E", "examples/train.py"], False),  # nothing of ddplint's ran
    ],
)
def test_a_flake8_process_that_checks_one_file_keeps_the_trees_out_of_the_collectors_reach(
    args: list[str], frozen: bool
) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", FLAKE8_THEN_FROZEN, "--isolated", "--exit-zero", *args],
        cwd=REPO,
        input=EXAMPLE.read_bytes(),
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert (int(done.stderr.decode().split()[-1]) > 0) is frozen

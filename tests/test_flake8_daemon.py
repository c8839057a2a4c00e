"""The flake8 plugin's daemon: a warm process answers one file's flake8 run with the rows flake8's
own process would report, and steps aside whenever it cannot."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tokenize
from pathlib import Path
from types import SimpleNamespace

import pytest
from surfaces import EXAMPLE, EXAMPLE_FINDINGS, FLAKE8_THEN_MODULES, PLUGIN_ONLY, REPO, positions

from ddplint.integrations import daemon_client

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")

# examples/train.py as flake8 reports it: (row, 0-based column, code).
EXAMPLE_ROWS = [(row, column - 1, code) for row, column, code in EXAMPLE_FINDINGS]


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch):
    """A folder of sockets of the test's own, for this process and the ones it starts (short:
    a socket's path is)."""
    folder = tempfile.mkdtemp(prefix="ddp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    yield dict(os.environ, XDG_RUNTIME_DIR=folder)
    shutil.rmtree(folder, ignore_errors=True)


def start_daemon(env: dict[str, str], *args: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "ddplint", "daemon", *args], env=env)
    deadline = time.monotonic() + 60
    while daemon_client.send({"ping": True}, timeout=5) is None:  # answered once it listens
        assert process.poll() is None, "the daemon exited"
        assert time.monotonic() < deadline, "the daemon did not listen"
        time.sleep(0.05)
    return process


@pytest.fixture
def daemon(runtime: dict[str, str]):
    process = start_daemon(runtime, "--idle", "120")
    yield process
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


def ask(text: str, filename: str = "examples/train.py", *, from_stdin: bool = False) -> list | None:
    rows = daemon_client.ask(filename, text, from_stdin=from_stdin, budget=2.0, noqa=True).rows()
    return None if rows is None else [(row, column, message.split()[0]) for row, column, message in rows]


def configure(paths: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin configured as flake8 does, with `--ddplint-daemon` and `paths`, in the
    repository; restored afterwards."""
    from ddplint.integrations import flake8_plugin

    for name in ("options", "selection", "ask_daemon", "from_stdin", "asked", "later"):
        monkeypatch.setattr(flake8_plugin.Plugin, name, getattr(flake8_plugin.Plugin, name))
    monkeypatch.chdir(REPO)
    flake8_plugin.Plugin.parse_options(
        SimpleNamespace(filenames=paths, ddplint_context_budget=2.0, disable_noqa=False, ddplint_daemon=True)
    )


def test_the_daemon_answers_with_flake8s_rows(daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert ask(EXAMPLE.read_text(encoding="utf-8")) == EXAMPLE_ROWS
    # An edit: the DataLoader no longer shuffles, so DDP001 goes; the rows below move down one.
    text = EXAMPLE.read_text(encoding="utf-8").replace(", shuffle=True", "")
    edited = "# a comment\n" + text
    expected = [(row + 1, column, code) for row, column, code in EXAMPLE_ROWS if code != "DDP001"]
    assert ask(edited, from_stdin=True) == expected
    assert ask(EXAMPLE.read_text(encoding="utf-8")) == EXAMPLE_ROWS  # and back


def test_flake8_asks_the_daemon_for_its_one_file(daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    from ddplint.integrations import flake8_findings, flake8_plugin

    def not_here(*args, **kwargs):
        raise AssertionError("checked in flake8's process")

    monkeypatch.setattr(flake8_findings, "check_buffer", not_here)
    monkeypatch.setattr(flake8_findings, "run_ahead", not_here)
    configure(["examples/train.py"], monkeypatch)
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    found = [
        (row, column, message.split()[0])
        for row, column, message, _ in flake8_plugin.Plugin(None, "examples/train.py", lines).run()
    ]
    assert found == EXAMPLE_ROWS


def test_the_daemon_is_asked_with_flakes_options_and_answers_after_flake8s_own_checks(
    daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ddplint.integrations import flake8_findings, flake8_plugin

    def not_here(*args, **kwargs):
        raise AssertionError("checked in flake8's process")

    monkeypatch.setattr(flake8_findings, "check_buffer", not_here)
    configure(["examples/train.py"], monkeypatch)
    text = EXAMPLE.read_text(encoding="utf-8")
    assert flake8_plugin.Plugin.asked.request["text"] == text  # sent before flake8 read the file
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    assert list(flake8_plugin.Plugin(tree, "examples/train.py", lines).run()) == []
    last = tree.body[-1].end_lineno

    def logical_line(row: int) -> list:
        tokens = [tokenize.TokenInfo(tokenize.NEWLINE, "\n", (row, 0), (row, 1), "\n")]
        return flake8_plugin.report_later("x = 1", tokens, "examples/train.py")

    assert logical_line(last - 1) == []
    found = [(row, column, message.split()[0]) for (row, column), message in logical_line(last)]
    assert found == EXAMPLE_ROWS
    assert logical_line(last) == []  # reported once


def test_a_file_changed_since_the_daemon_was_asked_is_asked_again(
    daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ddplint.integrations import flake8_plugin

    configure(["examples/train.py"], monkeypatch)
    text = "# a comment\n" + EXAMPLE.read_text(encoding="utf-8")  # what flake8 read, saved since
    found = [
        (row, column, message.split()[0])
        for row, column, message, _ in flake8_plugin.Plugin(
            ast.parse(text), "examples/train.py", [text]
        ).run()
    ]
    assert found == [(row + 1, column, code) for row, column, code in EXAMPLE_ROWS]
    assert flake8_plugin.Plugin.later is None


def test_flake8_through_the_daemon_reports_what_it_reports_alone(daemon, runtime) -> None:
    def flake8(*args: str, stdin: bytes | None = None) -> list:
        done = subprocess.run(
            [sys.executable, "-m", "flake8", "--isolated", "--select", "DDP", *args],
            cwd=REPO,
            env=runtime,
            input=stdin,
            capture_output=True,
            timeout=120,
        )
        return positions(done.stdout.decode())

    expected = [("examples/train.py", row, column, code) for row, column, code in EXAMPLE_FINDINGS]
    assert flake8("--ddplint-daemon", "examples/train.py") == expected
    assert flake8("examples/train.py") == expected
    piped = flake8(
        "--ddplint-daemon", "--stdin-display-name", "examples/train.py", "-", stdin=EXAMPLE.read_bytes()
    )
    assert piped == expected


def test_without_a_daemon_flake8_checks_the_file_itself_and_starts_one(runtime) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "DDP",
            "--ddplint-daemon",
            "examples/train.py",
        ],
        cwd=REPO,
        env=runtime,
        capture_output=True,
        timeout=120,
    )
    assert positions(done.stdout.decode()) == [
        ("examples/train.py", row, column, code) for row, column, code in EXAMPLE_FINDINGS
    ]
    deadline = time.monotonic() + 60
    while daemon_client.send({"ping": True}, timeout=5) is None:  # the one it started
        assert time.monotonic() < deadline, "no daemon was started"
        time.sleep(0.1)
    # It checks the file before any request: the next save finds the project loaded.
    while (pong := daemon_client.send({"ping": True}))["warming"]:
        assert time.monotonic() < deadline, "the warm-up did not end"
        time.sleep(0.1)
    assert pong == {"pong": True, "checks": 1, "warming": False}
    stopped = subprocess.run(
        [sys.executable, "-m", "ddplint", "daemon", "--stop"],
        env=runtime,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stopped.stdout == "stopped\n"
    assert daemon_client.send({"ping": True}) is None
    assert not daemon_client.address().exists()


def test_with_ddplints_codes_off_the_daemon_is_not_asked(daemon, runtime) -> None:
    argv = [sys.executable, "-m", "flake8", "--isolated", "--exit-zero", "--extend-ignore", "DDP"]
    argv += ["--ddplint-daemon", "examples/train.py"]
    done = subprocess.run(argv, cwd=REPO, env=runtime, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"DDP" not in done.stdout and b"E501" in done.stdout  # flake8's own checks ran
    assert daemon_client.send({"ping": True}) == {"pong": True, "checks": 0, "warming": False}


def test_a_daemon_of_other_code_answers_nothing_and_exits(daemon) -> None:
    answer = daemon_client.send({"stamp": "other code", "cwd": str(REPO), "filename": "a.py", "text": ""})
    assert answer == {"stale": True}
    assert daemon.wait(timeout=30) == 0
    assert not daemon_client.address().exists()


def test_a_bad_request_is_answered_and_the_next_served(daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(daemon_client.address()))
        conn.sendall(b"\xff not json")
        conn.shutdown(socket.SHUT_WR)
        assert daemon_client.receive(conn).startswith(b'{"error": "unreadable request')
    missing = daemon_client.send({"stamp": daemon_client.stamp(), "cwd": str(REPO)})
    assert missing == {"error": "KeyError: 'filename'"}
    monkeypatch.chdir(REPO)
    assert ask(EXAMPLE.read_text(encoding="utf-8")) == EXAMPLE_ROWS


def test_one_daemon_serves_and_another_leaves_at_once(daemon, runtime) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "ddplint", "daemon"], env=runtime, capture_output=True, text=True, timeout=60
    )
    assert (second.returncode, second.stderr) == (0, "")
    assert daemon.poll() is None


def test_an_idle_daemon_exits(runtime) -> None:
    process = start_daemon(runtime, "--idle", "1")
    assert process.wait(timeout=60) == 0
    assert not daemon_client.address().exists()


def test_a_socket_folder_others_may_enter_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    (shared / f"ddplint-{os.getuid()}").mkdir(parents=True, mode=0o755)
    os.chmod(shared / f"ddplint-{os.getuid()}", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    assert daemon_client.address() is None
    assert ask(EXAMPLE.read_text(encoding="utf-8")) is None
    refused = subprocess.run(
        [sys.executable, "-m", "ddplint", "daemon"],
        env=dict(os.environ, XDG_RUNTIME_DIR=str(shared)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert refused.stderr == (
        "ddplint: error: cannot serve: no private folder for the socket (or no Unix sockets here)\n"
    )


def test_settings_are_read_again_for_each_request(
    daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `my_sync` is a collective only once the project says so: under `rank == 0` it is DDP005.
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\n\n\ndef my_sync(t):\n    pass\n\n\n"
        "def step(t):\n    if dist.get_rank() == 0:\n        my_sync(t)\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    text = (tmp_path / "train.py").read_text(encoding="utf-8")
    assert ask(text, "train.py") == []
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\ncollectives = ["my_sync"]\n', encoding="utf-8")
    assert ask(text, "train.py") == [(10, 8, "DDP005")]


def test_flake8_answered_by_the_daemon_loads_no_analysis(daemon, runtime) -> None:
    argv = [sys.executable, "-c", FLAKE8_THEN_MODULES, "--isolated", "--select", "DDP", "--ddplint-daemon"]
    argv.append("examples/train.py")
    done = subprocess.run(argv, cwd=REPO, env=runtime, capture_output=True, timeout=120)
    assert positions(done.stdout.decode()) == [
        ("examples/train.py", row, column, code) for row, column, code in EXAMPLE_FINDINGS
    ]
    loaded = json.loads(done.stderr.decode().splitlines()[-1])
    assert loaded == sorted([*PLUGIN_ONLY, "ddplint.integrations.daemon_client"])


def test_the_readme_configuration_turns_it_on(daemon, runtime, tmp_path: Path) -> None:
    [snippet] = re.findall(r"```ini\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    (tmp_path / ".flake8").write_text(snippet, encoding="utf-8")
    shutil.copy(EXAMPLE, tmp_path / "train.py")
    argv = [sys.executable, "-c", FLAKE8_THEN_MODULES, "--select", "DDP", "train.py"]
    done = subprocess.run(argv, cwd=tmp_path, env=runtime, capture_output=True, timeout=120)
    assert [code for *_, code in positions(done.stdout.decode())] == [code for *_, code in EXAMPLE_FINDINGS]
    assert "ddplint.integrations.daemon_client" in json.loads(done.stderr.decode().splitlines()[-1])
    assert "libcst" not in json.loads(done.stderr.decode().splitlines()[-1])


@pytest.mark.parametrize("paths", [["examples"], ["examples/train.py", "tests/data/two_findings.py"]])
def test_a_run_over_more_than_one_file_is_flake8s_own(paths: list[str], monkeypatch) -> None:
    from ddplint.integrations import flake8_findings, flake8_plugin

    ran: list = []
    monkeypatch.setattr(flake8_findings, "run_ahead", lambda *args: ran.append(args))
    configure(paths, monkeypatch)
    assert (flake8_plugin.Plugin.ask_daemon, len(ran)) == (False, 1)


def test_a_daemon_ended_by_a_signal_takes_its_socket_away(daemon) -> None:
    assert daemon_client.address().exists()
    daemon.terminate()
    assert daemon.wait(timeout=30) == 0
    assert not daemon_client.address().exists()


def chain_project(folder: Path) -> None:
    """train.py importing pkg.a, which imports pkg.b, which imports pkg.c."""
    (folder / "pkg").mkdir()
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "a.py").write_text("from pkg import b\n")
    (folder / "pkg" / "b.py").write_text("from pkg import c\n")
    (folder / "pkg" / "c.py").write_text("import torch.distributed as dist\n")
    (folder / "train.py").write_text("from pkg import a\n")


def test_the_warm_up_loads_the_files_project_into_the_module_cache(tmp_path: Path, monkeypatch) -> None:
    from collections import OrderedDict

    from ddplint.engine import context_modules
    from ddplint.integrations.flake8_findings import load_context_in_steps

    chain_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(context_modules, "_cache", OrderedDict())
    assert list(load_context_in_steps("train.py", 30.0)) == []  # all in, in one step
    assert sorted(p.relative_to(tmp_path.resolve()).as_posix() for p in context_modules._cache) == [
        "pkg/__init__.py",
        "pkg/a.py",
        "pkg/b.py",
        "pkg/c.py",
    ]


def test_a_warm_up_whose_steps_load_nothing_ends(tmp_path: Path, monkeypatch) -> None:
    from collections import OrderedDict

    from ddplint.engine import context_modules
    from ddplint.integrations.flake8_findings import load_context_in_steps

    chain_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(context_modules, "_cache", OrderedDict())
    # No time for a module in a step: it stops instead of pausing forever.
    assert len(list(load_context_in_steps("train.py", 0.0))) <= 5

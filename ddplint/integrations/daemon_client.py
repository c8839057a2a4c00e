"""Asking ddplint's daemon for one file's flake8 findings (see ddplint.integrations.daemon).

An editor runs flake8 on every save, each time in a new process: ddplint would import its
analysis and read the file's project back from `.ddplint_cache/` every time. A daemon keeps them
warm between saves. This module is what flake8's process imports to ask it: sockets and JSON,
nothing of the analysis. One daemon serves one installation of ddplint (one interpreter, one
package folder) for the user who started it, through a socket in a folder only that user may
enter; a daemon of other code (an upgrade, an edit of an installation from a checkout) is told
so by its first request, answers nothing and exits, and the next one is started.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
# Seconds flake8 waits for an answer before checking the file itself (a daemon busy with a
# first check of a large project, or stuck).
ANSWER_TIMEOUT = 10.0
# Bytes a socket's path may have (macOS: 104, Linux: 108, with the final NUL).
MAX_SOCKET_PATH = 104
# A daemon that could not start is not started again sooner than this.
START_INTERVAL = 30.0


def folder() -> Path | None:
    """The folder of the sockets, made private to this user; None where there can be none
    (no Unix sockets) or where it is not private (someone else made it)."""
    if not hasattr(socket, "AF_UNIX") or not hasattr(os, "getuid"):
        return None
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    path = base / f"ddplint-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        found = path.lstat()
    except OSError:
        return None
    private = stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o077
    return path if private else None


def address() -> Path | None:
    """The socket of this installation's daemon; None where its path would be too long."""
    where = folder()
    if where is None:
        return None
    interpreter = os.path.realpath(sys.executable)  # `python` and `python3.11` are one
    name = hashlib.blake2b(f"{interpreter}\0{PACKAGE}".encode(), digest_size=8).hexdigest()
    path = where / f"{name}.sock"
    return path if len(os.fsencode(path)) < MAX_SOCKET_PATH else None


def stamp() -> str:
    """This installation's code, cheaply: the name, size and time of each of its source files."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(PACKAGE.rglob("*.py")):
        try:
            found = path.stat()
        except OSError:
            continue
        h.update(f"{path.relative_to(PACKAGE)}\0{found.st_size}\0{found.st_mtime_ns}\n".encode())
    return h.hexdigest()


def send(request: dict, timeout: float = ANSWER_TIMEOUT) -> dict | None:
    """The daemon's answer to `request`; None when no daemon answers (none runs, it is busy
    past `timeout`, it failed)."""
    return answer_on(sent(request, timeout), timeout)


def sent(request: dict, timeout: float = ANSWER_TIMEOUT) -> socket.socket | None:
    """A connection to the daemon over which `request` went; None when none took it."""
    where = address()
    if where is None:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(str(where))
        conn.sendall(json.dumps(request).encode("utf-8"))
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        conn.close()
        return None
    return conn


def answer_on(conn: socket.socket | None, timeout: float = ANSWER_TIMEOUT) -> dict | None:
    """The answer the daemon sends back over `conn` (closed then); None when none comes."""
    if conn is None:
        return None
    with conn:
        try:
            conn.settimeout(timeout)
            answer = json.loads(receive(conn).decode("utf-8"))
        except (OSError, ValueError):
            return None
    return answer if isinstance(answer, dict) else None


def receive(conn: socket.socket) -> bytes:
    """Everything the other side sends until it closes its end."""
    parts = []
    while chunk := conn.recv(1 << 16):
        parts.append(chunk)
    return b"".join(parts)


class Asked:
    """A question sent to the daemon whose answer is read later: flake8 checks the file with
    its own plugins meanwhile, and the daemon's work is done beside theirs."""

    def __init__(self, request: dict, conn: socket.socket | None) -> None:
        self.request = request
        self._conn = conn

    def is_for(self, filename: str, text: str) -> bool:
        return self.request["filename"] == filename and self.request["text"] == text

    def rows(self) -> list[tuple[int, int, str]] | None:
        """The daemon's (row, 0-based column, "CODE message") for the text, as flake8's process
        would find them; None when no daemon of this code answers (one is then started, for the
        next run)."""
        conn, self._conn = self._conn, None
        answer = answer_on(conn)
        rows = None if answer is None else answer.get("rows")
        if not isinstance(rows, list):
            stale = answer is not None and answer.get("stale") is True
            if answer is None or stale:  # none answered, or one of other code, now gone: start ours
                filename = self.request["filename"]
                warm = filename if os.path.isfile(filename) else None
                start(again=stale, warm=warm, budget=self.request["budget"])
            return None
        return [(int(row), int(column), str(message)) for row, column, message in rows]

    def drop(self) -> None:
        """Not wanted after all (the daemon's answer then goes nowhere)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def ask(filename: str, text: str, *, from_stdin: bool, budget: float, noqa: bool) -> Asked:
    """Ask the daemon for the flake8 rows of `text` as `filename`, without waiting for them."""
    request = {
        "stamp": stamp(),
        "cwd": os.getcwd(),
        "filename": filename,
        "text": text,
        "stdin": from_stdin,
        "budget": budget,
        "noqa": noqa,
    }
    return Asked(request, sent(request))


def start(*, again: bool = False, warm: str | None = None, budget: float = 1.0) -> None:
    """Start this installation's daemon in the background, unless one was started lately and
    not `again` (the one running is of other code). `warm`: a file it checks first, from this
    working folder (the next save's answer then finds its project loaded)."""
    where = address()
    if where is None:
        return
    marker = where.with_suffix(".started")
    try:
        if not again and time.time() - marker.stat().st_mtime < START_INTERVAL:
            return
    except OSError:
        pass
    try:
        marker.touch()
        argv = [sys.executable, "-m", "ddplint", "daemon"]
        if warm is not None:
            argv += ["--warm", warm, "--warm-budget", str(budget)]
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives flake8, and its terminal's signals
            close_fds=True,
        )
    except OSError:
        pass

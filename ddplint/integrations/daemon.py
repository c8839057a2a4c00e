"""`ddplint daemon`: answers the flake8 plugin from a process that stays warm between runs.

flake8 is started anew at every save of an editor; with `ddplint-daemon = true` in its
configuration, the plugin asks this process (see ddplint.integrations.daemon_client) for the
one file flake8 checks, as the language server answers an editor: the analysis imported once,
the modules around the file kept in memory while their files do not change, the file's earlier
parse and what its last check settled reused (see ddplint.run.carry). The findings are those
flake8's own process would report. One request at a time, over a Unix socket only its user may
reach; it exits when idle for `idle` seconds, when asked to, or when asked by other code (an
upgraded installation), which then starts its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
from collections import OrderedDict
from collections.abc import Iterator

from ddplint.integrations import daemon_client
from ddplint.integrations.flake8_findings import buffer_rows, load_context_in_steps
from ddplint.run.carry import Carry
from ddplint.run.memory import settle_heap
from ddplint.syntax.positions import keep_generated
from ddplint.syntax.reading import LoadError, read_source
from ddplint.syntax.reparse import DocumentParser

IDLE = 30 * 60.0  # seconds
# Files whose parses and carries are kept (those being edited; flake8 checks one per save).
DOCUMENTS = 16
# A client must have sent its request within this many seconds.
READ_TIMEOUT = 10.0
# Seconds of loading in a step of the warm-up: the longest a save waits for it.
WARM_STEP = 0.25


class Documents:
    """The files asked about lately: each one's parser and carry, the oldest dropped."""

    def __init__(self, size: int = DOCUMENTS) -> None:
        self.size = size
        self._kept: OrderedDict[str, tuple[DocumentParser, Carry]] = OrderedDict()
        self.checks = 0

    def rows(self, request: dict) -> list[tuple[int, int, str]]:
        """The findings flake8's process would report for the request's text (the process's
        working folder taken as the request's, for its relative names and its settings)."""
        os.chdir(request["cwd"])
        filename = request["filename"]
        key = os.path.abspath(filename)
        kept = self._kept.pop(key, None) or (DocumentParser(), Carry())
        self._kept[key] = kept
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        parser, carry = kept
        found = buffer_rows(
            filename,
            request["text"],
            from_stdin=bool(request["stdin"]),
            budget=float(request["budget"]),
            noqa=bool(request["noqa"]),
            parser=parser,
            carry=carry,
        )
        settle_heap(self.checks)
        self.checks += 1
        return found


def serve(idle: float = IDLE, warm: dict | None = None) -> str | None:
    """Answer requests until idle, stopped or outdated; a problem that kept it from serving.
    `warm`: a request to answer first, for nobody (the requests that arrive meanwhile wait)."""
    where = daemon_client.address()
    if where is None:
        return "no private folder for the socket (or no Unix sockets here)"
    import fcntl  # found wherever Unix sockets are

    # Ended by a signal (a logout, `kill`), it still takes its socket away.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    last = None
    with open(where.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # another daemon of this installation serves
        with contextlib.suppress(FileNotFoundError):
            where.unlink()  # left by a daemon that was killed
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
                listener.bind(str(where))
                os.chmod(where, 0o600)
                listener.listen(8)
                listener.settimeout(idle)
                last = _answer_until_done(listener, daemon_client.stamp(), warm)
        finally:
            with contextlib.suppress(OSError):
                where.unlink()
    # The last answer goes out once the socket and the lock are free: told that it is of other
    # code, the client starts the daemon of its own at once.
    if last is not None:
        conn, answer = last
        with conn, contextlib.suppress(OSError):
            conn.sendall(json.dumps(answer).encode("utf-8"))
    return None


def _answer_until_done(
    listener: socket.socket, stamp: str, warm: dict | None
) -> tuple[socket.socket, dict] | None:
    """Answer until idle (None) or until a request that ends the service: it and its answer."""
    keep_generated(32)  # the functions its messages name, from one check to the next
    documents = Documents()
    warming = None if warm is None else _warm_up(documents, warm)
    while True:
        while warming is not None and not _waiting(listener):
            try:
                next(warming)
            except Exception:  # over (StopIteration), or the file gone meanwhile: its save will say
                warming = None
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            return None
        answer, done = _answer(conn, documents, stamp, warming=warming is not None)
        if done:
            return conn, answer
        with conn, contextlib.suppress(OSError):
            conn.sendall(json.dumps(answer).encode("utf-8"))


def _warm_up(documents: Documents, request: dict) -> Iterator[None]:
    """Load the project around the request's file in short steps, then check it (its parse and
    carry kept): the first save then finds the project loaded. Between two steps a request
    that waits is answered first."""
    os.chdir(request["cwd"])
    yield from load_context_in_steps(request["filename"], WARM_STEP)
    yield
    documents.rows(request)


def _waiting(listener: socket.socket) -> bool:
    """Whether a client waits to be answered."""
    return bool(select.select([listener], [], [], 0)[0])


def _answer(
    conn: socket.socket, documents: Documents, stamp: str, *, warming: bool = False
) -> tuple[dict, bool]:
    """The answer to one request, and whether to stop after it."""
    try:
        conn.settimeout(READ_TIMEOUT)
        request = json.loads(daemon_client.receive(conn).decode("utf-8"))
        if not isinstance(request, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        return {"error": f"unreadable request: {exc}"}, False
    if request.get("ping"):
        return {"pong": True, "checks": documents.checks, "warming": warming}, False
    if request.get("stop"):
        return {"stopped": True}, True
    if request.get("stamp") != stamp:
        return {"stale": True}, True
    try:
        return {"rows": documents.rows(request)}, False
    except Exception as exc:  # a bad request, or a bug of ours: flake8's process checks it then
        return {"error": f"{type(exc).__name__}: {exc}"}, False


def first_request(filename: str, budget: float) -> dict | None:
    """A request for `filename` as saved, from the working folder: the one the flake8 run that
    starts the daemon made for it, answered first to load the file's project."""
    try:
        text = read_source(filename).text
    except LoadError:
        return None
    request = {"cwd": os.getcwd(), "filename": filename, "text": text, "stdin": False}
    return request | {"budget": budget, "noqa": True}


def stop() -> bool:
    """Ask this installation's daemon to exit; whether one was running."""
    return daemon_client.send({"stop": True}) is not None

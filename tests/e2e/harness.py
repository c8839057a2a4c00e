"""Launch a training script on 2 local ranks (gloo, loopback) and say what happened.

Every rank runs as its own process with the environment `torchrun` would give it (`RANK`,
`WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR=127.0.0.1`, a free `MASTER_PORT`) in a process group of
its own, killed as a whole (with any DataLoader workers) when the run ends or outlives its
wall-clock limit; a rank killed that way first prints its Python stacks.

A script reports, on each rank, one line `E2E {"steps": ..., "checksum": ...}` when its training
loop is over. The outcome is one of

- ``completed``: every rank exited 0 and all reports agree (same steps, same checksum);
- ``disagreed``: every rank exited 0, but the reports differ (on gloo a mismatched collective can
  return a wrong value instead of hanging);
- ``hung``: a rank waited in a collective until the process-group timeout, or the run outlived
  the wall-clock limit and was killed;
- ``raised``: a rank ended with an ordinary error (its exception is kept), or a rank's collective
  failed because its peer exited without entering it (gloo's "Connection closed by peer").

Nothing here imports torch. The ranks are forked from `launcher.py`, one process started once
that has imported torch and nothing more (importing torch is most of what a fresh interpreter
would spend on a run). A rank leaves with `os._exit` after its script, without the interpreter's
teardown, where CPU torch now and then aborts and a forked rank could hang after
`destroy_process_group()`. `DDPLINT_E2E_FRESH=1` starts every rank as a fresh interpreter
instead (`python -X faulthandler script.py`).
"""

from __future__ import annotations

import contextlib
import json
import linecache
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

WORLD_SIZE = 2
# Seconds a collective may wait for its peers before gloo gives up (the scripts read it).
PG_TIMEOUT = float(os.environ.get("DDPLINT_E2E_PG_TIMEOUT", "4"))
# Seconds a whole run may take before every process of it is killed.
WALL_LIMIT = float(os.environ.get("DDPLINT_E2E_WALL_LIMIT", "60"))
# Start every rank as a fresh interpreter rather than fork it from the launcher.
FRESH = os.environ.get("DDPLINT_E2E_FRESH", "") == "1"

REPORT_PREFIX = "E2E "
# Printed by a script as its very last statement, after `destroy_process_group()`.
END_MARKER = "E2E-END"
AGREEMENT_KEYS = ("steps", "checksum")

# How gloo says that a collective waited for a peer that never came.
_TIMEOUT_PATTERNS = (
    re.compile(r"Timed out waiting \d+ms"),
    re.compile(r"Application timeout caused pair closure"),
)
# How gloo says that a peer left while this rank waited in a collective.
_PEER_PATTERNS = (
    re.compile(r"Connection closed by peer"),
    re.compile(r"Connection reset by peer"),
)
# How gloo says that the tensor a peer sent has another size than the one this rank waits with:
# the two ranks issued collectives that do not belong together. It aborts the process (C++).
_MISMATCH_PATTERNS = (re.compile(r"Received data size doesn't match expected size"),)
# A frame of a Python traceback, or of the stacks faulthandler prints when a rank aborts.
_FRAME_LINE = re.compile(
    r'^(?:\[rank\d+\]:)?\s*File "(?P<file>[^"]+)", line (?P<line>\d+),? in (?P<func>\S+)'
)
_CPP_EXCEPTION = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_EXCEPTION_LINE = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)):\s?(.*)$")


@dataclass
class RankResult:
    rank: int
    returncode: int | None  # None: killed at the wall-clock limit
    stdout: str
    stderr: str
    reports: list[dict] = field(default_factory=list)

    @property
    def report(self) -> dict | None:
        return self.reports[-1] if self.reports else None

    @property
    def error(self) -> str | None:
        """`Type: message` of the exception the rank ended with, if any."""
        if self.returncode in (0, None):
            return None
        lines = self.stderr.splitlines()
        cpp = _CPP_EXCEPTION.search(self.stderr) if self.returncode < 0 else None
        if cpp is not None:  # aborted by an exception of torch's C++ code (gloo's checks)
            what = next((line.split("what():", 1)[1] for line in lines if "what():" in line), "")
            return f"{cpp.group('type')}: {what.strip()}".strip()
        for line in reversed(lines):
            match = _EXCEPTION_LINE.match(line.strip())
            if match:
                return f"{match.group(1)}: {match.group(2)}".strip()
        return f"exit code {self.returncode}"

    def where(self, script: str) -> str | None:
        """``line N `code` `` of the innermost frame of `script` in the traceback the rank ended with."""
        if self.returncode in (0, None):
            return None
        lines = self.stderr.splitlines()
        found = None
        for index, line in enumerate(lines):
            match = _FRAME_LINE.match(line)
            if match and Path(match.group("file")).name == script and ", in " not in line:
                # faulthandler's stacks (an aborted rank): innermost frame first, no code shown.
                code = linecache.getline(match.group("file"), int(match.group("line"))).strip()
                return f"line {match.group('line')} `{code}`"
            if match and Path(match.group("file")).name == script:
                code = lines[index + 1] if index + 1 < len(lines) else ""
                code = re.sub(r"^\[rank\d+\]:", "", code).strip()
                found = f"line {match.group('line')} `{code}`"
        return found

    @property
    def timed_out(self) -> bool:
        return self.returncode is None or any(p.search(self.error or "") for p in _TIMEOUT_PATTERNS)

    @property
    def peer_left(self) -> bool:
        return any(p.search(self.error or "") for p in _PEER_PATTERNS)

    @property
    def mismatched(self) -> bool:
        """Aborted by gloo: the tensor its collective was paired with has another size."""
        return any(p.search(self.error or "") for p in _MISMATCH_PATTERNS)

    @property
    def finished(self) -> bool:
        """The script ran to its last statement (after `destroy_process_group()`)."""
        return any(line.strip() == END_MARKER for line in self.stdout.splitlines())

    @property
    def died_at_exit(self) -> bool:
        """Killed by a signal after its last statement: torch's teardown, not the training.

        CPU torch 2.13 now and then aborts (SIGABRT) while the interpreter finalizes after
        `destroy_process_group()`; every collective of the run had completed by then.
        """
        return self.returncode is not None and self.returncode < 0 and self.finished

    @property
    def ended_cleanly(self) -> bool:
        return self.returncode == 0 or self.died_at_exit

    @property
    def ordinary_error(self) -> bool:
        """Ended with an error that is not a collective waiting in vain (e.g. a `ValueError`)."""
        if self.ended_cleanly or self.returncode is None:
            return False
        return not (self.timed_out or self.peer_left or self.mismatched)


@dataclass
class Outcome:
    script: str
    status: str  # completed | disagreed | hung | raised
    ranks: list[RankResult]
    seconds: float

    @property
    def summary(self) -> str:
        parts = []
        for r in self.ranks:
            if r.returncode is None:
                parts.append(f"rank {r.rank}: still running after {self.seconds:.0f}s, killed")
            elif r.died_at_exit:
                parts.append(
                    f"rank {r.rank}: completed, reported {_brief(r.report)}, "
                    f"then died of signal {-r.returncode} in interpreter teardown"
                )
            elif r.returncode:
                where = r.where(self.script)
                done = f"reported {_brief(r.report)}, then " if r.report else ""
                at = f" at {where}" if where else ""
                parts.append(f"rank {r.rank}: {done}{_shorten(r.error or '')}{at}")
            else:
                parts.append(f"rank {r.rank}: completed, reported {_brief(r.report)}")
        return f"{self.status} in {self.seconds:.1f}s ({'; '.join(parts)})"

    def describe(self) -> str:
        """A short sentence for the README table."""
        if self.status in ("completed", "disagreed"):
            reports = [r.report or {} for r in self.ranks]
            steps = "/".join(str(rep.get("steps")) for rep in reports)
            text = f"completed, ranks agree ({steps} steps)"
            if self.status == "disagreed":
                same = len({rep.get("checksum") for rep in reports}) == 1
                checksums = "same checksums" if same else "different checksums"
                text = f"completed, ranks disagree ({steps} steps, {checksums})"
            orders = [rep.get("orders") for rep in reports]
            if all(orders):
                repeated = all(all(e == o[0] for e in o) for o in orders)
                text += "; each rank sees " + (
                    f"the same order in all {len(orders[0])} epochs"
                    if repeated
                    else "a new order every epoch"
                )
            return text
        phrases = []
        for r in self.ranks:
            where = r.where(self.script)
            code = where.split(" ", 2)[2] if where else ""
            at = f" in {_shorten(code, 48)}" if code else ""
            done = f"after {r.report['steps']} steps " if r.report else ""
            if r.returncode is None:
                phrases.append(f"{done}was still running, killed")
            elif r.ended_cleanly:
                phrases.append(f"completed {r.report['steps'] if r.report else '?'} steps")
            elif r.timed_out:
                phrases.append(f"{done}waited{at} until the {PG_TIMEOUT:g} s timeout")
            elif r.peer_left:
                phrases.append(f"{done}waited{at} until its peer exited")
            elif r.mismatched:
                sizes = re.search(r"\d+ vs \d+", r.error or "")
                gloo = f" (gloo: `{sizes.group(0)}`)" if sizes else ""
                phrases.append(f"{done}aborted{at}: its collective met a tensor of another size{gloo}")
            else:
                phrases.append(f"raised `{_shorten(r.error or '', 70)}`{at}")
        if len(set(phrases)) == 1:
            return f"{self.status}: every rank {phrases[0]}"
        return f"{self.status}: " + "; ".join(f"rank {r.rank} {p}" for r, p in zip(self.ranks, phrases))

    @property
    def diverged(self) -> bool:
        """The ranks fell out of step: a collective waited in vain, or results silently differ.

        An ordinary Python error (a `ValueError`, a typo in the script) is not divergence; a rank
        that waited in a collective until its peer left or the timeout struck is.
        """
        if self.status in ("hung", "disagreed"):
            return True
        return self.status == "raised" and not any(r.ordinary_error for r in self.ranks)

    def details(self, lines: int = 25) -> str:
        """The end of the error output of every rank that did not end cleanly, for failure messages."""
        tails = []
        for r in self.ranks:
            if r.returncode == 0:
                continue
            tail = "\n".join(r.stderr.splitlines()[-lines:])
            tails.append(f"--- rank {r.rank} (exit {r.returncode}), end of stderr:\n{tail}")
        return "\n".join(tails)

    def assert_completed_agreeing(self) -> None:
        assert self.status == "completed", (
            f"{self.script}: expected every rank to complete and agree, got {self.summary}\n{self.details()}"
        )
        reports = [r.report for r in self.ranks]
        assert all(reports), f"{self.script}: a rank did not report: {self.summary}"
        assert all(rep["steps"] > 0 for rep in reports), (
            f"{self.script}: no training step ran: {self.summary}"
        )

    def assert_diverged(self) -> None:
        assert self.diverged, (
            f"{self.script}: expected the ranks to fall out of step, got {self.summary}\n{self.details()}"
        )


def _brief(report: dict | None) -> str:
    if not report:
        return "nothing"
    return ", ".join(f"{k}={report[k]}" for k in AGREEMENT_KEYS if k in report)


def _shorten(text: str, limit: int = 160) -> str:
    text = re.sub(r"\[/[^\]]*third_party/gloo/gloo/", "[gloo/", text)
    text = re.sub(r"\. This is typically caused by.*", "", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(rank: int, port: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment `torchrun` gives a rank, on loopback."""
    env = dict(os.environ)
    env.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        WORLD_SIZE=str(WORLD_SIZE),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(WORLD_SIZE),
        GLOO_SOCKET_IFNAME="lo",
        DDPLINT_E2E_PG_TIMEOUT=str(PG_TIMEOUT),
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
        PYTHONHASHSEED="0",
    )
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    env.update(extra or {})
    return env


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _dump_stacks(procs: list) -> None:
    """Make every rank still running print its Python stacks (`-X faulthandler` on SIGABRT)."""
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGABRT)
    time.sleep(0.5)


class _Launcher:
    """`launcher.py`, started once per test process: it forks the ranks and reports their ends."""

    _running: _Launcher | None = None

    def __init__(self) -> None:
        env = rank_env(0, 0)
        for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK"):
            env.pop(name)
        self.proc = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", str(Path(__file__).with_name("launcher.py"))],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self.pending = b""

    @classmethod
    def get(cls) -> _Launcher:
        if cls._running is None or cls._running.proc.poll() is not None:
            cls._running = cls()
        return cls._running

    @classmethod
    def discard(cls) -> None:
        """Stop the launcher (a run broken off leaves answers unread); the next run starts another."""
        if cls._running is not None:
            _kill_group(cls._running.proc.pid)
            cls._running.proc.wait()
            cls._running = None

    def send(self, request: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def receive(self, deadline: float | None = None) -> dict | None:
        """The next answer; None when the deadline passes first."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], wait)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the rank launcher ended (exit code {self.proc.wait()})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)


@dataclass
class _Forked:
    """A rank forked by the launcher, with what `run_ranks` needs of a `subprocess.Popen`."""

    pid: int
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)


def _launch(script: Path, folder: Path, envs: list[dict[str, str]], limit: float, start: float):
    """Run the ranks forked by the launcher; return them and the ranks killed at the limit.

    A rank takes its environment (`envs[rank]`) when it starts the script, after the launcher
    imported torch with the environment every rank shares."""
    launcher = _Launcher.get()
    launcher.send(
        {
            "script": str(script),
            "cwd": str(script.parent),
            "ranks": [
                {
                    "env": env,
                    "stdout": str(folder / f"rank{rank}.out"),
                    "stderr": str(folder / f"rank{rank}.err"),
                }
                for rank, env in enumerate(envs)
            ],
        }
    )
    started = launcher.receive()
    assert started is not None
    procs = [_Forked(pid) for pid in started["pids"]]
    by_pid = {p.pid: p for p in procs}
    killed: set[int] = set()
    try:
        while any(p.returncode is None for p in procs):
            ended = launcher.receive(None if killed else start + limit)
            if ended is None:  # the wall-clock limit
                killed = {rank for rank, p in enumerate(procs) if p.returncode is None}
                _dump_stacks(procs)
                for proc in procs:
                    _kill_group(proc.pid)
                continue
            by_pid[ended["pid"]].returncode = ended["returncode"]
    except BaseException:
        _Launcher.discard()
        raise
    finally:
        for proc in procs:
            _kill_group(proc.pid)  # DataLoader workers a rank left behind
    return procs, killed


def run_ranks(
    script: Path,
    *,
    env: dict[str, str] | None = None,
    wall_limit: float | None = None,
    hash_seeds: tuple[str, ...] | None = None,
) -> Outcome:
    """Run `script` on `WORLD_SIZE` ranks; kill every process of the run at the wall-clock limit.

    `hash_seeds`: each rank's `PYTHONHASHSEED`, as two processes that each draw their own
    (torchrun and `mp.spawn` start every rank as a new interpreter). A process fixes its seed
    when it starts, so the ranks then run as fresh interpreters: a forked one keeps the launcher's.
    """
    script = Path(script).resolve()
    limit = WALL_LIMIT if wall_limit is None else wall_limit
    port = free_port()
    envs = [rank_env(rank, port, env) for rank in range(WORLD_SIZE)]
    if hash_seeds is not None:
        assert len(hash_seeds) == WORLD_SIZE, hash_seeds
        for rank_environment, seed in zip(envs, hash_seeds):
            rank_environment["PYTHONHASHSEED"] = seed
    procs: list = []
    killed: set[int] = set()  # ranks still running at the wall-clock limit
    with tempfile.TemporaryDirectory(prefix="ddplint-e2e-") as outdir:
        folder = Path(outdir)
        start = time.monotonic()
        start_ranks = _start_fresh if FRESH or hash_seeds is not None else _launch
        procs, killed = start_ranks(script, folder, envs, limit, start)
        seconds = time.monotonic() - start
        ranks = []
        for rank, proc in enumerate(procs):
            stdout = _read(folder / f"rank{rank}.out")
            ranks.append(
                RankResult(
                    rank=rank,
                    returncode=None if rank in killed else proc.returncode,
                    stdout=stdout,
                    stderr=_read(folder / f"rank{rank}.err"),
                    reports=_reports(stdout),
                )
            )
    return Outcome(script=script.name, status=_classify(ranks), ranks=ranks, seconds=seconds)


def _start_fresh(script: Path, folder: Path, envs: list[dict[str, str]], limit: float, start: float):
    """Run every rank as a fresh interpreter; return them and the ranks killed at the limit."""
    procs: list[subprocess.Popen] = []
    killed: set[int] = set()
    try:
        for rank, env in enumerate(envs):
            with (
                open(folder / f"rank{rank}.out", "w") as out,
                open(folder / f"rank{rank}.err", "w") as err,
            ):
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-X", "faulthandler", str(script)],
                        cwd=script.parent,
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=err,
                        start_new_session=True,  # its own process group, with its DataLoader workers
                    )
                )
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, start + limit - time.monotonic()))
            except subprocess.TimeoutExpired:
                killed = {rank for rank, p in enumerate(procs) if p.poll() is None}
                _dump_stacks(procs)
                break
    finally:
        for proc in procs:
            _kill_group(proc.pid)  # a rank still running, or worker processes a rank left behind
            proc.wait()
    return procs, killed


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _reports(stdout: str) -> list[dict]:
    reports = []
    for line in stdout.splitlines():
        if line.startswith(REPORT_PREFIX):
            try:
                reports.append(json.loads(line[len(REPORT_PREFIX) :]))
            except json.JSONDecodeError:
                continue
    return reports


def _classify(ranks: list[RankResult]) -> str:
    if any(r.ordinary_error for r in ranks):
        return "raised"  # the root cause; a peer's timeout is only its consequence
    if any(r.timed_out for r in ranks):
        return "hung"
    if not all(r.ended_cleanly for r in ranks):
        return "raised"  # a collective failed because its peer left
    reports = [r.report for r in ranks]
    if not all(reports):
        return "raised"  # exited 0 without reporting: the script ended early
    keys = [tuple(rep.get(k) for k in AGREEMENT_KEYS) for rep in reports]
    return "completed" if len(set(keys)) == 1 else "disagreed"

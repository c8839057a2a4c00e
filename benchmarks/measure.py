"""Running one command and measuring it: wall time and the peak RSS of its whole process tree."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
PROC = Path("/proc")


@dataclass
class Sample:
    seconds: float
    peak_rss: int  # bytes, summed over the process and all its descendants at the worst moment
    cpu_seconds: float  # user + system, the process and every descendant it waited for
    returncode: int


def _process_table() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, resident bytes) for every process we can read."""
    table: dict[int, tuple[int, int]] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after its last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        table[int(entry.name)] = (int(fields[1]), int(fields[21]) * PAGE)
    return table


def tree_rss(root: int) -> int:
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        if pid in table:
            total += table[pid][1]
        stack.extend(children.get(pid, ()))
    return total


def run_measured(
    argv: list[str], *, cwd: Path | None = None, env: dict | None = None, interval: float = 0.05
) -> Sample:
    """Run `argv` with output discarded; poll the process tree's RSS until it exits."""
    polling = PROC.is_dir()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    done = threading.Event()

    def poll() -> None:
        nonlocal peak
        while not done.wait(interval):
            with contextlib.suppress(OSError, ValueError, IndexError):  # it may be exiting
                peak = max(peak, tree_rss(proc.pid))

    poller = threading.Thread(target=poll, daemon=True) if polling else None
    if poller is not None:
        poller.start()
    # wait4, not wait: it also tells the child's own peak RSS (and that of what it waited for).
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = returncode = os.waitstatus_to_exitcode(status)
    done.set()
    if poller is not None:
        poller.join()
    # Without /proc, or for a run shorter than one poll: the largest single process.
    peak = max(peak, usage.ru_maxrss * 1024)
    return Sample(seconds, peak, usage.ru_utime + usage.ru_stime, returncode)

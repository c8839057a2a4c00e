"""Starts the ranks of the e2e runs: torch is imported here once, and every rank is forked from here.

Started by `harness.py` with the environment every rank shares, it reads one request per line on
its standard input (JSON: the script, its folder, and per rank the environment and the files for
standard output and error), forks one process per rank, answers `{"pids": [...]}` and then
`{"pid": ..., "returncode": ...}` for each rank as it ends, in the order they end.

This process only imports torch: no tensor operation, no thread besides the main one (checked
before every fork), so a forked rank starts as a fresh interpreter would after `import torch`,
in a fraction of the time. A rank runs its script as `__main__` in a session of its own and
prints an uncaught exception the way Python does. A script that raised ends with the
interpreter's shutdown, as in a fresh interpreter; one that ran to its end leaves with
`os._exit` once its files are flushed, without the teardown where torch now and then aborts or
hangs after `destroy_process_group()`.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import sys

# What every rank imports first.
import torch
import torch.distributed
import torch.nn.parallel
import torch.utils.data  # noqa: F401


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _run_rank(request: dict, rank: dict, answers: int) -> None:
    """In the forked process: become the rank, run the script, and never return."""
    code = 1
    raised = False
    try:
        os.close(answers)
        os.setsid()  # a process group of its own, killed as a whole with its DataLoader workers
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, rank["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, rank["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(path, flags, 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(rank["env"])
        script = request["script"]
        sys.argv = [script]
        sys.path[0] = os.path.dirname(script)
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except BaseException:
            sys.excepthook(*sys.exc_info())
            raised = True
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        if not raised:
            os._exit(code)
    # A rank whose script raised shuts the interpreter down, as a fresh one would: its connections
    # stay open meanwhile. Leaving at once, a rank 0 that raised right after `init_process_group`
    # took down the store its peer was still connecting through.
    raise SystemExit(1)


def main() -> None:
    answers = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing but answers on the answer pipe

    def answer(message: dict) -> None:
        os.write(answers, (json.dumps(message) + "\n").encode())

    for line in sys.stdin:
        request = json.loads(line)
        threads = os.listdir("/proc/self/task")
        if len(threads) != 1:
            raise RuntimeError(f"forking with {len(threads)} threads running")
        pids = []
        for rank in request["ranks"]:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _run_rank(request, rank, answers)
            pids.append(pid)
        answer({"pids": pids})
        left = set(pids)
        while left:
            pid, status = os.waitpid(-1, 0)
            if pid in left:
                left.discard(pid)
                answer({"pid": pid, "returncode": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main()

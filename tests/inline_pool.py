"""A stand-in for the run's process pool: its one worker runs each task as it is given."""

from __future__ import annotations

from concurrent.futures import Future


class InlinePool:
    """Runs each task at once, in this process, and notes the name of each function given."""

    def __init__(self) -> None:
        self.tasks: list[str] = []

    def submit(self, function, *args) -> Future:
        self.tasks.append(function.__name__)
        future: Future = Future()
        future.set_result(function(*args))
        return future

    def shutdown(self, wait: bool = True) -> None:
        pass

"""Freed memory goes back to the system where the C library can give it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ddplint.run import memory

PROGRAM = """
import ddplint.run.memory as memory
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1])
blocks = [bytes(2000) for _ in range(50_000)]  # 100 MB on the C memory, above pymalloc's sizes
kept = blocks[-1]  # the heap's last block stays in use: free() alone cannot shrink it
del blocks
before = resident()
memory.give_back_free_memory()
print(before, resident())
"""


def test_calling_it_is_harmless_everywhere() -> None:
    memory.give_back_free_memory()
    memory.give_back_free_memory()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_pages_of_freed_memory_go_back() -> None:
    memory.give_back_free_memory()
    if not memory._trim:
        pytest.skip("no malloc_trim in this C library")
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True)
    before, after = map(int, done.stdout.split())
    assert before - after > 10_000  # pages: more than 40 MB of the 100 given back


def test_memory_goes_back_after_every_megabyte_of_source_parsed(monkeypatch) -> None:
    total = 0
    given_back_at = []
    monkeypatch.setattr(memory, "give_back_free_memory", lambda: given_back_at.append(total))
    monkeypatch.setattr(memory, "_parsed_since", 0)
    for size in (600_000, 600_000, 100_000, 2_000_000, 10):
        total += size
        memory.parsed(size)
    # Once past a megabyte (1.2 MB), then past another since (2.1 MB later); the last 10
    # bytes wait for the next megabyte.
    assert given_back_at == [1_200_000, 3_300_000]
    assert memory._parsed_since == 10


def test_loading_a_group_here_counts_what_it_parsed(tmp_path, monkeypatch) -> None:
    from ddplint.engine.checker import Linter
    from ddplint.run.shared_load import load_group

    paths = []
    for name, text in (("a.py", "import torch\n"), ("b.py", "x = 1\n"), ("broken.py", "def (\n")):
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    counted = []
    monkeypatch.setattr(memory, "parsed", counted.append)
    load_group(Linter(), paths, None)
    assert counted == [len("import torch\n"), len("x = 1\n")]  # not the file that did not parse

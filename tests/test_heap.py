"""Freed memory goes back to the system where the C library can give it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ddplint import heap

PROGRAM = """
import ddplint.heap as heap
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1])
blocks = [bytes(2000) for _ in range(50_000)]  # 100 MB on the C heap, above pymalloc's sizes
kept = blocks[-1]  # the heap's last block stays in use: free() alone cannot shrink it
del blocks
before = resident()
heap.give_back_free_memory()
print(before, resident())
"""


def test_calling_it_is_harmless_everywhere() -> None:
    heap.give_back_free_memory()
    heap.give_back_free_memory()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_pages_of_freed_memory_go_back() -> None:
    heap.give_back_free_memory()
    if not heap._trim:
        pytest.skip("no malloc_trim in this C library")
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True)
    before, after = map(int, done.stdout.split())
    assert before - after > 10_000  # pages: more than 40 MB of the 100 given back

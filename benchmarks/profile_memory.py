"""Where ddplint's memory goes on a corpus, and which of it the analysis reads.

    python benchmarks/profile_memory.py PATH [PATH ...]

One process, no cache, the prefilter on, loading as `ddplint check --jobs 1` loads an import
group: every module's tree and facts stay alive until the check ends. Reported: the resident
memory the loaded modules take against their source text, what the check adds, and the modules
whose trees the analysis walks beyond each module's own check: those whose functions the
divergence analysis simulates, and those whose values a rule traces from another module
(`Origins.of`). Every other module's tree is walked by its own check alone; the others read its
functions, classes and imports by name (a call resolved to its function). The union is what an
analysis keeping per-module summaries instead of trees would still need as trees at once.
Linux only (resident memory from /proc).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
from pathlib import Path

from ddplint import prefilter, readahead
from ddplint.config import Settings
from ddplint.discovery import discover
from ddplint.divergence.simulate import Simulator
from ddplint.linter import Linter
from ddplint.origins import Origins

MIB = 1024 * 1024


def resident_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


class Reads:
    """The modules the analysis walks, recorded by wrapping the two places that walk them."""

    def __init__(self) -> None:
        self.checking: str | None = None
        self.simulated: set[str] = set()
        self.traced: set[str] = set()
        simulator_init, origin_of = Simulator.__init__, Origins.of
        reads = self

        def simulate(self, analysis, facts, *args, **kwargs):
            reads.simulated.add(facts.filename)
            simulator_init(self, analysis, facts, *args, **kwargs)

        def trace(self, facts, *args, **kwargs):
            if facts.filename != reads.checking:
                reads.traced.add(facts.filename)
            return origin_of(self, facts, *args, **kwargs)

        Simulator.__init__ = simulate
        Origins.of = trace


def profile(paths: list[str]) -> list[tuple[str, str]]:
    settings = Settings()
    linter = Linter(settings)
    files = discover(paths, settings).files
    kept = prefilter.select(files, linter.trigger_names()).kept
    reads = Reads()
    gc.disable()  # as the `ddplint` command runs
    linter.keep_texts = False  # as a run that fixes nothing: texts are read back when asked for
    before = resident_bytes()
    loaded, _ = readahead.add_group(linter, kept)  # as the run loads a group in its own process
    after_load = resident_bytes()
    for facts in loaded:
        reads.checking = facts.filename
        linter.check(facts)
    after_check, peak = resident_bytes(), peak_bytes()
    text = {facts.filename: Path(facts.filename).stat().st_size for facts in loaded}  # not read again
    total = sum(text.values()) or 1

    def share(names: set[str]) -> str:
        size = sum(text.get(name, 0) for name in names)
        return f"{len(names)} modules, {size / MIB:.1f} MB of text ({100 * size / total:.0f} %)"

    grown = after_load - before
    return [
        ("files / loaded", f"{len(files)} / {len(loaded)}"),
        ("source text", f"{total / MIB:.1f} MB"),
        (
            "resident after loading (trees + facts)",
            f"{grown / MIB:.0f} MB ({grown / total:.0f} bytes a byte)",
        ),
        ("added by the check", f"{(after_check - after_load) / MIB:.0f} MB"),
        ("peak resident", f"{peak / MIB:.0f} MB"),
        ("simulated by the divergence analysis", share(reads.simulated)),
        ("values traced from another module", share(reads.traced)),
        ("trees walked beyond their own check", share(reads.simulated | reads.traced)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    rows = profile([str(p) for p in args.paths])
    print("| measure | value |")
    print("| --- | --- |")
    for label, value in rows:
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()

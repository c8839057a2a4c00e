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
With `--by-type`, also what the loaded trees and facts are made of: the syntax tree nodes by
class, and the other objects the facts hold by type, with their sizes as Python reports them
(`sys.getsizeof`, plus the cycle collector's header where it has one). With `--store`, also
what keeping the loaded modules as compressed pickles instead of live trees would cost: the CPU
seconds to pickle, compress, decompress and unpickle them all, and the bytes. With
`--skeletons`, also what the loaded modules take held as their skeletons alone (see
ddplint.model.skeleton: the facts without a node, as a warm run holds the modules around a
checked file): each is kept in a temporary tree cache, then read back as a skeleton in a fresh
process, with the texts and the compressed whole facts that process then holds; then all are
checked from their skeletons, in two fresh processes: one holds each module read whole to the
end, the other puts a module back as a skeleton after its own check when that check read no
other module whole and kept none of its nodes, as a run does (see ddplint.run.group). Both
report the modules read whole and the memory, and their findings are compared.
Linux only (resident memory from /proc).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

from ddplint.analysis.divergence.simulate import Simulator
from ddplint.analysis.origins import Origins
from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.model import skeleton
from ddplint.model.skeleton import LazyModuleFacts
from ddplint.run import prefilter, shared_load
from ddplint.run.cache.trees import TreeCache
from ddplint.run.discovery import discover
from ddplint.run.group import RunOptions, check_guarded
from ddplint.syntax import pickling

MIB = 1024 * 1024


def resident_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def own_peak_bytes() -> int:
    """This process image's peak: ru_maxrss of a process started by another carries the
    starter's peak over."""
    with open("/proc/self/status") as handle:
        line = next(line for line in handle if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


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


def _size(value: object) -> int:
    return sys.getsizeof(value) + (16 if gc.is_tracked(value) else 0)


def by_type(loaded: list, top: int = 12) -> list[tuple[str, int, int]]:
    """(kind, count, bytes) of what `loaded` (the facts of modules) holds: tree nodes by class,
    reached through their children (each shared node once), then every other object the facts
    reach, by type; the largest `top` of each."""
    import libcst as cst

    seen: set[int] = set()
    nodes: Counter[str] = Counter()
    node_bytes: Counter[str] = Counter()
    for facts in loaded:
        stack = [facts.tree]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            nodes[type(node).__name__] += 1
            node_bytes[type(node).__name__] += _size(node)
            stack.extend(node.children)
    others: Counter[str] = Counter()
    other_bytes: Counter[str] = Counter()
    stack = list(loaded)
    while stack:
        value = stack.pop()
        if id(value) in seen or isinstance(value, type) or type(value).__name__ in ("module", "function"):
            continue
        seen.add(id(value))
        kind = (
            f"{type(value).__name__} (node outside the children)"
            if isinstance(value, cst.CSTNode)
            else type(value).__name__
        )
        others[kind] += 1
        other_bytes[kind] += _size(value)
        if not isinstance(value, (str, bytes, int, float)):
            stack.extend(gc.get_referents(value))
    rows = [("all tree nodes", sum(nodes.values()), sum(node_bytes.values()))]
    rows += [(f"node {kind}", nodes[kind], size) for kind, size in node_bytes.most_common(top)]
    rows.append(("all else the facts hold", sum(others.values()), sum(other_bytes.values())))
    rows += [(kind, others[kind], size) for kind, size in other_bytes.most_common(top)]
    return rows


def store_costs(loaded: list) -> list[tuple[str, str]]:
    """What holding `loaded` as compressed pickles, each read back once, would cost."""

    def timed(work):
        start = time.process_time()
        out = work()
        return out, time.process_time() - start

    blobs, dumping = timed(lambda: [pickling.dumps(facts) for facts in loaded])
    # Level 1, as ddplint.run.cache.trees keeps modules between runs.
    packed, packing = timed(lambda: [zlib.compress(blob, 1) for blob in blobs])
    _, unpacking = timed(lambda: [zlib.decompress(blob) for blob in packed])
    _, reading = timed(lambda: [pickling.loads(blob) for blob in blobs])
    return [
        ("pickled (trees + facts)", f"{sum(map(len, blobs)) / MIB:.0f} MB in {dumping:.1f} CPU s"),
        ("compressed (zlib, level 1)", f"{sum(map(len, packed)) / MIB:.0f} MB in {packing:.1f} CPU s"),
        ("read back: decompress + unpickle", f"{unpacking:.1f} + {reading:.1f} CPU s"),
    ]


def skeleton_rows(files: list[Path]) -> list[tuple[str, str]]:
    """What `files` take held as skeletons alone, measured in a process that parses nothing;
    then checked from skeletons, once holding every module read whole until the end, once
    putting each back after its own check as a run does, each in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="ddplint-skeletons-") as folder:
        linter = Linter(Settings())
        linter.trees = TreeCache(Path(folder), keep=True)
        for path in files:
            try:
                linter.load(str(path))  # parsed, and kept in the folder
            except Exception:  # LoadError: not loaded by a run either
                continue
        runs = []
        for mode in ("--held", "--put-back"):
            argv = [sys.executable, __file__, "--read-skeletons", mode, folder, *map(str, files)]
            runs.append(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    rows = [tuple(line.split("\t")) for line in runs[0].splitlines() if "\t" in line]
    rows += [tuple(line.split("\t")) for line in runs[1].splitlines()[3:] if "\t" in line]
    same = runs[0].rsplit("findings\t", 1)[-1] == runs[1].rsplit("findings\t", 1)[-1]
    rows.append(("findings of the two checks from skeletons", "the same" if same else "DIFFERENT"))
    return [row for row in rows if row[0] != "findings"]  # type: ignore[misc]


def read_skeletons(folder: str, files: list[str], put_back_checked: bool) -> None:
    """In the fresh process: read every kept module back as a skeleton; print the rows. Then
    check them all, as one import group, in order."""
    gc.disable()
    linter = Linter(Settings())
    linter.trees = TreeCache(Path(folder), keep=False)
    before = resident_bytes()
    skeletons = []
    for filename in files:
        try:
            skeletons.append(linter.load(filename, context=True))
        except Exception:
            continue
    grown = resident_bytes() - before
    texts = sum(len(facts.source.__dict__.get("text") or "") for facts in skeletons)
    # Each skeleton waits for its whole facts, read from the kept bytes its reader holds.
    awaiting = sum(
        len(cell.cell_contents)
        for facts in skeletons
        for cell in getattr(facts.__dict__.get("_whole"), "__closure__", None) or ()
        if isinstance(cell.cell_contents, bytes)
    )
    print(f"held as skeletons alone\t{len(skeletons)} modules, {grown / MIB:.0f} MB resident")
    print(f"of which their texts\t{texts / MIB:.0f} MB of characters")
    print(f"of which the compressed whole facts awaiting a read\t{awaiting / MIB:.0f} MB")
    check_skeletons(linter, [f for f in skeletons if type(f) is LazyModuleFacts], put_back_checked)


def check_skeletons(linter: Linter, modules: list[LazyModuleFacts], put_back_checked: bool) -> None:
    """Check `modules` (skeletons) in order and print what it took; `put_back_checked`: as a
    run checks them (see ddplint.run.group.check_guarded), putting each back after its own check
    when that check read no other module whole and kept none of its nodes."""
    for facts in modules:
        linter.project.add(facts)
    findings, first = [], ""
    for facts in modules:
        if put_back_checked:
            found = check_guarded(linter, facts, RunOptions()).diagnostics
        else:
            found = linter.check(facts)
            facts.forget_positions()
        findings += [(facts.filename, d.code, d.location.row, d.message) for d in found]
        if not first:
            first = f"{skeleton.read_whole} modules read whole, {resident_bytes() / MIB:.0f} MB resident"
    left = sum(1 for facts in modules if type(facts) is LazyModuleFacts)
    how = "put back after its own check" if put_back_checked else "held once read whole"
    print(f"checked from skeletons ({how}): after the first check\t{first}")
    print(
        f"checked from skeletons ({how}): at the end\t{skeleton.read_whole} reads whole, "
        f"{left} skeletons, peak {own_peak_bytes() / MIB:.0f} MB"
    )
    print(f"findings\t{sorted(findings)!r}")


def profile(
    paths: list[str], types: bool = False, store: bool = False, skeletons: bool = False
) -> list[tuple[str, str]]:
    settings = Settings()
    linter = Linter(settings)
    files = discover(paths, settings).files
    kept = prefilter.select(files, linter.trigger_names()).kept
    reads = Reads()
    gc.disable()  # as the `ddplint` command runs
    linter.keep_texts = False  # as a run that fixes nothing: texts are read back when asked for
    before, started = resident_bytes(), time.process_time()
    loaded, _ = shared_load.add_group(linter, kept)  # as the run loads a group in its own process
    after_load, loading = resident_bytes(), time.process_time() - started
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
    rows = [
        ("files / loaded", f"{len(files)} / {len(loaded)}"),
        ("source text", f"{total / MIB:.1f} MB"),
        (
            "resident after loading (trees + facts)",
            f"{grown / MIB:.0f} MB ({grown / total:.0f} bytes a byte)",
        ),
        ("loading (read, parse, facts)", f"{loading:.1f} CPU s"),
        ("added by the check", f"{(after_check - after_load) / MIB:.0f} MB"),
        ("peak resident", f"{peak / MIB:.0f} MB"),
        ("simulated by the divergence analysis", share(reads.simulated)),
        ("values traced from another module", share(reads.traced)),
        ("trees walked beyond their own check", share(reads.simulated | reads.traced)),
    ]
    if store:  # after the memory figures: the pickles would count as the check's
        rows += store_costs(loaded)
    if skeletons:
        rows += skeleton_rows([Path(facts.filename) for facts in loaded])
    if types:  # last: its own bookkeeping would count as the check's
        for kind, count, size in by_type(loaded):
            rows.append((f"{kind} (after the check)", f"{count:,} objects, {size / MIB:.1f} MB"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--by-type", action="store_true", help="also what the trees and facts hold")
    parser.add_argument("--store", action="store_true", help="also what a store of pickled trees costs")
    parser.add_argument("--skeletons", action="store_true", help="also what the modules take as skeletons")
    if sys.argv[1:2] == ["--read-skeletons"]:  # the fresh processes of --skeletons
        read_skeletons(sys.argv[3], sys.argv[4:], put_back_checked=sys.argv[2] == "--put-back")
        return
    args = parser.parse_args()
    rows = profile(
        [str(p) for p in args.paths], types=args.by_type, store=args.store, skeletons=args.skeletons
    )
    print("| measure | value |")
    print("| --- | --- |")
    for label, value in rows:
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()

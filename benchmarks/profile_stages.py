"""Where ddplint's time goes on a corpus, stage by stage, in one process.

    python benchmarks/profile_stages.py PATH [PATH ...] [--cprofile out.prof]

Stages: discovery, the prefilter's byte scan, reading and decoding, libcst parsing, the facts
walk, the project-wide analysis and rules (`check`), and positions (computed inside `check`,
only for modules that report something; shown separately).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import time
from pathlib import Path

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.model.facts import ModuleFacts
from ddplint.model.names import module_name_for
from ddplint.run import prefilter
from ddplint.run.discovery import discover
from ddplint.syntax import positions
from ddplint.syntax.parse import parse_source
from ddplint.syntax.reading import LoadError, read_source


class Clock:
    def __init__(self) -> None:
        self.stages: dict[str, float] = {}

    def add(self, stage: str, seconds: float) -> None:
        self.stages[stage] = self.stages.get(stage, 0.0) + seconds


def profile(paths: list[str], clock: Clock) -> int:
    settings = Settings()
    linter = Linter(settings)
    start = time.perf_counter()
    files = discover(paths, settings).files
    clock.add("discover", time.perf_counter() - start)

    start = time.perf_counter()
    selection = prefilter.select(files, linter.trigger_names())
    clock.add("prefilter scan", time.perf_counter() - start)

    spans = positions.compute_spans
    spent = [0.0]

    def timed_spans(module):
        begin = time.perf_counter()
        try:
            return spans(module)
        finally:
            spent[0] += time.perf_counter() - begin

    positions.compute_spans = timed_spans
    import ddplint.model.facts as facts_module

    facts_module.compute_spans = timed_spans
    gc.disable()
    loaded = []
    for path in selection.kept:
        begin = time.perf_counter()
        try:
            source = read_source(str(path))
        except LoadError:
            continue
        clock.add("read + decode", time.perf_counter() - begin)
        begin = time.perf_counter()
        try:
            tree = parse_source(source)
        except LoadError:
            continue
        clock.add("libcst parse", time.perf_counter() - begin)
        begin = time.perf_counter()
        facts = ModuleFacts(source, tree, module_name_for(path), is_package=path.name == "__init__.py")
        clock.add("facts walk", time.perf_counter() - begin)
        linter.project.add(facts)
        loaded.append(facts)
    begin = time.perf_counter()
    findings = sum(len(linter.check(facts)) for facts in loaded)
    clock.add("analysis + rules (incl. positions)", time.perf_counter() - begin)
    clock.add("positions (reported modules only)", spent[0])
    gc.enable()
    print(f"{len(files)} files, {len(selection.kept)} kept by the prefilter, {findings} findings")
    return findings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--cprofile", type=Path, help="also write a cProfile file here")
    args = parser.parse_args()
    clock = Clock()
    if args.cprofile:
        cProfile.runctx("profile(args.paths, clock)", globals(), locals(), str(args.cprofile))
    else:
        profile(args.paths, clock)
    total = sum(v for k, v in clock.stages.items() if not k.startswith("positions"))
    print("| stage | seconds | share |")
    print("| --- | ---: | ---: |")
    for stage, seconds in clock.stages.items():
        print(f"| {stage} | {seconds:.2f} | {100 * seconds / total:.0f} % |")


if __name__ == "__main__":
    main()

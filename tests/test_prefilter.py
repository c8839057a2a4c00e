"""The prefilter skips files, never findings: the same diagnostics with and without it."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from ddplint.config import Settings
from ddplint.engine.checker import Linter
from ddplint.run import prefilter
from ddplint.run.outline import MODULE, Outline, outline
from ddplint.run.runner import RunOptions, run
from ddplint.syntax.reading import LoadError

FIXTURES = Path(__file__).parent / "fixtures"


def _findings(paths: list[Path], *, use_prefilter: bool) -> list[tuple]:
    # No neighbour loading: its time budget would make the comparison depend on the machine.
    options = RunOptions(prefilter=use_prefilter, context_budget=0)
    result = run([str(p) for p in paths], Settings(), options)
    return [(d.filename, d.location, d.end_location, d.code, d.message) for d in result.diagnostics]


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


# A training script whose epoch loop lives in a helper with no torch token at all, reached
# through a second helper; plus modules nothing relevant touches, one of them broken.
PROJECT = {
    "train.py": """\
        import torch.utils.data as tud
        from loops import fit

        sampler = tud.DistributedSampler(dataset)
        loader = tud.DataLoader(dataset, sampler=sampler)
        fit(loader)
        """,
    "loops.py": """\
        from engine import run_epochs

        def fit(loader):
            run_epochs(loader)
        """,
    "engine.py": """\
        def run_epochs(loader):
            for epoch in range(10):
                for batch in loader:
                    batch.sum().backward()
        """,
    "plotting.py": """\
        import json

        def plot(values):
            return json.dumps(values)
        """,
    "broken.py": "def f(:\n    pass\n",
}


def test_helpers_without_tokens_are_kept_and_unrelated_modules_skipped(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    files = sorted(tmp_path.glob("*.py"))
    selection = prefilter.select(files, Linter().trigger_names())
    assert {p.name for p in selection.kept} == {"train.py", "loops.py", "engine.py"}
    assert {p.name for p in selection.skipped} == {"plotting.py", "broken.py"}


def test_findings_through_helpers_and_syntax_errors_survive_the_prefilter(tmp_path: Path) -> None:
    _write(tmp_path, PROJECT)
    with_filter = _findings([tmp_path], use_prefilter=True)
    assert with_filter == _findings([tmp_path], use_prefilter=False)
    codes = {(Path(f).name, code) for f, _, _, code, _ in with_filter}
    assert ("train.py", "DDP002") in codes  # the epoch loop is two modules away
    assert ("broken.py", "E999") in codes  # skipped by the scan, still reported


def test_modules_connected_to_a_trigger_are_kept_only_where_a_definition_can_matter(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            # Imports DataLoader but never builds one: nothing in it can take part in a finding.
            "pkg/imports_only.py": "from torch.utils.data import DataLoader\n",
            "pkg/data.py": """\
                from torch.utils.data import DataLoader

                def make_loader(ds):
                    return DataLoader(ds)
                """,
            # Names a seed (its result may be a loader): kept, and so is what it names.
            "pkg/cli.py": """\
                from . import data
                from .helpers import consume

                def main(ds):
                    consume(data.make_loader(ds))
                """,
            "pkg/helpers.py": "def consume(loader):\n    for batch in loader:\n        print(batch)\n",
            # Import-connected to the seed's module, but naming nothing that matters.
            "pkg/other.py": "import pkg.cli as c\n",
            "pkg/models.py": "from pkg import data\n\ndef build():\n    return 1\n",
            "pkg/util.py": "def helper(model):\n    model(1)\n",
            "pkg/sibling.py": "from .util import helper\n\ndef f():\n    return helper(1)\n",
        },
    )
    files = sorted(tmp_path.rglob("*.py"))
    selection = prefilter.select(files, Linter().trigger_names())
    assert {p.name for p in selection.kept} == {"data.py", "cli.py", "helpers.py"}
    assert _findings([tmp_path], use_prefilter=True) == _findings([tmp_path], use_prefilter=False)


# `backward()` is a collective in every module a wrapping program imports, also through a
# module the prefilter does not load: `wrap.py` imports `chain`, which imports `step`.
THROUGH_AN_UNLOADED_MODULE = {
    # Imports `chain` for what importing it does; names nothing through it.
    "wrap.py": """\
        import chain
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(model):
            return DDP(model)
        """,
    "chain.py": "import step\n",
    "step.py": """\
        import torch

        def update(model, batch):
            loss = model(batch).sum()
            if torch.isnan(loss):
                return
            loss.backward()
        """,
}


def test_a_package_re_exporting_a_helper_is_kept_for_the_names_resolved_through_it(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            # No definition of its own: only the re-export ties `train.py` to the collective.
            "pkg/__init__.py": "from .helpers import reduce_all\n",
            "pkg/helpers.py": """\
                import torch.distributed as dist

                def reduce_all(t):
                    dist.all_reduce(t)
                """,
            "train.py": """\
                import torch.distributed as dist
                from pkg import reduce_all

                def step(x):
                    if dist.get_rank() == 0:
                        reduce_all(x)
                """,
        },
    )
    files = sorted(tmp_path.rglob("*.py"))
    selection = prefilter.select(files, Linter().trigger_names())
    assert {p.name for p in selection.kept} == {"__init__.py", "helpers.py", "train.py"}
    with_filter = _findings([tmp_path], use_prefilter=True)
    assert with_filter == _findings([tmp_path], use_prefilter=False)
    assert [(Path(f).name, at.row, code) for f, at, _, code, _ in with_filter] == [("train.py", 6, "DDP005")]


def test_a_program_that_wraps_reaches_modules_through_unloaded_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prefilter, "OUTLINE_WHEN", 0)  # the definition pass runs on any project
    _write(tmp_path, THROUGH_AN_UNLOADED_MODULE)
    selection = prefilter.select(sorted(tmp_path.glob("*.py")), Linter().trigger_names())
    assert {p.name for p in selection.skipped} == {"chain.py"}
    assert selection.unloaded == {"chain": ("step",)}
    with_filter = _findings([tmp_path], use_prefilter=True)
    assert with_filter == _findings([tmp_path], use_prefilter=False)
    assert [(Path(f).name, start.row, code) for f, start, _, code, _ in with_filter] == [
        ("step.py", 6, "DDP004")
    ]


def test_no_outlines_are_read_where_nearly_every_module_spells_a_trigger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every module but the small `util.py` and `plot.py` spells a collective: each holds a seed
    # definition and is parsed anyway, so outlining could spare at most those two, for more
    # than it costs.
    reducer = "import torch.distributed as dist\n\ndef {name}(t):\n    dist.all_reduce(t)\n    return t\n"
    files = {f"pkg/m{i}.py": reducer.format(name=f"reduce_{i}") for i in range(6)}
    files["pkg/__init__.py"] = "from .m0 import reduce_0\nfrom .util import double\nfrom .plot import draw\n"
    files["pkg/plot.py"] = "def draw(values):\n    print(values)\n"
    files["pkg/util.py"] = "def double(x):\n    return 2 * x\n"
    files["train.py"] = """\
        import torch.distributed as dist
        from pkg import reduce_0, double

        def step(x):
            if dist.get_rank() == 0:
                reduce_0(double(x))
        """
    _write(tmp_path, files)
    paths = sorted(tmp_path.rglob("*.py"))
    outlined: list[Path] = []
    read_outlines = prefilter.outline_files
    monkeypatch.setattr(
        prefilter, "outline_files", lambda paths, *rest: outlined.extend(paths) or read_outlines(paths, *rest)
    )
    selection = prefilter.select(paths, Linter().trigger_names())
    assert outlined == []
    assert selection.kept == paths
    with_filter = _findings([tmp_path], use_prefilter=True)
    assert with_filter == _findings([tmp_path], use_prefilter=False)
    assert [(Path(f).name, at.row, code) for f, at, _, code, _ in with_filter] == [("train.py", 6, "DDP005")]
    # When one of them is large, the outlines can spare it: they are read. (`util.py` is not
    # spared: `step` names `double`.)
    (tmp_path / "pkg" / "plot.py").write_text("def draw(values):\n    print(values)\n" + "# notes\n" * 400)
    selection = prefilter.select(paths, Linter().trigger_names())
    assert sorted(outlined) == paths
    assert [p.name for p in selection.skipped] == ["plot.py"]
    assert _findings([tmp_path], use_prefilter=True) == with_filter


def test_a_rule_without_triggers_turns_the_prefilter_off(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": "import os\n"})
    assert prefilter.select([tmp_path / "a.py"], None).kept == [tmp_path / "a.py"]


@pytest.mark.parametrize(
    ("source", "module", "expected"),
    [
        ("import a.b as c, d\n", "m", {"a.b", "d"}),
        ("from .x import (y,\n    z as w)\n", "pkg.sub.mod", {"pkg.sub.x", "pkg.sub.x.y", "pkg.sub.x.z"}),
        ("from .. import q; import r\n", "pkg.sub.mod", {"pkg", "pkg.q", "r"}),
        ("from s.t import \\\n    u\n", "m", {"s.t", "s.t.u"}),
        ("try: import v\nexcept ImportError: pass\n", "m", {"v"}),
    ],
)
def test_imports_are_found_in_every_spelling(source: str, module: str, expected: set[str]) -> None:
    assert expected <= prefilter.imported_modules(source.encode(), module, False)


def test_triggers_are_whole_words_and_every_part_of_a_qualified_name() -> None:
    words = prefilter.trigger_words(["torch.utils.data.DataLoader", "*strategy.barrier"])
    assert prefilter.mentions(b"from torch.utils.data import DataLoader", words)
    assert prefilter.mentions(b"import torch.utils.data as tud\ntud.DataLoader(ds)", words)
    assert not prefilter.mentions(b"x = DataLoader(ds)", words)  # some other DataLoader
    assert not prefilter.mentions(b"import torch.utils.data\nMyDataLoaderFactory(ds)", words)
    assert prefilter.mentions(b"trainer.strategy.barrier()", words)
    assert prefilter.mentions(b"self._strategy.barrier()", words)
    assert not prefilter.mentions(b"threading.Barrier(2)", words)


def test_fixtures_give_the_same_findings_with_and_without_the_prefilter() -> None:
    folders = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
    assert _findings(folders, use_prefilter=True) == _findings(folders, use_prefilter=False)


def _torch_folder() -> Path | None:
    spec = importlib.util.find_spec("torch")  # located, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.mark.slow
def test_torch_distributed_sources_give_the_same_findings_with_and_without_the_prefilter() -> None:
    torch = _torch_folder()
    if torch is None:
        pytest.skip("torch is not installed")
    corpus = [torch / "distributed", torch / "utils" / "data"]
    files = sorted(p for folder in corpus for p in folder.rglob("*.py"))
    selection = prefilter.select(files, Linter().trigger_names())
    assert selection.skipped, "the scan should spare some of these files"
    assert _findings(corpus, use_prefilter=True) == _findings(corpus, use_prefilter=False)


def test_outlines_bind_imports_exactly_as_the_facts_walker_does() -> None:
    # The analysis follows imports through unloaded modules with these: they must be the same.
    linter = Linter()
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        try:
            facts = linter.load(str(path))
        except LoadError:
            continue
        found = outline(facts.source.text, str(path), facts.module_name, path.name == "__init__.py", bool)
        assert found.imports == tuple(sorted(set(facts.imports.aliases.values()))), path
        checked += 1
    assert checked > 300


def test_a_call_of_backward_makes_a_seed_and_a_method_named_backward_does_not() -> None:
    text = textwrap.dedent(
        """\
        import torch

        class Clamp(torch.autograd.Function):
            @staticmethod
            def backward(ctx, grad):
                return grad

        def step(model, batch):
            model(batch).sum().backward()

        def describe():
            return "calls backward"
        """
    )
    found = outline(text, "m.py", "m", False, lambda data: False, frozenset({"backward"}))
    assert found.triggered == {"step"}


def test_module_variables_are_every_name_the_module_itself_may_bind() -> None:
    text = textwrap.dedent(
        """\
        import os
        WORLD = int(os.environ["WORLD_SIZE"])
        if (RANK := int(os.environ["RANK"])) == 0:
            with open("log") as LOG:
                pass
        try:
            import torch
        except ImportError as MISSING:
            torch = None
        for STEP in range(3):
            pass

        class Config:
            epochs = 3  # a class attribute, not a module variable

            def bump(self):
                if self.epochs:
                    global BUMPS
                    BUMPS = 1

        def setup():
            global DEVICE
            DEVICE = "cuda"
            local = 1
            return local
        """
    )
    found = outline(text, "m.py", "m", False, lambda data: False)
    assert found.variables == {"WORLD", "RANK", "LOG", "MISSING", "torch", "STEP", "BUMPS", "DEVICE"}


def test_names_resolve_through_re_exports_and_star_imports() -> None:
    def of(text: str, module: str, is_package: bool = False) -> Outline:
        return outline(textwrap.dedent(text), f"{module}.py", module, is_package, bool)

    graph = prefilter.DefinitionGraph(
        {
            "pkg": of("from .core import *\nfrom .util import helper as public\n", "pkg", True),
            "pkg.core": of("def build():\n    return 1\n", "pkg.core"),
            "pkg.util": of("LIMIT = 3\n\ndef helper():\n    return LIMIT\n", "pkg.util"),
            "main": of(
                """\
                import pkg
                from pkg import public

                for SCALE in (1, 2):
                    pass

                def run():
                    total = pkg.build() + public() + pkg.missing
                    return len([total]) * SCALE
                """,
                "main",
            ),
        }
    )
    assert graph.edges[("main", "run")] == {
        ("pkg.core", "build"),  # star-imported into the package
        ("pkg.util", "helper"),  # re-exported under another name
        ("pkg", MODULE),  # `pkg.missing`: whatever the package's own statements make it
        ("main", MODULE),  # `SCALE`: a variable of the module's own statements
    }  # `total` (a local) and `len` (a builtin) lead nowhere
    assert graph.outlines["main"].variables == {"SCALE"}
    assert graph.edges[("pkg.util", "helper")] == {("pkg.util", MODULE)}
    # The package is passed through (and the modules behind it): the analysis resolves there too.
    assert graph.via[("main", "run")] == {"pkg", "pkg.core", "pkg.util"}
    assert ("pkg.util", "helper") not in graph.via


def test_outlines_are_read_in_process_when_no_worker_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import concurrent.futures

    def refuse(*args, **kwargs):
        raise OSError("no semaphores here")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)
    paths = []
    for index in range(prefilter.POOL_THRESHOLD):
        path = tmp_path / f"m{index}.py"
        path.write_text("import torch.distributed as dist\n\ndef sync():\n    dist.barrier()\n")
        paths.append(path)
    words = prefilter.outline_words(["torch.distributed.barrier"])
    found = prefilter.outline_files(paths, {p: p.stem for p in paths}, words, 0, jobs=2)
    assert all(found[p] is not None and found[p].triggered == {"sync"} for p in paths)

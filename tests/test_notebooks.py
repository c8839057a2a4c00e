"""Jupyter notebooks: their code cells read as one module, findings named by cell, fixes written
back into the cells with every other byte of the notebook kept."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ddplint
from ddplint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from ddplint.engine.checker import Linter
from ddplint.engine.fix import _non_overlapping
from ddplint.run.cache.trees import TreeCache
from ddplint.syntax.notebook import mask_magics, read_notebook
from ddplint.syntax.reading import LoadError, read_source
from ddplint.syntax.source import SourceError

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"
TRAINING = FIXTURES / "training.ipynb"

DDP005 = (
    "DDP005 `dist.all_reduce` (training.ipynb:cell 3:3) runs only when `rank == 0` "
    "(training.ipynb:cell 3:2); the other ranks never call it and rank 0 waits forever"
)
DDP001 = (
    "DDP001 [*] `DataLoader` is given `shuffle=True` and `sampler=sampler`: it raises "
    "`ValueError: sampler option is mutually exclusive with shuffle` at construction"
)


def notebook(*cells: dict, metadata: dict | None = None) -> str:
    meta = {"kernelspec": {"language": "python", "name": "python3"}} if metadata is None else metadata
    return (
        json.dumps({"cells": list(cells), "metadata": meta, "nbformat": 4, "nbformat_minor": 5}, indent=1)
        + "\n"
    )


def code(source, **extra) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": source,
        **extra,
    }


def markdown(source) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ddplint", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(TRAINING, tmp_path / "training.ipynb")
    return tmp_path


# --- masking IPython syntax -------------------------------------------------------------------


def test_line_magics_shell_escapes_and_help_read_as_pass_with_rows_kept() -> None:
    cell = "%matplotlib inline\n!pip install x\nfiles = !ls\nx?\n?x\nobj.method??\nimport os\n"
    masked, magics = mask_magics(cell)
    assert masked == "pass\npass\npass\npass\npass\npass\nimport os\n"
    assert [m.line for m in magics] == [
        "%matplotlib inline",
        "!pip install x",
        "files = !ls",
        "x?",
        "?x",
        "obj.method??",
    ]


def test_a_magic_in_a_block_keeps_its_indentation_and_a_continued_one_its_rows() -> None:
    masked, magics = mask_magics("for i in range(2):\n    %time f(i)\n!echo a \\\n  b\ny = 1")
    assert masked == "for i in range(2):\n    pass\npass\n\ny = 1"
    assert [(m.start, m.end, m.line) for m in magics] == [
        (19, 27, "    %time f(i)"),
        (28, 32, "!echo a \\"),
        (33, 33, "  b"),
    ]


def test_automagic_reads_as_pass_where_python_could_not_read_the_line() -> None:
    cell = "pip install torch\ncd ~/data\ntime f()\nls -la\ntime = 3\ntime if a else b\npip.main()\n"
    masked, magics = mask_magics(cell)
    assert masked == "pass\npass\npass\nls -la\ntime = 3\ntime if a else b\npip.main()\n"
    assert [m.line for m in magics] == ["pip install torch", "cd ~/data", "time f()"]


def test_python_that_looks_like_ipython_is_left_alone() -> None:
    cell = (
        'print("why?")  # really?\n'
        'doc = """\n%not a magic\n!nor this?\n"""\n'
        "total = (1\n    % 2)\n"
        "a != b\n"
        "get_ipython().run_line_magic('time', 'f()')\n"
    )
    assert mask_magics(cell) == (cell, [])


def test_a_cell_magic_running_python_masks_its_first_line_and_any_other_the_whole_cell() -> None:
    assert mask_magics("%%time\nx = 1\n")[0] == "pass\nx = 1\n"
    masked, magics = mask_magics("%%bash\nif rank == 0: echo\n")
    assert masked == "\n\n"
    assert [m.line for m in magics] == ["%%bash", "if rank == 0: echo"]


# --- cells and rows -------------------------------------------------------------------------------


def test_code_cells_join_in_order_and_rows_map_back_to_cells() -> None:
    text, nb = read_notebook(
        notebook(
            markdown(["# title\n", "x = 1\n"]),
            code(["import os\n", "a = 1"]),
            {"cell_type": "raw", "metadata": {}, "source": "raw text\n"},
            code([]),
            code("b = 2\nc = 3\n"),
        )
    )
    assert text == "import os\na = 1\nb = 2\nc = 3\n"
    assert [c.number for c in nb.cells] == [1, 2, 3]
    assert [c.index for c in nb.cells] == [1, 3, 4]
    assert [nb.locate(row) for row in (1, 2, 3, 4)] == [(1, 1), (1, 2), (3, 1), (3, 2)]


def test_rows_end_where_python_ends_them() -> None:
    # A lone `\r` ends a row; a form feed or U+2028 in a string does not.
    text, nb = read_notebook(notebook(code("a = 1\r%time f()\rs = '\u2028\x0c'\n"), code("b = 2\n")))
    assert text == "a = 1\rpass\rs = '\u2028\x0c'\nb = 2\n"
    assert nb.first_rows == (1, 4)
    assert [nb.locate(row) for row in (3, 4)] == [(1, 3), (2, 1)]


def test_the_row_of_the_json_holding_each_line() -> None:
    text = notebook(code(["a = 1\n", "b = 2"]), code("c = 3\nd = 4"))
    _, nb = read_notebook(text)
    rows = text.splitlines()
    assert [rows[nb.file_row(r) - 1].strip() for r in (1, 2)] == ['"a = 1\\n",', '"b = 2"']
    assert rows[nb.file_row(4) - 1].strip() == '"source": "c = 3\\nd = 4"'


def test_edits_across_cells_at_their_boundary_or_on_ipython_lines_are_blocked() -> None:
    text, nb = read_notebook(notebook(code("a = 1\n"), code("%time f()\nb = 2\n")))
    assert text == "a = 1\npass\nb = 2\n"
    assert nb.blocks(4, 8)  # from cell 1 into cell 2
    assert nb.blocks(6, 6)  # an insertion where cell 2 starts: which cell would it go to?
    assert nb.blocks(8, 9)  # the stand-in of `%time f()`
    assert nb.blocks(10, 10)  # appended to it
    assert not nb.blocks(0, 1)
    assert not nb.blocks(11, 16)
    assert not nb.blocks(0, 6)  # all of cell 1, its line break included


def test_a_fix_spanning_two_cells_is_not_applied() -> None:
    _, nb = read_notebook(notebook(code("a = 1\n"), code("b = 2\n")))
    spanning = Diagnostic("DDP001", "x", "m", "nb.ipynb", Location(1, 1), Location(1, 2), 1)
    spanning.fix = Fix(Applicability.SAFE, "join", (Edit(4, 8, ""),))
    inside = Diagnostic("DDP001", "x", "m", "nb.ipynb", Location(2, 1), Location(2, 2), 2)
    inside.fix = Fix(Applicability.SAFE, "renumber", (Edit(10, 11, "3"),))
    kinds = frozenset({Applicability.SAFE})
    assert _non_overlapping([spanning, inside], kinds) == [Edit(4, 8, ""), Edit(10, 11, "3")]
    nb.advise_blocked_fixes([spanning, inside])
    assert _non_overlapping([spanning, inside], kinds) == [Edit(10, 11, "3")]
    assert spanning.fix == Fix(Applicability.DISPLAY_ONLY, "join")


def test_a_fix_the_notebook_blocks_is_shown_as_advice_not_offered(tmp_path: Path) -> None:
    """DDP012's fix would insert `set_device` where cell 2 starts, which --fix never does in a
    notebook: the finding is not counted as fixable, and --fix leaves the notebook alone."""
    setup = [
        "import os\n",
        "import torch\n",
        "import torch.distributed as dist\n",
        "local_rank = int(os.environ['LOCAL_RANK'])\n",
        "dist.init_process_group('nccl')\n",
    ]
    original = notebook(code(setup), code(["dist.barrier()\n", "torch.cuda.set_device(local_rank)\n"]))
    (tmp_path / "setup.ipynb").write_text(original, encoding="utf-8")
    shown = run("check", "--no-cache", "--unsafe-fixes", "--output-format", "concise", ".", cwd=tmp_path)
    assert shown.stdout.splitlines()[0].startswith("setup.ipynb:cell 2:1:1: DDP012 `dist.barrier()` runs")
    assert shown.stdout.splitlines()[1:] == ["Found 1 error."]
    [finding] = json.loads(run("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path).stdout)
    assert finding["fix"] == {
        "applicability": "display-only",
        "message": "Move `torch.cuda.set_device(local_rank)` before `dist.barrier()`",
        "edits": [],
    }
    run("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert (tmp_path / "setup.ipynb").read_text(encoding="utf-8") == original


# --- writing back ---------------------------------------------------------------------------------


def test_a_cell_ending_in_a_continued_shell_command_is_written_back_as_it_was() -> None:
    original = notebook(code(["!accelerate launch train.py \\\n", "  --seed=0"]), code("x = 1\n"))
    text, nb = read_notebook(original)
    assert text == "pass\n\nx = 1\n"
    assert nb.cell_texts(text) == ["!accelerate launch train.py \\\n  --seed=0", "x = 1\n"]
    assert nb.rewritten("pass\n\nx = 2\n") == original.replace('"x = 1\\n"', '"x = 2\\n"')


def test_only_the_changed_cell_is_rewritten_in_the_layout_of_the_file() -> None:
    original = notebook(
        code(
            ["x = 1\n", "y = [1,\n", "     2]"],
            outputs=[{"output_type": "stream", "name": "stdout", "text": ["é\n"]}],
        ),
        code("z = 3\n"),
    ).replace('"é\\n"', '"\\u00e9\\n"')
    text, nb = read_notebook(original)
    fixed = text.replace("x = 1", "x = 10").replace("z = 3", "z = 'é'")
    new = nb.edited([Edit(4, 5, "10"), Edit(28, 29, "'é'")], fixed).rewritten(fixed)
    expected = original.replace('"x = 1\\n"', '"x = 10\\n"').replace('"z = 3\\n"', "\"z = '\\u00e9'\\n\"")
    assert new == expected


def test_a_cell_whose_last_line_had_no_line_break_keeps_none() -> None:
    original = notebook(code(["a = 1\n", "b = 2"]))
    text, nb = read_notebook(original)
    assert text == "a = 1\nb = 2\n"
    assert nb.rewritten("a = 1\nb = 3\n") == original.replace('"b = 2"', '"b = 3"')


def test_a_notebook_whose_cell_would_no_longer_parse_alone_is_not_written() -> None:
    text, nb = read_notebook(notebook(code("if x:\n    y = 1\n"), code("z = 2\n")))
    moved = nb.edited([Edit(6, 6, "")], text)
    broken = "if x:\n    y = (1\n"
    with pytest.raises(SourceError, match="cell 1 unable to parse on its own"):
        moved.rewritten(broken + "z = 2\n")


# --- reading and skipping -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"cells": [', "not a valid notebook: not JSON (Expecting value: line 1 column 12 (char 11))"),
        ('{"nbformat": 3, "cells": []}', "not a valid notebook: nbformat 3, not 4"),
        ('{"nbformat": 4, "cells": {}}', "not a valid notebook: no list of cells"),
        ("[1]", "not a valid notebook: the JSON is not an object"),
        (notebook(markdown("x"), code(7)), "not a valid notebook: the source of cell 2 is not text"),
        (notebook(code(["a", 1])), "not a valid notebook: the source of cell 1 is not text"),
    ],
)
def test_a_malformed_notebook_is_an_e902_with_the_reason(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        read_source(str(path))
    assert (caught.value.diagnostic.code, caught.value.diagnostic.message) == ("E902", reason)


def test_malformed_notebooks_are_reported_and_the_run_goes_on(project: Path) -> None:
    shutil.copy(Path(__file__).parent / "data" / "nbformat3.ipynb", project / "bad.ipynb")
    (project / "latin.ipynb").write_bytes(b'{"cells": ["\xe9"]}')
    done = run("check", "--no-cache", "--output-format", "concise", ".", cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines()[:4] == [
        "bad.ipynb:1:1: E902 not a valid notebook: nbformat 3, not 4",
        "latin.ipynb:1:1: E902 not a valid notebook: not UTF-8 (byte 0xe9)",
        f"training.ipynb:cell 3:3:5: {DDP005}",
        f"training.ipynb:cell 3:5:31: {DDP001}",
    ]


def test_a_notebook_of_another_language_is_skipped(tmp_path: Path) -> None:
    r_kernel = {"kernelspec": {"language": "R", "name": "ir"}}
    (tmp_path / "r.ipynb").write_text(notebook(code("if (rank == 0) dist.all_reduce(t)"), metadata=r_kernel))
    julia = {"language_info": {"name": "julia"}}
    (tmp_path / "j.ipynb").write_text(notebook(code("x?"), metadata=julia))
    done = run("check", "--no-cache", ".", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "All checks passed!\n")


# --- the command line -----------------------------------------------------------------------------


def test_concise_names_the_cell_and_counts_rows_from_its_top(project: Path) -> None:
    done = run("check", "--no-cache", "--output-format", "concise", "training.ipynb", cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines()[:2] == [
        f"training.ipynb:cell 3:3:5: {DDP005}",
        f"training.ipynb:cell 3:5:31: {DDP001}",
    ]


def test_full_grouped_and_pylint(project: Path) -> None:
    full = run("check", "--no-cache", "training.ipynb", cwd=project).stdout.splitlines()
    assert full[:5] == [
        "training.ipynb:cell 3:3:5: DDP005 [collective-in-rank-branch] " + DDP005[7:],
        "  |",
        "3 |     dist.all_reduce(t)",
        "  |     ^^^^^^^^^^^^^^^^^^",
        "  |",
    ]
    assert full[5] == "  = rank 0:       all_reduce (training.ipynb:cell 3:3)   ← waits here forever"
    grouped = run("check", "--no-cache", "--output-format", "grouped", ".", cwd=project).stdout.splitlines()
    assert grouped[:3] == ["training.ipynb:", f"  cell 3:3:5  {DDP005}", f"  cell 3:5:31 {DDP001}"]
    pylint = run("check", "--no-cache", "--output-format", "pylint", ".", cwd=project).stdout.splitlines()
    assert pylint[1] == "training.ipynb:cell 3:5: [DDP001] " + DDP001[11:]


def test_json_has_the_cell_and_rows_within_it(project: Path) -> None:
    done = run("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    shuffle = json.loads(done.stdout)[1]
    assert (shuffle["cell"], shuffle["location"], shuffle["end_location"], shuffle["noqa_row"]) == (
        3,
        {"row": 5, "column": 31},
        {"row": 5, "column": 43},
        5,
    )
    assert shuffle["fix"]["edits"] == [
        {"content": "", "location": {"row": 5, "column": 31}, "end_location": {"row": 5, "column": 45}}
    ]


def test_ci_formats_point_at_the_row_of_the_notebook_file(project: Path) -> None:
    # Row 83 of the notebook's JSON holds the DataLoader line of cell 3.
    assert (
        TRAINING.read_text()
        .splitlines()[82]
        .strip()
        .startswith('"loader = DataLoader(range(8), shuffle=True')
    )

    def output(fmt: str) -> str:
        return run("check", "--no-cache", "--output-format", fmt, "training.ipynb", cwd=project).stdout

    github = output("github").splitlines()[1]
    assert github.startswith(
        "::error file=training.ipynb,line=83,title=ddplint (DDP001)::training.ipynb:cell 3:5:31: DDP001 "
    )
    azure = output("azure").splitlines()[1]
    assert azure.startswith(
        "##vso[task.logissue type=error;sourcepath=training.ipynb;linenumber=83;code=DDP001;]cell 3:5:31: "
    )
    sarif = json.loads(output("sarif"))["runs"][0]["results"][1]
    assert sarif["locations"][0]["physicalLocation"]["region"] == {"startLine": 83}
    assert sarif["message"]["text"].startswith("cell 3:5:31: `DataLoader` is given")
    assert sarif["properties"]["notebook"] == {
        "cell": 3,
        "region": {"startLine": 5, "startColumn": 31, "endLine": 5, "endColumn": 43},
    }
    assert "fixes" not in sarif
    gitlab = json.loads(output("gitlab"))[1]
    assert (gitlab["location"]["lines"], gitlab["description"][-14:]) == ({"begin": 83}, " (cell 3:5:31)")
    assert (
        'name="DDP001 at cell 3:5:31" classname="training.ipynb" file="training.ipynb" line="83"'
        in output("junit")
    )


def test_fix_rewrites_the_cells_and_keeps_every_other_byte(project: Path) -> None:
    done = run("check", "--no-cache", "--fix", "--unsafe-fixes", "training.ipynb", cwd=project)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "Found 2 errors (2 fixed, 0 remaining).")
    assert (project / "training.ipynb").read_text() == (FIXTURES / "training.fixed.ipynb").read_text()
    again = run("check", "--no-cache", "--fix", "--unsafe-fixes", "training.ipynb", cwd=project)
    assert (again.returncode, again.stdout) == (0, "All checks passed!\n")


def test_safe_fixes_change_one_line_of_the_json(project: Path) -> None:
    before = (project / "training.ipynb").read_text().splitlines(keepends=True)
    run("check", "--no-cache", "--fix", "training.ipynb", cwd=project)
    after = (project / "training.ipynb").read_text().splitlines(keepends=True)
    changed = [(b, a) for b, a in zip(before, after) if b != a]
    assert len(before) == len(after)
    assert changed == [
        (
            '    "loader = DataLoader(range(8), shuffle=True, sampler=sampler)\\n"\n',
            '    "loader = DataLoader(range(8), sampler=sampler)\\n"\n',
        )
    ]


def test_diff_shows_each_changed_cell(project: Path) -> None:
    done = run("check", "--no-cache", "--diff", "training.ipynb", cwd=project)
    assert done.stdout == (
        "--- a/training.ipynb:cell 3\n"
        "+++ b/training.ipynb:cell 3\n"
        "@@ -2,4 +2,4 @@\n"
        " if rank == 0:\n"
        "     dist.all_reduce(t)\n"
        " sampler = DistributedSampler(range(8))\n"
        "-loader = DataLoader(range(8), shuffle=True, sampler=sampler)\n"
        "+loader = DataLoader(range(8), sampler=sampler)\n"
    )
    assert (project / "training.ipynb").read_bytes() == TRAINING.read_bytes()


def test_add_noqa_writes_the_comments_into_the_cells(project: Path) -> None:
    done = run("check", "--no-cache", "--add-noqa", "training.ipynb", cwd=project)
    assert (done.returncode, done.stderr.strip().splitlines()[-1]) == (0, "Added 2 noqa directives.")
    expected = (
        TRAINING.read_text()
        .replace('"    dist.all_reduce(t)\\n"', '"    dist.all_reduce(t)  # noqa: DDP005\\n"')
        .replace('sampler=sampler)\\n"', 'sampler=sampler)  # noqa: DDP001\\n"')
    )
    assert (project / "training.ipynb").read_text() == expected
    assert run("check", "--no-cache", "training.ipynb", cwd=project).stdout == "All checks passed!\n"


def test_exclude_applies_to_notebooks_and_a_named_one_is_checked(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.ddplint]\nextend-exclude = ["*.ipynb"]\n')
    assert run("check", "--no-cache", ".", cwd=project).stdout == "All checks passed!\n"
    named = run("check", "--no-cache", "--output-format", "concise", "training.ipynb", cwd=project)
    assert named.stdout.splitlines()[0] == f"training.ipynb:cell 3:3:5: {DDP005}"
    forced = run("check", "--no-cache", "--force-exclude", "training.ipynb", cwd=project)
    assert forced.stdout == "All checks passed!\n"


def test_a_notebook_imports_project_modules_and_nothing_imports_it(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(
        "import torch.distributed as dist\n\n\ndef sync(t):\n    dist.all_reduce(t)\n"
    )
    cells = [
        code("import torch.distributed as dist\nfrom helpers import sync\n"),
        code("if dist.get_rank() == 0:\n    sync(t)\n"),
    ]
    (tmp_path / "explore.ipynb").write_text(notebook(*cells))
    # A module importing `explore` does not reach the notebook's definitions.
    (tmp_path / "explore2.ipynb").write_text(
        notebook(code("import torch.distributed as dist\n\ndef work(t):\n    dist.barrier()\n"))
    )
    (tmp_path / "main.py").write_text(
        "import torch.distributed as dist\nfrom explore2 import work\n\n"
        "if dist.get_rank() == 0:\n    work(1)\n"
    )
    done = run("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert done.stdout.splitlines()[:-1] == [
        "explore.ipynb:cell 2:2:5: DDP005 `dist.all_reduce` (helpers.py:5, via `sync`) runs only when "
        "`dist.get_rank() == 0` (explore.ipynb:cell 2:1); the other ranks never call it "
        "and rank 0 waits forever"
    ]


def test_the_cache_keys_notebooks_by_content(project: Path) -> None:
    first = run("check", "--output-format", "concise", ".", cwd=project)
    second = run("check", "--output-format", "concise", ".", cwd=project)
    assert first.stdout == second.stdout
    assert first.stdout.splitlines()[0] == f"training.ipynb:cell 3:3:5: {DDP005}"
    path = project / "training.ipynb"
    path.write_text(path.read_text().replace('"    dist.all_reduce(t)\\n"', '"    dist.barrier()\\n"'))
    third = run("check", "--output-format", "concise", ".", cwd=project)
    assert third.stdout.splitlines()[0].startswith("training.ipynb:cell 3:3:5: DDP005 `dist.barrier`")


def test_no_notebook_no_notebook_reader(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\nif dist.get_rank() == 0:\n    dist.barrier()\n"
    )
    probe = (
        "import sys, ddplint\n"
        "found = ddplint.lint_paths(['.'])\n"
        "print(len(found), 'ddplint.syntax.notebook' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout == "1 False\n"
    (tmp_path / "nb.ipynb").write_text(notebook(code("x = 1\n")))
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout == "1 True\n"


def test_a_syntax_error_names_its_cell(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text(
        notebook(code("x = 1\n"), code(["y = 2\n", "def f(:\n", "  pass"]))
    )
    done = run("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert done.stdout.splitlines()[0] == "broken.ipynb:cell 2:2:7: E999 cannot parse: invalid syntax"


def test_the_python_api_reads_a_notebook_given_as_text() -> None:
    found = ddplint.lint_source(TRAINING.read_text(), filename="training.ipynb")
    assert [(d.code, d.cell, d.place) for d in found] == [
        ("DDP005", 3, "cell 3:3:5"),
        ("DDP001", 3, "cell 3:5:31"),
    ]


def test_a_kept_tree_of_a_notebook_takes_the_cells_of_the_notebook_read_now(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook(code("import os\n"), code("x = 1\n")))
    trees = TreeCache(tmp_path / "trees", keep=True)
    linter = Linter()
    linter.trees = trees
    kept = linter.load(str(path))
    # The same code cut into one cell: the kept tree is of the same text, its cells are not.
    path.write_text(notebook(code("import os\nx = 1\n")))
    source = read_source(str(path))
    loaded = trees.load(source, kept.module_name)
    assert loaded is not None and loaded.module_name == "nb-ipynb"
    assert loaded.source.notebook is source.notebook
    assert [source.notebook.locate(row) for row in (1, 2)] == [(1, 1), (1, 2)]


def test_python_s_line_numbers_in_a_syntax_error_are_said_by_cell(tmp_path: Path) -> None:
    (tmp_path / "open.ipynb").write_text(notebook(code("x = 1\n"), code(["y = 2\n", "s = 'abc\n"])))
    done = run("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert done.stdout.splitlines()[0] == (
        "open.ipynb:cell 2:2:5: E999 cannot parse: unterminated string literal (detected at cell 2, line 2)"
    )


def test_the_size_limit_counts_the_code_cells_not_the_outputs(tmp_path: Path) -> None:
    picture = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * 4000}}
    (tmp_path / "outputs.ipynb").write_text(notebook(code("x = 1\n", outputs=[picture])))
    (tmp_path / "code.ipynb").write_text(notebook(code("x = 1\n" * 600)))
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\nmax-file-size = 3000\n")
    done = run("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert done.stdout.splitlines()[:-1] == [
        "code.ipynb:1:1: E902 not checked: its code cells are 0.0 MiB, over the 0.0 MiB limit "
        "(raise `max-file-size` in [tool.ddplint], or exclude the file)"
    ]

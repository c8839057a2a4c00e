"""flake8 plugin: ddplint's findings as `DDPxxx` codes in flake8's output.

flake8 owns selection (`--select`, `--ignore`, `--extend-ignore`, `per-file-ignores`);
`[tool.ddplint]` contributes only what the analysis needs (`collectives`, `rank-predicates`).
flake8 applies a noqa comment to the row it is on; ddplint also applies one on the first row of
a statement spanning several rows, and `# ddplint: noqa` file comments, as `ddplint check` does
(all off with flake8's `--disable-noqa`).
The source comes from flake8's `lines`, never from the file on disk: editors lint unsaved buffers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ddplint import __version__
from ddplint.buffer import check_buffer
from ddplint.config import ConfigError, Settings, load_settings
from ddplint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR
from ddplint.neighbours import DEFAULT_BUDGET

# flake8 reports unreadable and unparsable files itself (E902, E999).
_FLAKE8_OWN = frozenset({IO_ERROR, SYNTAX_ERROR})


@lru_cache(maxsize=64)
def _analysis_settings(folder: str) -> Settings:
    try:
        found = load_settings(None, Path(folder))
    except ConfigError:
        found = Settings()
    return Settings(collectives=found.collectives, rank_predicates=found.rank_predicates, root=found.root)


class Plugin:
    name = "ddplint"
    version = __version__
    context_budget = DEFAULT_BUDGET
    honour_noqa = True

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        # `tree` is what makes flake8 treat this as an AST plugin; ddplint parses with libcst.
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(
            "--ddplint-context-budget",
            type=float,
            default=DEFAULT_BUDGET,
            parse_from_config=True,
            help="Seconds ddplint may spend reading the modules a file imports and the modules "
            "of its package that import it (0: the file alone). Default: %(default)s",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.context_budget = max(0.0, options.ddplint_context_budget)
        cls.honour_noqa = not getattr(options, "disable_noqa", False)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            folder = str(Path(self.filename).resolve().parent)
            result = check_buffer(
                self.filename,
                "".join(self.lines),
                _analysis_settings(folder),
                budget=self.context_budget,
                noqa=self.honour_noqa,
            )
        except Exception as exc:  # a bug of ours must not stop flake8's run
            yield (
                1,
                0,
                f"DDP900 internal error in ddplint ({type(exc).__name__}: {exc}) — please report",
                type(self),
            )
            return
        for d in result.diagnostics:
            if d.code in _FLAKE8_OWN:
                continue
            code = "DDP900" if d.code == INTERNAL_ERROR else d.code
            # flake8 columns are 0-based (it adds one when printing).
            yield d.location.row, d.location.column - 1, f"{code} {d.message}", type(self)

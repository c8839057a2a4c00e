"""flake8 plugin: ddplint's findings as `DDPxxx` codes in flake8's output.

flake8 owns selection (`--select`, `--ignore`, their `extend-` forms, `per-file-ignores`);
`[tool.ddplint]` contributes only what the analysis needs (`collectives`, `rank-predicates`).
flake8 applies a noqa comment to the row it is on; ddplint also applies one on the first row of
a statement spanning several rows, and `# ddplint: noqa` file comments, as `ddplint check` does
(all off with flake8's `--disable-noqa`).
The findings are always those of flake8's `lines`: editors lint unsaved buffers.

Installed beside flake8, the plugin costs nothing where flake8 would report none of its codes
(`--select E,F,W`, `--extend-ignore DDP`, a file under a `per-file-ignores` entry for them): flake8
itself decides that, and then no file is read or parsed, and this module, which loads nothing of
the analysis, is all that is imported. The analysis is ddplint.integrations.flake8_findings.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from typing import Any

from ddplint._meta import RULE_CODES, __version__

# Seconds spent reading the modules around the files: an editor runs flake8 on every save. With
# `.ddplint_cache/` warm, every project measured had all of them read within half a second;
# without it, 1 s keeps a save on timm's train.py at 2.1 s instead of 3.5 s (README, "flake8").
DEFAULT_BUDGET = 1.0


class Selection:
    """Whether flake8 may report one of ddplint's codes for a file: flake8's own decision
    (`select`, `ignore`, their `extend-` forms, the plugins' default selection, and the
    `per-file-ignores` entry for the file), asked of the style guides flake8 builds from its
    options, once for each guide. With a flake8 that decides otherwise: yes (flake8 then drops
    what it does not report)."""

    def __init__(self, options: Any) -> None:
        self._options = options  # read at the first question: flake8's Python API sets them late
        self._guides: Any = None
        self._decided: dict[int, bool] = {}

    def anywhere(self) -> bool:
        """For some file (a `per-file-ignores` entry only ever ignores more)."""
        return self._decide(None)

    def for_file(self, filename: str) -> bool:
        return self._decide(filename)

    def _decide(self, filename: str | None) -> bool:
        try:
            from flake8.style_guide import Decision, StyleGuideManager

            if self._guides is None:
                self._guides = StyleGuideManager(self._options, None)  # asked, never reporting
            guides = self._guides
            guide = guides.default_style_guide if filename is None else guides.style_guide_for(filename)
            decided = self._decided.get(id(guide))
            if decided is None:
                decided = any(guide.should_report_error(code) is Decision.Selected for code in RULE_CODES)
                self._decided[id(guide)] = decided
            return decided
        except Exception:
            return True


class Plugin:
    name = "ddplint"
    version = __version__
    context_budget = DEFAULT_BUDGET
    honour_noqa = True
    # flake8's options, for the paths it checks (read when checking: flake8's Python API sets
    # them after parsing the options), and what they select.
    options: Any = None
    selection: Selection | None = None
    # Asking the daemon (`ddplint-daemon = true`): set when flake8 checks one file or stdin.
    ask_daemon = False
    from_stdin = False

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
        manager.add_option(
            "--ddplint-daemon",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="Check a single file (an editor's save) in a ddplint process that stays warm "
            "between runs, started by the first run and gone after 30 idle minutes.",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.context_budget = max(0.0, options.ddplint_context_budget)
        cls.honour_noqa = not getattr(options, "disable_noqa", False)
        cls.options = options
        cls.selection = Selection(options)
        paths = list(getattr(options, "filenames", None) or ())
        cls.from_stdin = paths == ["-"]
        one_file = cls.from_stdin or (len(paths) == 1 and os.path.isfile(paths[0]))
        cls.ask_daemon = one_file and bool(getattr(options, "ddplint_daemon", False))
        if cls.ask_daemon:
            return  # the daemon checks the file, once flake8 hands over its lines
        # Given its paths (flake8's Python API gives them later: asked for by the first file),
        # the run over them, in flake8's own process, when flake8 reports any of ddplint's codes.
        if getattr(options, "filenames", None) and cls.selection.anywhere():
            try:
                from ddplint.integrations import flake8_findings

                flake8_findings.run_ahead(options, cls.selection, cls.context_budget, cls.honour_noqa)
            except Exception:  # a bug of ours must not stop flake8: the first file reports it
                pass

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if self.selection is not None and not self.selection.for_file(self.filename):
            return  # flake8 would report none of ddplint's findings here: none is looked for
        if self.ask_daemon:
            from ddplint.integrations import daemon_client

            answer = daemon_client.flake8_rows(
                self.filename,
                "".join(self.lines),
                from_stdin=self.from_stdin,
                budget=self.context_budget,
                noqa=self.honour_noqa,
            )
            if answer is not None:
                for row, column, message in answer:
                    yield row, column, message, type(self)
                return
        try:
            from ddplint.integrations import flake8_findings

            found = flake8_findings.findings(
                self.filename, self.lines, self.options, self.selection, self.context_budget, self.honour_noqa
            )
        except Exception as exc:  # a bug of ours must not stop flake8's run
            found = [
                (1, 0, f"DDP900 internal error in ddplint ({type(exc).__name__}: {exc}) — please report")
            ]
        for row, column, message in found:
            yield row, column, message, type(self)

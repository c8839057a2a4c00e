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
import tokenize
from collections.abc import Iterator
from typing import Any, NamedTuple

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
    # The daemon's question, sent once flake8's options are parsed (daemon_client.Asked), and
    # its answer to report after flake8's own checks of the file (Later).
    asked: Any = None
    later: Later | None = None

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        # ddplint parses with libcst; flake8's tree tells where the file's last statement ends.
        self.tree = tree
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
        cls.asked = cls.later = None
        if cls.ask_daemon:
            cls.asked = _ask_daemon_early(cls, options, paths[0])
            return
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
            asked, Plugin.asked = Plugin.asked, None
            if asked is not None and asked.is_for(self.filename, "".join(self.lines)):
                last = _last_row(self.tree)
                if last:  # answered with the file's last logical line, after flake8's own checks
                    Plugin.later = Later(self.filename, last, asked, self)
                    return
                rows = asked.rows()
            else:
                if asked is not None:
                    asked.drop()
                rows = self.question(self.filename, "".join(self.lines)).rows()
            if rows is not None:
                for row, column, message in rows:
                    yield row, column, message, type(self)
                return
        for row, column, message in self.own_rows():
            yield row, column, message, type(self)

    @classmethod
    def question(cls, filename: str, text: str) -> Any:
        """The daemon asked for `text` as `filename`, under this run's settings (its answer is
        read later: daemon_client.Asked)."""
        from ddplint.integrations import daemon_client

        return daemon_client.ask(
            filename, text, from_stdin=cls.from_stdin, budget=cls.context_budget, noqa=cls.honour_noqa
        )

    def own_rows(self) -> list[tuple[int, int, str]]:
        """The findings, found in flake8's process."""
        try:
            from ddplint.integrations import flake8_findings

            return flake8_findings.findings(
                self.filename,
                self.lines,
                self.options,
                self.selection,
                self.context_budget,
                self.honour_noqa,
                last=self.from_stdin,
            )
        except Exception as exc:  # a bug of ours must not stop flake8's run
            return [(1, 0, _internal_error(exc))]


def _ask_daemon_early(plugin: type[Plugin], options: Any, path: str) -> Any:
    """The daemon's question for the one file flake8 checks, sent before flake8 reads it: the
    daemon answers while flake8 runs its own checks. None where flake8 reports none of ddplint's
    codes for the file, or where the file cannot be read as flake8 reads it."""
    try:
        filename = (options.stdin_display_name or "stdin") if plugin.from_stdin else path
        if plugin.selection is not None and not plugin.selection.for_file(filename):
            return None
        if plugin.from_stdin:
            from flake8.utils import stdin_get_value  # cached: flake8 reads the same text later

            text = stdin_get_value()
        else:
            with tokenize.open(path) as file:  # as flake8 reads a file
                text = file.read()
        return plugin.question(filename, text)
    except Exception:  # asked again when flake8 hands the file over
        return None


def _last_row(tree: ast.AST) -> int:
    """The row where the module's last statement ends (0: it has none)."""
    body = getattr(tree, "body", None)
    return (getattr(body[-1], "end_lineno", None) or 0) if body else 0


class Later(NamedTuple):
    """The daemon's answer for a file, reported with the file's last logical line: flake8 calls
    its logical-line plugins after its AST plugins (pyflakes among them), so the daemon works
    while flake8 runs its own checks of the file."""

    filename: str
    last_row: int
    asked: Any
    plugin: Plugin


def report_later(logical_line: str, tokens: list[tokenize.TokenInfo], filename: str) -> list:
    """flake8's logical-line plugin: the waiting answer, once flake8 reaches the file's last
    logical line; at every other line nothing."""
    later = Plugin.later
    if later is None or filename != later.filename or tokens[-1].start[0] < later.last_row:
        return []
    Plugin.later = None
    try:
        rows = later.asked.rows()
        if rows is None:
            rows = later.plugin.own_rows()
        return [((row, column), message) for row, column, message in rows]
    except Exception as exc:  # flake8 stops at a plugin's exception
        return [((1, 0), _internal_error(exc))]


def _internal_error(exc: Exception) -> str:
    return f"DDP900 internal error in ddplint ({type(exc).__name__}: {exc}) — please report"

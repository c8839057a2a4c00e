"""Running the rules: source → facts → project → diagnostics, with suppressions applied."""

from __future__ import annotations

import os
import stat
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.config import Settings
from ddplint.diagnostics import (
    INTERNAL_ERROR,
    IO_ERROR,
    SYNTAX_ERROR,
    Diagnostic,
    input_error,
)
from ddplint.engine.noqa import parse_suppressions
from ddplint.model.facts import ModuleFacts
from ddplint.model.names import module_name_for
from ddplint.model.project import Project
from ddplint.rules import ALL_RULES, Context
from ddplint.rules.selection import enabled_codes, ignored_for_file
from ddplint.run.cache.trees import TreeCache
from ddplint.syntax.lazycst import cst
from ddplint.syntax.parse import TooDeep, parse_module, python_syntax_error, run_with_large_stack
from ddplint.syntax.source import Source, SourceError


class LoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass
class FileResult:
    filename: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: ModuleFacts | None = None
    # Set by --fix/--diff: the fixed text and how many findings the fixes removed.
    fixed_text: str | None = None
    fixed_count: int = 0
    fix_error: str | None = None
    diff: str | None = None
    fixed_codes: Counter[str] = field(default_factory=Counter)


def read_source(filename: str, data: bytes | None = None, max_bytes: int = 0) -> Source:
    """Read and decode a file; raises LoadError with an E902 diagnostic when that fails.

    Only regular files are opened (a FIFO named `x.py` would block the run forever), and files
    over `max_bytes` (when it is not 0) are not read at all.
    """
    try:
        if data is None:
            info = os.stat(filename)
            if stat.S_ISDIR(info.st_mode):
                raise LoadError(input_error(IO_ERROR, filename, "is a directory, not a Python file"))
            if not stat.S_ISREG(info.st_mode):
                raise LoadError(
                    input_error(IO_ERROR, filename, "not a regular file (device, FIFO or socket)")
                )
            if max_bytes and info.st_size > max_bytes:
                raise LoadError(input_error(IO_ERROR, filename, too_large(info.st_size, max_bytes)))
            data = Path(filename).read_bytes()
        return Source.from_bytes(filename, data)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise LoadError(input_error(IO_ERROR, filename, f"cannot read file: {reason}")) from None
    except SourceError as exc:
        raise LoadError(input_error(IO_ERROR, filename, f"cannot read file: {exc}")) from None


def too_large(size: int, limit: int) -> str:
    mib = 1024 * 1024
    return (
        f"not checked: the file is {size / mib:.1f} MiB, over the {limit / mib:.1f} MiB limit "
        "(raise `max-file-size` in [tool.ddplint], or exclude the file)"
    )


def internal_error(filename: str, where: str, exc: BaseException | None = None) -> Diagnostic:
    """An E900 for an exception of ours, with its traceback for --verbose. Call in `except`,
    or give the exception caught earlier."""
    error = input_error(
        INTERNAL_ERROR,
        filename,
        f"internal error in ddplint while checking {filename} ({where}) — please report",
    )
    error.detail = "".join(traceback.format_exception(exc)) if exc is not None else traceback.format_exc()
    return error


# A parser message can list every token it expected; keep reports readable.
MAX_MESSAGE_CHARS = 300


def parse_source(source: Source) -> cst.Module:
    """Parse with libcst; raises LoadError with an E999 diagnostic on a syntax error."""
    try:
        return parse_module(source.text, source.filename)
    except TooDeep as exc:
        raise LoadError(input_error(SYNTAX_ERROR, source.filename, f"cannot parse: {exc}")) from None
    except cst.ParserSyntaxError as exc:
        reason = exc.message.strip() or "syntax error"
        row, column = max(1, exc.raw_line), max(1, exc.raw_column + 1)
        python = python_syntax_error(source.text, source.filename)
        if python is not None and python.msg:
            # Python agrees the file is broken; its words and position are the familiar ones.
            reason = python.msg
            row, column = max(1, python.lineno or 1), max(1, python.offset or 1)
        if len(reason) > MAX_MESSAGE_CHARS:
            reason = reason[: MAX_MESSAGE_CHARS - 1] + "…"
        message = f"cannot parse: {reason}"
        raise LoadError(input_error(SYNTAX_ERROR, source.filename, message, row, column)) from None
    except (RecursionError, MemoryError) as exc:
        message = f"cannot parse: nested too deeply ({type(exc).__name__})"
        raise LoadError(input_error(SYNTAX_ERROR, source.filename, message)) from None


class Linter:
    """Holds the settings and the project; checks modules against both."""

    def __init__(self, settings: Settings | None = None, *, noqa: bool = True) -> None:
        self.settings = settings or Settings()
        self.codes = enabled_codes(self.settings)
        self.rules = [rule for rule in ALL_RULES if rule.code in self.codes]
        self.project = Project()
        # Off for flake8's --disable-noqa: suppression comments are ignored.
        self.honour_noqa = noqa
        # Parsed modules kept between runs (see ddplint.run.cache.trees); None: always parse.
        self.trees: TreeCache | None = None
        # False: a module's text is freed once the run has loaded it, and read back only if asked
        # for (see Source.forget_text); for runs that fix nothing.
        self.keep_texts = True

    def trigger_names(self) -> set[str] | None:
        """What the prefilter looks for: every enabled rule's triggers and the configured
        collectives and rank predicates; None when some enabled rule may fire anywhere."""
        names = set(self.settings.collectives) | set(self.settings.rank_predicates)
        for rule in self.rules:
            if rule.triggers is None:
                return None
            names |= rule.triggers
        return names

    def facts_for(self, source: Source, module_name: str | None = None) -> ModuleFacts:
        tree = parse_source(source)
        path = Path(source.filename)
        name = module_name or module_name_for(path)
        return ModuleFacts(source, tree, name, is_package=path.name == "__init__.py")

    def load(self, filename: str, data: bytes | None = None) -> ModuleFacts:
        source = read_source(filename, data, self.settings.max_file_size)
        if self.trees is None:
            return self.facts_for(source)
        name = module_name_for(Path(filename))
        facts = self.trees.load(source, name)
        if facts is None:
            facts = self.facts_for(source, name)
            self.trees.store(facts)
        return facts

    def check(self, facts: ModuleFacts) -> list[Diagnostic]:
        """Every enabled rule on one module, minus suppressed findings, sorted."""
        ctx = Context(facts, self.project, self.settings)

        def run_rules() -> None:
            for rule in self.rules:
                ctx.rule = rule
                try:
                    rule.check(ctx)
                except Exception:  # a bug of ours must not stop the run
                    ctx.diagnostics.append(internal_error(facts.filename, f"rule {rule.code}"))

        # Rules walk expressions recursively: deeply nested code needs a deep stack.
        run_with_large_stack(run_rules)
        if not ctx.diagnostics:
            return []  # most modules: no comment to read
        lines = facts.source.text.splitlines() if self.honour_noqa else []
        suppressions = parse_suppressions(lines)
        ignored = ignored_for_file(self.settings, facts.filename)
        kept = [
            d
            for d in ctx.diagnostics
            if d.code == INTERNAL_ERROR
            or (not suppressions.suppresses(d) and not any(d.code.startswith(c) for c in ignored))
        ]
        return sorted(kept, key=Diagnostic.sort_key)

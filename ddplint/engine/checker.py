"""Running the rules: source → facts → project → diagnostics, with suppressions applied."""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ddplint.diagnostics import (
    INTERNAL_ERROR,
    Diagnostic,
    input_error,
)
from ddplint.engine.noqa import parse_suppressions
from ddplint.model.facts import ModuleFacts
from ddplint.model.names import module_name_for
from ddplint.model.project import Project
from ddplint.rules import ALL_RULES, Context
from ddplint.rules.selection import enabled_codes, ignored_for_file
from ddplint.settings import Settings
from ddplint.syntax.parse import parse_source, run_with_large_stack
from ddplint.syntax.reading import read_source
from ddplint.syntax.reparse import DocumentParser
from ddplint.syntax.source import Source


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


class ModuleStore(Protocol):
    """Modules parsed by earlier runs, kept by the run around the engine (see ddplint.run.cache.trees)."""

    def load(
        self, source: Source, module_name: str, *, parse_context: Callable[[], ModuleFacts] | None = None
    ) -> ModuleFacts | None: ...

    def parser_for_edit(self, source: Source) -> DocumentParser | None: ...

    def store(self, facts: ModuleFacts, parser: DocumentParser | None = None) -> None: ...


class Linter:
    """Holds the settings and the project; checks modules against both."""

    def __init__(self, settings: Settings | None = None, *, noqa: bool = True) -> None:
        self.settings = settings or Settings()
        self.codes = enabled_codes(self.settings)
        self.rules = [rule for rule in ALL_RULES if rule.code in self.codes]
        self.project = Project()
        # Off for flake8's --disable-noqa: suppression comments are ignored.
        self.honour_noqa = noqa
        # Parsed modules kept between runs; None: always parse.
        self.trees: ModuleStore | None = None
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

    def facts_for(
        self, source: Source, module_name: str | None = None, *, parser: DocumentParser | None = None
    ) -> ModuleFacts:
        """`parser`: the document's earlier parses, whose pieces an edited text may reuse."""
        tree = parse_source(source, parser)
        path = Path(source.filename)
        name = module_name or module_name_for(path)
        return ModuleFacts(source, tree, name, is_package=path.name == "__init__.py")

    def load(self, filename: str, data: bytes | None = None, *, context: bool = False) -> ModuleFacts:
        """`context`: a module whose kept skeleton is enough until a node is asked for (see
        ddplint.model.skeleton): one read only for what the checked ones need of it, or one
        checked by a run that puts it back after (see ddplint.run.group)."""
        source = read_source(filename, data, self.settings.max_file_size)
        if self.trees is None:
            return self.facts_for(source)
        name = module_name_for(Path(filename))
        parse_context = (lambda: self.facts_for(source, name)) if context else None
        facts = self.trees.load(source, name, parse_context=parse_context)
        if facts is None:
            # An edited module: parsed again where its kept version's pieces do not serve.
            parser = self.trees.parser_for_edit(source)
            facts = self.facts_for(source, name, parser=parser)
            self.trees.store(facts, parser=parser)
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
        if facts.source.notebook is not None:
            facts.source.notebook.advise_blocked_fixes(kept)
        return sorted(kept, key=Diagnostic.sort_key)

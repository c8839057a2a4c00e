"""What every rule is, and the context it reports through."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ddplint import analysis
from ddplint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from ddplint.syntax.lazycst import cst

if TYPE_CHECKING:
    from ddplint.analysis.divergence.analysis import Analysis
    from ddplint.analysis.origins import Origins
    from ddplint.model.facts import ModuleFacts
    from ddplint.model.project import Project
    from ddplint.settings import Settings


class Rule(ABC):
    """One check. Subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for listings and SARIF shortDescription
    fix_applicability: ClassVar[Applicability | None] = None
    # Qualified names of the library calls a finding needs: the file, or a project module it
    # imports (transitively), must spell one of them. The prefilter skips files that cannot
    # reach any; None means the rule may fire anywhere, which turns the prefilter off.
    triggers: ClassVar[frozenset[str] | None] = None

    @abstractmethod
    def check(self, ctx: Context) -> None:
        """Report this rule's findings in `ctx.facts` through `ctx.report`."""


@dataclass
class Context:
    """One module being checked, with the project around it."""

    facts: ModuleFacts
    project: Project
    settings: Settings
    rule: Rule | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def divergence(self) -> Analysis:
        """The project's rank-divergence analysis, built once for the whole run."""
        return analysis.divergence(self.project, self.settings)

    @property
    def origins(self) -> Origins:
        """Where the project's values come from, built once for the whole run."""
        return analysis.origins(self.project)

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Fix | None = None,
        help: str | None = None,
        notes: Iterable[str] = (),
        when: tuple[str, ...] = (),
    ) -> None:
        assert self.rule is not None
        start, end = self.facts.span(node)
        source = self.facts.source
        loc = Location(*source.location(start))
        end_loc = Location(*source.location(end))
        self.diagnostics.append(
            Diagnostic(
                code=self.rule.code,
                name=self.rule.name,
                message=message,
                filename=self.facts.filename,
                location=loc,
                end_location=end_loc,
                noqa_row=self.facts.statement_row(start),
                fix=fix,
                help=help,
                notes=list(notes),
                when=when,
                source=source,
            )
        )

    # Fix builders: edits are computed from node spans in the original text.

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        start, end = self.facts.span(node)
        return Edit(start, end, content)

    def remove_arg(self, call: cst.Call, arg: cst.Arg) -> Edit:
        """Delete one argument together with the comma that separates it."""
        args = list(call.args)
        index = args.index(arg)
        start, end = self.facts.span(arg)
        if index + 1 < len(args):
            return Edit(start, self.facts.span(args[index + 1])[0], "")
        if index > 0:
            return Edit(self.facts.span(args[index - 1])[1], end, "")
        text = self.facts.source.text
        stop = end
        while stop < len(text) and text[stop] in " \t":
            stop += 1
        if stop < len(text) and text[stop] == ",":
            end = stop + 1
        return Edit(start, end, "")

    def insert_before(self, stmt: cst.CSTNode, line: str) -> Edit:
        """Insert `line` as a statement of its own just before `stmt`, at its indentation."""
        start, _ = self.facts.span(stmt)
        source = self.facts.source
        row, column = source.location(start)
        indent = source.line_text(row)[: column - 1]
        return Edit(start, start, f"{line}{source.newline}{indent}")

    def fix(self, message: str, *edits: Edit, applicability: Applicability | None = None) -> Fix:
        assert self.rule is not None
        return Fix(applicability or self.rule.fix_applicability or Applicability.SAFE, message, edits)

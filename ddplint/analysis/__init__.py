"""Whole-project analyses, each built once per state of the project and kept with it."""

from __future__ import annotations

from ddplint.analysis.divergence.analysis import Analysis
from ddplint.analysis.origins import Origins
from ddplint.model.project import Project
from ddplint.settings import Settings


def divergence(project: Project, settings: Settings | None = None) -> Analysis:
    """The rank-divergence analysis of the whole project (see ddplint.analysis.divergence)."""
    return project.derived(("divergence", id(settings)), lambda: Analysis(project, settings))


def origins(project: Project) -> Origins:
    """Where the project's values come from (see ddplint.analysis.origins)."""
    return project.derived("origins", lambda: Origins(project))

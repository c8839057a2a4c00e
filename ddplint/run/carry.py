"""What the checks of one document in an editor carry from one to the next.

The language server checks a document again at every change, with the modules around it taken
from memory: the same objects each time, unless their files changed (see
ddplint.engine.context_modules). Each check analyses afresh, but the flags of the functions the
document reaches (whether each may reach a collective, see `Analysis.flags`), a tenth of a
check of timm's `train.py`, and the functions their calls run, are read from the check before
wherever nothing they depend on changed: no module they were read from, and nothing the changed
modules show the others.
"""

from __future__ import annotations

from ddplint import analysis
from ddplint.model.facts import ModuleFacts
from ddplint.model.project import Project, interface
from ddplint.settings import Settings


class Carry:
    """The flags one check settled, with the project they were settled in."""

    def __init__(self) -> None:
        self._files: list[str] = []
        self._modules: dict[str, ModuleFacts] = {}  # by file name
        self._interfaces: dict[str, tuple] = {}
        self._unloaded: dict[str, tuple[str, ...]] = {}
        self._settings: tuple | None = None
        self._flags: dict = {}
        self._resolutions: dict[str, dict] = {}

    def bring(self, project: Project, settings: Settings) -> int:
        """Give `project`'s analysis the flags of the last check that still hold; how many."""
        if not self._flags or _settings_key(settings) != self._settings:
            return 0
        # The same modules, added in the same order (the first of two files with one module
        # name is the one imports find), and the same modules left out.
        if list(project.files) != self._files or project.unloaded != self._unloaded:
            return 0
        changed = [name for name, facts in project.files.items() if facts is not self._modules[name]]
        if any(interface(project.files[name]) != self._interfaces[name] for name in changed):
            return 0  # a call elsewhere may resolve otherwise now
        stale = {id(self._modules[name]) for name in changed}
        project.adopt_resolutions(
            {
                table: {
                    key: target
                    for key, target in entries.items()
                    if id(key[0]) not in stale and (target is None or id(target[0]) not in stale)
                }
                for table, entries in self._resolutions.items()
            }
        )
        fresh: dict[tuple, bool] = {}  # by the modules read from: few distinct ones
        held = {}
        for key, (flags, modules) in self._flags.items():
            ok = fresh.get(modules)
            if ok is None:
                ok = fresh[modules] = not any(id(module) in stale for module in modules)
            if ok:
                held[key] = (flags, modules)
        analysis.divergence(project, settings).adopt_flags(held)
        return len(held)

    def keep(self, project: Project, settings: Settings) -> None:
        """Remember what the check just done on `project` settled."""
        interfaces = {
            name: self._interfaces[name] if self._modules.get(name) is facts else interface(facts)
            for name, facts in project.files.items()
        }
        self._files = list(project.files)
        self._modules = dict(project.files)
        self._interfaces = interfaces
        self._unloaded = dict(project.unloaded)
        self._settings = _settings_key(settings)
        self._flags = analysis.divergence(project, settings).settled_flags()
        self._resolutions = project.resolutions()


def _settings_key(settings: Settings) -> tuple:
    """What of the settings the flags read (see ddplint.analysis.divergence.analysis.Analysis)."""
    return (
        frozenset(settings.collectives or ()),
        frozenset(settings.rank_predicates or ()),
        frozenset(getattr(settings, "distributed_types", None) or ()),
    )

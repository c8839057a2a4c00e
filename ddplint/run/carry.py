"""What one check of a file carries to the next check of the same file.

A file being edited is checked again and again: by the language server at every change, with
the modules around it taken from memory (the same objects each time, unless their files
changed; see ddplint.engine.context_modules), and by pre-commit, flake8 or `ddplint check FILE`
in a new process each time, with those modules read back from the cache. Each check analyses
afresh, but the flags of the functions the file reaches (whether each may reach a collective,
see `Analysis.flags`: a tenth of a check of timm's `train.py`) are taken from the check before
wherever nothing they depend on changed: no module they were read from, and nothing the changed
modules show the others (see ddplint.model.project.interface). The server also carries the
functions the calls of unchanged modules run, and the summaries of their functions, which the
next check takes only where replaying their questions proves them (see
ddplint.analysis.divergence.replay).
"""

from __future__ import annotations

import io
import os
import pickle

from ddplint import analysis
from ddplint.model.facts import ModuleFacts
from ddplint.model.project import Project, interface
from ddplint.run.cache.findings import digest
from ddplint.run.cache.trees import TreeCache
from ddplint.settings import Settings


class Carry:
    """What one check in the server settled (flags, resolved calls), with the project it was
    settled in: the modules as objects, their interfaces, the settings."""

    def __init__(self) -> None:
        self._files: list[str] = []
        self._modules: dict[str, ModuleFacts] = {}  # by file name
        self._interfaces: dict[str, tuple] = {}
        self._unloaded: dict[str, tuple[str, ...]] = {}
        self._settings: tuple | None = None
        self._flags: dict = {}
        self._resolutions: dict[str, dict] = {}
        self._summaries: dict = {}

    def bring(self, project: Project, settings: Settings) -> int:
        """Give `project`'s analysis the flags of the last check that still hold, and the
        summaries of the functions of unchanged modules to replay; how many flags."""
        found = analysis.divergence(project, settings)
        found.keep_logs()
        if not self._flags or not _same_project(
            project, settings, self._settings, self._files, self._unloaded
        ):
            return 0
        changed = [name for name, facts in project.files.items() if facts is not self._modules[name]]
        if not _same_interfaces(project, changed, self._interfaces):
            return 0
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
        found.adopt_flags(held)
        # Of the functions of unchanged modules: replaying a summary asks its questions again.
        summaries = {key: entry for key, entry in self._summaries.items() if id(entry[0]) not in stale}
        found.adopt_summaries(summaries)
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
        settled = analysis.divergence(project, settings)
        self._flags = settled.settled_flags()
        self._summaries = settled.settled_summaries()
        self._resolutions = project.resolutions()


def _same_project(project: Project, settings: Settings, settings_key, files, unloaded) -> bool:
    """Whether `project` is the one a check under `settings_key` settled things in: the same
    modules, added in the same order (the first of two files with one module name is the one
    imports find), and the same modules left out."""
    return (
        settings_key == _settings_key(settings)
        and list(project.files) == files
        and project.unloaded == unloaded
    )


def _same_interfaces(project: Project, changed, interfaces) -> bool:
    """Whether the `changed` modules show the others what they showed then: else a call
    elsewhere may resolve otherwise now."""
    return all(interface(project.files[name]) == interfaces[name] for name in changed)


def _settings_key(settings: Settings) -> tuple:
    """What of the settings the flags read (see ddplint.analysis.divergence.analysis.Analysis)."""
    return (
        frozenset(settings.collectives or ()),
        frozenset(settings.rank_predicates or ()),
        frozenset(getattr(settings, "distributed_types", None) or ()),
    )


# Kept between runs --------------------------------------------------------------------------
#
# pre-commit, flake8 and `ddplint check FILE` check one file again after each edit, in a new
# process, with the modules around it read back from the cache: the same texts, but other
# objects. The flags the last run over the same files settled are kept beside the trees, by
# file name and position of the function among its module's scopes (the same for the same text),
# with the key of each module's text, and taken where the run before would have taken them.

_FLAGS_FORMAT = "ddplint-flags-1"


def bring_kept(project: Project, settings: Settings, trees: TreeCache, checked: list[ModuleFacts]) -> int:
    """Give `project`'s analysis the flags kept by the last run over the files `checked` that
    still hold; how many."""
    data = trees.read_beside(_flags_file(checked))
    if data is None:
        return 0
    try:
        held = _held(project, settings, trees, _Plain(io.BytesIO(data)).load())
    except Exception:  # damaged or foreign: worked out again
        return 0
    analysis.divergence(project, settings).adopt_flags(held)
    return len(held)


def _held(project: Project, settings: Settings, trees: TreeCache, kept) -> dict:
    """The kept flags that hold, by the id of their function's scope in `project`."""
    form, files, unloaded, settings_key, modules, flags = kept
    if form != _FLAGS_FORMAT or set(modules) != set(files):
        return {}
    if not _same_project(project, settings, settings_key, files, unloaded):
        return {}
    keys = [trees.keys.get(name) for name in files]
    if None in keys:
        return {}  # a module not read through the cache: its text unknown
    changed = {name for name, key in zip(files, keys) if key != modules[name][0]}
    if not _same_interfaces(project, changed, {name: modules[name][1] for name in changed}):
        return {}
    held = {}
    for (name, index), (value, read_from) in flags.items():
        if changed.intersection(read_from):
            continue  # a changed module's own functions among them: another place, maybe
        scopes = project.files[name].scopes
        if not (type(index) is int and 0 <= index < len(scopes)) or len(value) != 3:
            return {}  # not what a run writes
        held[id(scopes[index])] = (
            tuple(map(bool, value)),
            tuple(project.files[other] for other in read_from),
        )
    return held


def keep_flags(project: Project, settings: Settings, trees: TreeCache, checked: list[ModuleFacts]) -> None:
    """Keep what the run just done on `project` settled, for the next run over `checked`."""
    if not trees.keep or any(name not in trees.keys for name in project.files):
        return
    where = {
        id(scope): (facts.filename, index)
        for facts in project.files.values()
        for index, scope in enumerate(facts.scopes)
    }
    flags = {
        where[key]: (value, tuple(module.filename for module in read_from))
        for key, (value, read_from) in analysis.divergence(project, settings).settled_flags().items()
        if key in where
    }
    modules = {name: (trees.keys[name], interface(facts)) for name, facts in project.files.items()}
    kept = (
        _FLAGS_FORMAT,
        list(project.files),
        dict(project.unloaded),
        _settings_key(settings),
        modules,
        flags,
    )
    trees.keep_beside(_flags_file(checked), pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))


def _flags_file(checked: list[ModuleFacts]) -> str:
    """One file per first checked module: as many as the trees at most."""
    return f"flags-{digest(os.path.abspath(checked[0].filename))}.pickle"


class _Plain(pickle.Unpickler):
    """Plain data only: tuples, lists, dicts, sets, strings, numbers."""

    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")

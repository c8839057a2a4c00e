"""Parsed modules kept between runs in `.ddplint_cache/`: parsing is most of a run's work.

The findings cache (see ddplint.run.cache.plan) spares only groups in which nothing changed. A run
after an edit still checks the whole group of the edited file, and a run on the few files
pre-commit passes reads the modules around them as context: without this, each such run parses
them all again. A module's facts and tree are kept pickled (see ddplint.syntax.pickling) and
compressed, one file per module, headed by a key over its text and what its facts depend on;
reading one back costs about an eighth of parsing it. Before the whole facts, the file holds the
module's skeleton (see ddplint.model.skeleton): a module read only as context is read that far,
at a twentieth of the cost, and whole only when a node of it is asked for.

Only libcst's nodes and ddplint's own fact classes are unpickled (see `_Restricted`), each built
afresh for the module read (see `loads`): a cache folder someone else wrote can at worst cost a
parse; it can neither run code nor change the trees of other modules.
"""

from __future__ import annotations

import copyreg
import functools
import importlib.util
import io
import os
import pickle
import re
import shutil
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

from ddplint.model.facts import ModuleFacts
from ddplint.model.skeleton import SKELETON_CLASSES, LazyModuleFacts, skeleton_object, skeleton_reducers
from ddplint.run.cache.findings import CACHE_DIR, digest, is_folder, replace_whole
from ddplint.syntax.parse import run_with_large_stack, unchecked_nodes
from ddplint.syntax.reparse import REUSE_FROM, DocumentParser
from ddplint.syntax.source import Source

_PREFIX = "trees-"  # the folder of the trees kept by one version of ddplint's code
_MAGIC = b"ddplint-tree-3\n"
_KEY_BYTES = 40  # a hex digest
_HEAD = len(_MAGIC) + _KEY_BYTES
# After the head: the size of the compressed skeleton (see ddplint.model.skeleton; 0 for none),
# the skeleton, then the whole facts.
_SKELETON_SIZE = 4
# Edited modules kept whole that a run parses in pieces (see TreeCache.parser_for_edit).
FRESH_PARSERS = 4
# Speed over size: level 1 already shrinks a pickle about fourfold, to the size of the source.
_LEVEL = 1


class TreeCache:
    def __init__(self, folder: Path, *, keep: bool = True) -> None:
        self.folder = folder
        self.keep = keep  # False: read what is kept, keep nothing new
        self._ready = False
        self._fresh_parsers = 0  # edited modules kept whole, given a parser to start pieces
        # File name → the key of the text this run loaded it with (see `_key`): what the
        # analyses kept beside the trees compare (see ddplint.run.carry).
        self.keys: dict[str, str] = {}

    @classmethod
    def under(cls, cache_root: Path, *, keep: bool = True) -> TreeCache:
        """The trees kept in a project's `.ddplint_cache/`. A module's facts depend on its text
        and ddplint's code, not on the settings: runs with other settings share them."""
        from ddplint._meta import __version__
        from ddplint.run.cache.findings import code_key

        return cls(cache_root / f"{_PREFIX}{__version__}-{code_key()[:16]}", keep=keep)

    def file_for(self, filename: str) -> Path:
        """One file per module: a changed module replaces its old tree."""
        return self.folder / f"{digest(os.path.abspath(filename))}.pickle.z"

    def read_beside(self, name: str) -> bytes | None:
        """A file kept beside the trees, by its name (see ddplint.run.carry)."""
        try:
            return (self.folder / name).read_bytes()
        except OSError:
            return None

    def keep_beside(self, name: str, data: bytes) -> None:
        if self.keep:
            self._write(self.folder / name, data)

    def has(self, filename: str) -> bool:
        """Whether a tree is kept for this file, kept since it last changed (a guess from the
        times: `load` checks the text)."""
        try:
            return self.file_for(filename).stat().st_mtime_ns >= os.stat(filename).st_mtime_ns
        except OSError:  # none kept, or the folder cannot be read
            return False

    def load(
        self, source: Source, module_name: str, *, parse_context: Callable[[], ModuleFacts] | None = None
    ) -> ModuleFacts | None:
        """The facts kept for this text of the module, named as this run names the file.
        `parse_context`, given for a module read only as context: its skeleton is enough (see
        ddplint.model.skeleton), and this parses the module should the kept facts not read back
        when a node is asked for."""
        data = self._read(source.filename)
        text_key = self.keys[source.filename] = _key(source, module_name)
        key = text_key.encode()
        if data is None or data[len(_MAGIC) : _HEAD] != key:
            return None  # none, another text, or another format
        if parse_context is not None:
            found = self._skeleton(data, source, parse_context)
            if found is not None:
                return found
        try:
            facts = self._unpickled(data, source)[0]
            if not isinstance(facts, ModuleFacts) or not isinstance(facts.source, Source):
                return None
            facts.source.filename = source.filename
            # A notebook's cells as this read found them: the same text may be cut into cells
            # otherwise, or come with other outputs around it.
            facts.source.notebook = source.notebook
        except Exception:  # damaged or foreign: parse it instead
            return None
        return facts

    def parser_for_edit(self, source: Source) -> DocumentParser | None:
        """A parser for a module whose kept version has another text (it is being edited),
        resumed from the pieces that version was parsed from: it parses only the statements
        that changed. None when no version is kept (a new file, a first run).

        A version kept whole gives a parser with nothing to reuse, which parses the module in
        pieces (a third slower than whole) for the next edit to reuse; that happens for the
        first few such modules of a run that keeps trees only: an editor or pre-commit hook
        checks the few files being edited, while a run after switching branches meets many
        changed files."""
        kept = self._kept(source)
        if kept is None:
            return None
        parser = DocumentParser()
        if _in_pieces(kept):
            parser.resume(kept[1])
            return parser
        if not self.keep or self._fresh_parsers >= FRESH_PARSERS:
            return None  # pieces nobody would keep, or too many modules changed
        self._fresh_parsers += 1
        return parser

    def resume(self, parser: DocumentParser, source: Source) -> None:
        """A document's parser that has parsed nothing yet (an editor's, on opening a file)
        goes on from the pieces the module's kept version was parsed from, if it was."""
        if parser.state() is None:
            kept = self._kept(source)
            if kept is not None and _in_pieces(kept):
                parser.resume(kept[1])

    def _kept(self, source: Source) -> tuple | None:
        if len(source.text) <= REUSE_FROM:
            return None  # parsed whole whatever was kept
        data = self._read(source.filename)
        if data is None:
            return None
        try:
            return self._unpickled(data, source)
        except Exception:  # damaged or foreign: parsed whole instead
            return None

    def _read(self, filename: str) -> bytes | None:
        try:
            with open(self.file_for(filename), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        return data if data[: len(_MAGIC)] == _MAGIC else None

    @staticmethod
    def _unpickled(data: bytes, source: Source) -> tuple:
        """(facts,) or, for a module parsed in pieces, (facts, the parser's state, its key)."""
        # A pickle is about four times its source: more is not a tree of this text (nor of one
        # a few edits away).
        blob = _decompress(_whole_part(data), limit=64 * len(source.text) + (1 << 20))
        kept = loads(blob)
        return kept if isinstance(kept, tuple) else (kept,)

    def _skeleton(
        self, data: bytes, source: Source, parse: Callable[[], ModuleFacts]
    ) -> LazyModuleFacts | None:
        """The module's skeleton, waiting to read the kept facts whole (or `parse` them, should
        those not read); None when none is kept or it does not read."""
        size = int.from_bytes(data[_HEAD : _HEAD + _SKELETON_SIZE], "big")
        if not size:
            return None
        start = _HEAD + _SKELETON_SIZE
        try:
            blob = _decompress(data[start : start + size], limit=16 * len(source.text) + (1 << 20))
            found = _Restricted(io.BytesIO(blob)).load()
        except Exception:  # damaged or foreign: read whole instead
            return None
        if type(found) is not LazyModuleFacts:
            return None
        found.__dict__["source"] = source

        def whole() -> ModuleFacts:
            try:
                facts = self._unpickled(data, source)[0]
                if isinstance(facts, ModuleFacts):
                    return facts
            except Exception:  # damaged after all: parsed instead
                pass
            return parse()

        return found.awaiting(whole)

    def store(
        self, facts: ModuleFacts, blob: bytes | None = None, parser: DocumentParser | None = None
    ) -> None:
        """Keep a module's facts; `blob`: already pickled (see ddplint.syntax.pickling);
        `parser`: the one that parsed it, whose pieces the next edit reuses."""
        if not self.keep:
            return
        if blob is None:
            from ddplint.syntax import pickling

            state = parser.state() if parser is not None else None
            kept = facts if state is None else (facts, state, _parser_key())
            try:
                # Pickling recurses once per nesting level: a deep stack, as for parsing.
                blob = run_with_large_stack(lambda: pickling.dumps(kept))
            except (RecursionError, MemoryError, pickle.PickleError, TypeError, AttributeError):
                return  # parsed again next time
        key = _key(facts.source, facts.module_name).encode()
        skeleton = _pickled_skeleton(facts)
        head = _MAGIC + key + len(skeleton).to_bytes(_SKELETON_SIZE, "big")
        self._write(self.file_for(facts.filename), head + skeleton + zlib.compress(blob, _LEVEL))

    def _write(self, path: Path, data: bytes) -> None:
        try:
            self._prepare()
            replace_whole(path, data)
        except OSError:
            pass  # a read-only or full disk: worked out again next time

    def _prepare(self) -> None:
        if not self._ready:
            if not self.folder.is_dir():
                self._drop_others()
            self.folder.mkdir(parents=True, exist_ok=True)
            self._ready = True

    def _drop_others(self) -> None:
        """Trees kept by other versions of ddplint's code are never read again: each is as
        large as the project's source, so they go when this version keeps its first."""
        for other in self.folder.parent.glob(f"{_PREFIX}*"):
            if other != self.folder and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)


def kept_trees(root: Path) -> TreeCache | None:
    """The trees `ddplint check` keeps in the project's cache, to be read and never written: an
    editor linting a buffer on every save, or flake8's run, reads the modules around the files
    back instead of parsing them again, and writes nothing into the project."""
    folder = root / CACHE_DIR
    return TreeCache.under(folder, keep=False) if is_folder(folder) else None


def _key(source: Source, module_name: str) -> str:
    """What a module's facts depend on: its text as decoded, its module name (relative imports),
    and the pickle's makers. ddplint's own code and settings are in the cache folder's name."""
    return digest(
        source.text,
        source.encoding,
        str(source.bom),
        source.newline,
        module_name,
        _libcst_version(),
        sys.version,
    )


def _in_pieces(kept: tuple) -> bool:
    """Whether a kept module came with its parser's state, from this libcst and Python."""
    return len(kept) == 3 and kept[2] == _parser_key()


def _parser_key() -> str:
    """Pieces parsed by another libcst or Python are not reused."""
    return f"{_libcst_version()} {sys.version}"


@functools.cache
def _libcst_version() -> str:
    """libcst's version, read from its `_version.py` without importing libcst or
    `importlib.metadata` (20 ms of a pre-commit run that may need neither)."""
    spec = importlib.util.find_spec("libcst")
    if spec is not None and spec.origin:
        try:
            text = Path(spec.origin).with_name("_version.py").read_text(encoding="utf-8")
        except OSError:
            text = ""
        found = re.search(r"""^__version__\b.*?=\s*['"]([^'"]+)['"]""", text, re.MULTILINE)
        if found:
            return found.group(1)
    from importlib.metadata import version  # a libcst laid out otherwise

    return version("libcst")


def _whole_part(data: bytes) -> bytes:
    """The compressed pickle of a kept file's whole facts, after its head and skeleton."""
    size = int.from_bytes(data[_HEAD : _HEAD + _SKELETON_SIZE], "big")
    return data[_HEAD + _SKELETON_SIZE + size :]


class _NodeInSkeleton(Exception):
    pass


class _SkeletonPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if type(obj).__module__.startswith("libcst"):
            raise _NodeInSkeleton  # a node field not left out: no skeleton
        return None


def _pickled_skeleton(facts: ModuleFacts) -> bytes:
    """The module's skeleton, pickled and compressed; empty when it cannot be made."""
    out = io.BytesIO()
    pickler = _SkeletonPickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, **skeleton_reducers()}
    try:
        pickler.dump(facts)
    except (_NodeInSkeleton, RecursionError, pickle.PickleError, TypeError, AttributeError):
        return b""
    return zlib.compress(out.getvalue(), _LEVEL)


def _decompress(data: bytes, limit: int) -> bytes:
    inflate = zlib.decompressobj()
    out = inflate.decompress(data, limit)
    if inflate.unconsumed_tail or not inflate.eof:
        raise ValueError("larger than a tree of this text, or cut short")
    return out


@functools.cache
def _ours() -> frozenset[tuple[str, str]]:
    """What a kept module's pickle may name besides libcst's node classes: facts, and the
    factories that share whitespace nodes."""
    from ddplint.model.facts import CallSite, Loop, Scope
    from ddplint.model.names import ImportMap
    from ddplint.syntax.sharing import FACTORIES  # libcst: only once a tree is read

    # Named by the classes themselves: a module that moves keeps its kept trees readable.
    classes = (
        ModuleFacts,
        Scope,
        CallSite,
        Loop,
        ImportMap,
        Source,
        *FACTORIES.values(),
        *SKELETON_CLASSES,
        skeleton_object,
    )
    # A notebook's cells, by name: the module that reads notebooks is imported only for them.
    notebook = {("ddplint.syntax.notebook", name) for name in ("Notebook", "CodeCell", "Magic")}
    return frozenset((cls.__module__, cls.__qualname__) for cls in classes) | notebook


# What find_class allowed, by name: each kept module names the same few dozen classes.
_allowed: dict[tuple[str, str], object] = {}


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        found = _allowed.get((module, name))
        if found is None:
            found = _allowed[module, name] = self._allow(module, name)
        return found

    def _allow(self, module: str, name: str):
        if (module, name) in _ours():
            return super().find_class(module, name)
        if module.startswith("libcst._nodes.") or module == "libcst._maybe_sentinel":
            from libcst import CSTNode, MaybeSentinel

            found = super().find_class(module, name)
            if found is MaybeSentinel or (
                isinstance(found, type) and issubclass(found, CSTNode) and found.__module__ == module
            ):
                return found  # building a node runs nothing but its fields' assignment
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a kept module")


def loads(blob: bytes):
    """Unpickle a kept module. Every object it names is built afresh for it (whitespace is
    shared only within it), except MaybeSentinel's members, which are checked unchanged after."""
    from libcst import MaybeSentinel

    from ddplint.syntax.sharing import sharing_apart

    members = [(member, dict(vars(member))) for member in MaybeSentinel]
    try:
        with unchecked_nodes(), sharing_apart():
            return _Restricted(io.BytesIO(blob)).load()
    finally:
        for member, before in members:
            if vars(member) != before:  # a hostile pickle set attributes on it: undone
                vars(member).clear()
                vars(member).update(before)
                raise pickle.UnpicklingError("a kept module changed a shared object")

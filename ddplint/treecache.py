"""Parsed modules kept between runs in `.ddplint_cache/`: parsing is most of a run's work.

The findings cache (see ddplint.incremental) spares only groups in which nothing changed. A run
after an edit still checks the whole group of the edited file, and a run on the few files
pre-commit passes reads the modules around them as context: without this, each such run parses
them all again. A module's facts and tree are kept pickled (see ddplint.treepickle) and
compressed, one file per module, headed by a key over its text and what its facts depend on;
reading one back costs about an eighth of parsing it.

Only libcst's nodes and ddplint's own fact classes are unpickled (see `_Restricted`): a cache
folder someone else wrote can at worst cost a parse, never run code.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import pickle
import sys
import tempfile
import zlib
from pathlib import Path

from ddplint.cache import digest
from ddplint.facts import ModuleFacts
from ddplint.safeparse import run_with_large_stack, unchecked_nodes
from ddplint.source import Source

FOLDER = "trees"
_MAGIC = b"ddplint-tree-1\n"
_KEY_BYTES = 40  # a hex digest
# Speed over size: level 1 already shrinks a pickle about fourfold, to the size of the source.
_LEVEL = 1


class TreeCache:
    def __init__(self, folder: Path, *, keep: bool = True) -> None:
        self.folder = folder / FOLDER
        self.keep = keep  # False: read what is kept, keep nothing new
        self._ready = False

    def file_for(self, filename: str) -> Path:
        """One file per module: a changed module replaces its old tree."""
        return self.folder / f"{digest(os.path.abspath(filename))}.pickle.z"

    def has(self, filename: str) -> bool:
        """Whether a tree is kept for this file (perhaps of an older text)."""
        return self.file_for(filename).is_file()

    def load(self, source: Source, module_name: str) -> ModuleFacts | None:
        """The facts kept for this text of the module, named as this run names the file."""
        try:
            with open(self.file_for(source.filename), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        key = _key(source, module_name).encode()
        head = len(_MAGIC) + _KEY_BYTES
        if data[: len(_MAGIC)] != _MAGIC or data[len(_MAGIC) : head] != key:
            return None  # another text, or another format
        try:
            facts = loads(zlib.decompress(data[head:]))
        except Exception:  # damaged or foreign: parse it instead
            return None
        if not isinstance(facts, ModuleFacts):
            return None
        facts.source.filename = source.filename
        return facts

    def store(self, facts: ModuleFacts, blob: bytes | None = None) -> None:
        """Keep a module's facts; `blob`: already pickled (see ddplint.treepickle)."""
        if not self.keep:
            return
        if blob is None:
            from ddplint import treepickle

            try:
                # Pickling recurses once per nesting level: a deep stack, as for parsing.
                blob = run_with_large_stack(lambda: treepickle.dumps(facts))
            except (RecursionError, MemoryError, pickle.PickleError, TypeError, AttributeError):
                return  # parsed again next time
        key = _key(facts.source, facts.module_name).encode()
        try:
            self._prepare()
            handle, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(_MAGIC + key + zlib.compress(blob, _LEVEL))
                os.replace(tmp, self.file_for(facts.filename))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            pass  # a read-only or full disk: parsed again next time

    def _prepare(self) -> None:
        if not self._ready:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._ready = True


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


@functools.cache
def _libcst_version() -> str:
    from importlib.metadata import version

    return version("libcst")


@functools.cache
def _ours() -> frozenset[tuple[str, str]]:
    """What a kept module's pickle may name besides libcst's classes: facts, and the factories
    that share whitespace nodes."""
    from ddplint.sharednodes import FACTORIES  # libcst: only once a tree is read

    facts = ("ModuleFacts", "Scope", "CallSite", "Loop")
    return frozenset(
        {
            *(("ddplint.facts", name) for name in facts),
            ("ddplint.names", "ImportMap"),
            ("ddplint.source", "Source"),
            *(("ddplint.sharednodes", factory.__name__) for factory in FACTORIES.values()),
        }
    )


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _ours():
            return super().find_class(module, name)
        if module.startswith("libcst."):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__.startswith("libcst."):
                return found  # a node class, or MaybeSentinel: building one runs nothing else
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a kept module")


def loads(blob: bytes):
    with unchecked_nodes():
        return _Restricted(io.BytesIO(blob)).load()

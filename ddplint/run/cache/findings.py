"""`.ddplint_cache/`: what earlier runs learnt about each file, reused while nothing it depends on changed.

One JSON entry per file, in a folder named after the ddplint version and a hash of the effective
settings and of ddplint's own code. An entry holds the file's content hash, its byte scan
(triggers, imports), whether it parses, and its findings together with the key they were
computed under: a hash over the file, its module name and every project module it imports,
directly or not. A changed helper changes the key of every importer, so their findings are
computed again.

Entries are written to a temporary file and renamed into place: two runs sharing the cache
each see whole entries, the newer one winning.

Each other version or setting leaves its folder (about a fifth of the project's source in size):
when a run starts a new folder, the folders no run has used for STALE_AFTER go, and temporary
files that a killed run left behind with them. `ddplint clean` removes the whole cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ddplint._meta import __version__
from ddplint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from ddplint.run.outline import Outline
from ddplint.run.prefilter import Scan
from ddplint.settings import Settings

CACHE_DIR = ".ddplint_cache"
TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by ddplint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# A findings folder unused this long goes when a run starts a new one (see `drop_stale`).
STALE_AFTER = 7 * 24 * 3600
# A temporary file this old was left by a run that was killed while writing it.
LEFT_BEHIND_AFTER = 3600
_FINDINGS_FOLDER = re.compile(r"\d[\w.+!-]*-[0-9a-f]{16}")


def digest(*parts: str | bytes) -> str:
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()


def settings_key(settings: Settings, codes: frozenset[str]) -> str:
    """Every setting (any of them can change a finding or which files are read), the codes,
    and ddplint's own code."""
    data = {"codes": sorted(codes), "code": code_key(), **dataclasses.asdict(settings)}
    return digest(json.dumps(data, sort_keys=True, default=str))


@functools.cache
def code_key() -> str:
    """A hash of ddplint's own sources: an install from a checkout changes its analysis without
    changing its version, and must not reuse what the previous code concluded."""
    package = Path(__file__).parents[2]  # the whole ddplint package, from ddplint/run/cache/
    h = hashlib.blake2b(digest_size=20)
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode())
        with contextlib.suppress(OSError):
            h.update(path.read_bytes())
    return h.hexdigest()


@dataclass
class Entry:
    content: str  # hash of the file's bytes
    scan: Scan | None = None
    parses: bool | None = None  # CPython's parser accepts it (asked only for skipped files)
    # Its outline (see ddplint.run.outline), once read; None with `outlined` when it did not parse.
    outline: Outline | None = None
    outlined: bool = False
    key: str | None = None  # what `diagnostics` were computed under
    diagnostics: list[Diagnostic] | None = None
    # (path, content hash) of the modules outside the run read as context for the findings.
    context: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict:
        scan = (
            None
            if self.scan is None
            else {"triggers": self.scan.triggers, "imports": sorted(self.scan.imports)}
        )
        found = None if self.diagnostics is None else [_diagnostic_to_json(d) for d in self.diagnostics]
        return {
            "content": self.content,
            "scan": scan,
            "parses": self.parses,
            "outline": None if self.outline is None else self.outline.to_json(),
            "outlined": self.outlined,
            "key": self.key,
            "diagnostics": found,
            "context": [list(pair) for pair in self.context],
        }

    @classmethod
    def from_json(cls, data: dict) -> Entry:
        scan = data.get("scan")
        found = data.get("diagnostics")
        return cls(
            content=data["content"],
            scan=None if scan is None else Scan(bool(scan["triggers"]), frozenset(scan["imports"])),
            parses=data.get("parses"),
            outline=None if data.get("outline") is None else Outline.from_json(data["outline"]),
            outlined=bool(data.get("outlined")),
            key=data.get("key"),
            diagnostics=None if found is None else [_diagnostic_from_json(d) for d in found],
            context=[(str(a), str(b)) for a, b in data.get("context", [])],
        )


class Cache:
    def __init__(self, root: Path, settings_hash: str) -> None:
        self.root = root / CACHE_DIR
        self.folder = self.root / f"{__version__}-{settings_hash[:16]}"

    def _path(self, path: Path) -> Path:
        return self.folder / f"{digest(str(path.resolve()))}.json"

    def load(self, path: Path) -> Entry | None:
        try:
            with open(self._path(path), encoding="utf-8") as f:
                entry = Entry.from_json(json.load(f))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, or written by another version: compute it again
        self._mark_used()
        return entry

    def store(self, path: Path, entry: Entry) -> None:
        try:
            self._prepare()
            # ASCII JSON: file names that are not UTF-8 (surrogate escapes) round-trip too.
            text = json.dumps(entry.to_json(), separators=(",", ":"))
            replace_whole(self._path(path), text.encode("ascii"))
        except OSError:
            pass  # a read-only or full disk: the run goes on without caching

    _prepared = False
    _used = False

    def _mark_used(self) -> None:
        """A run that only reads the folder writes nothing in it: its time says it is in use."""
        if not self._used:
            self._used = True
            with contextlib.suppress(OSError):
                os.utime(self.folder)

    def _prepare(self) -> None:
        if self._prepared:
            return
        if not is_folder(self.folder):
            drop_stale(self.root)
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", TAG), (".gitignore", "*\n")):
            target = self.root / name
            if not target.exists():
                target.write_text(text, encoding="utf-8")
        self._prepared = True


def drop_stale(root: Path) -> None:
    """Remove the findings folders of `root` (a `.ddplint_cache`) unused for STALE_AFTER, and
    temporary files left behind in the others."""
    try:
        folders = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    now = time.time()
    for folder in folders:
        try:
            unused = now - folder.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        # Kept trees (see ddplint.run.cache.trees) go when another version of ddplint keeps its own.
        if _FINDINGS_FOLDER.fullmatch(folder.name) and unused > STALE_AFTER:
            shutil.rmtree(folder.path, ignore_errors=True)
        else:
            _drop_left_behind(Path(folder.path), now)


def _drop_left_behind(folder: Path, now: float) -> None:
    for temporary in folder.glob(".tmp-*"):
        with contextlib.suppress(OSError):
            if now - temporary.stat().st_mtime > LEFT_BEHIND_AFTER:
                temporary.unlink()


def caches_of(start: Path) -> list[Path]:
    """The caches `ddplint clean` removes for `start`: its project's (where the nearest config
    is, else `start`'s folder, as `ddplint check` run there keeps it) and any below `start`."""
    from ddplint.config import ConfigError, find_pyproject

    folder = start if start.is_dir() else start.parent
    try:
        config = find_pyproject(folder)
    except ConfigError:
        config = None
    candidates = [folder / CACHE_DIR]
    if config is not None:
        candidates.append(config.parent / CACHE_DIR)
    if start.is_dir():
        for top, folders, _ in os.walk(start):
            if CACHE_DIR in folders:
                candidates.append(Path(top) / CACHE_DIR)
            folders[:] = [f for f in folders if f not in (CACHE_DIR, ".git")]
    return sorted({c.resolve() for c in candidates if is_cache_folder(c)})


def is_cache_folder(folder: Path) -> bool:
    """`folder` is a `.ddplint_cache` that ddplint made (its tag says so): safe to remove."""
    try:
        return (
            folder.name == CACHE_DIR
            and not folder.is_symlink()
            and (folder / "CACHEDIR.TAG").read_text(encoding="utf-8") == TAG
        )
    except (OSError, UnicodeDecodeError):
        return False


def replace_whole(target: Path, data: bytes) -> None:
    """Write `target` through a temporary file beside it, renamed into place: runs sharing the
    cache each see the old file or the new one, never half of it."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def is_folder(path: Path) -> bool:
    """Whether `path` is a folder; False too when this user cannot look where it would be."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _location(loc: Location) -> list[int]:
    return [loc.row, loc.column]


def _diagnostic_to_json(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [[e.start, e.end, e.content] for e in d.fix.edits],
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.filename,
        "location": _location(d.location),
        "end_location": _location(d.end_location),
        "noqa_row": d.noqa_row,
        "fix": fix,
        "help": d.help,
        "notes": d.notes,
        "severity": d.severity,
        "detail": d.detail,
    }


def _diagnostic_from_json(data: dict) -> Diagnostic:
    fix = data["fix"]
    return Diagnostic(
        code=data["code"],
        name=data["name"],
        message=data["message"],
        filename=data["filename"],
        location=Location(*data["location"]),
        end_location=Location(*data["end_location"]),
        noqa_row=data["noqa_row"],
        fix=None
        if fix is None
        else Fix(
            Applicability(fix["applicability"]),
            fix["message"],
            tuple(Edit(*edit) for edit in fix["edits"]),
        ),
        help=data["help"],
        notes=list(data["notes"]),
        severity=data["severity"],
        detail=data.get("detail"),
    )

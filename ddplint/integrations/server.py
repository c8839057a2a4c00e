"""`ddplint server`: a language server over stdio (needs the `lsp` extra, pygls 2).

Diagnostics on open, change and save; each fix as a quick fix; "disable for this line" adds or
merges a `# noqa: CODE` comment; diagnostics cleared on close.

A document is checked on one worker thread, so the server keeps reading the editor's messages
meanwhile: changes that arrive while a check runs supersede it, and only the newest version is
checked next (typing faster than a check takes never builds a queue of stale checks).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ddplint._meta import __version__
from ddplint.config import ConfigError, Settings, load_settings
from ddplint.diagnostics import INTERNAL_ERROR, Applicability, Diagnostic, Location, input_error
from ddplint.integrations.editing import client_units, disable_edit, line_span
from ddplint.run.buffer import check_buffer
from ddplint.run.carry import Carry
from ddplint.run.group import collector_paused
from ddplint.run.memory import settle_heap as settle
from ddplint.syntax.positions import keep_generated
from ddplint.syntax.reparse import DocumentParser
from ddplint.syntax.source import Source

SOURCE = "ddplint"
# Seconds for reading the modules a document imports; editors call on every keystroke.
CONTEXT_BUDGET = 1.0


class DdplintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ddplint", __version__)
        # uri → (document version, findings), to answer code actions without linting again.
        self.results: dict[str, tuple[int | None, list[Diagnostic]]] = {}
        # uri → the newest version the editor sent (absent once closed): older checks are dropped.
        self.newest: dict[str, int | None] = {}
        # uri → the parses of its versions: an edit parses only the pieces it changed.
        self.parsers: dict[str, DocumentParser] = {}
        # uri → what its last check settled that the next may take (see ddplint.run.carry).
        self.carries: dict[str, Carry] = {}
        # One check at a time: the analysis and its caches are not shared between threads.
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ddplint-check")
        self.checks = 0  # published, for settle_heap


def settle_heap(server: DdplintServer) -> None:
    """After a published check (see ddplint.run.memory.settle_heap). Run on the checking
    thread, after the diagnostics."""
    settle(server.checks)
    server.checks += 1


@lru_cache(maxsize=64)
def _settings_for(folder: str) -> tuple[Settings, str | None]:
    try:
        return load_settings(None, Path(folder)), None
    except ConfigError as exc:
        return Settings(), str(exc)


def _filename(uri: str, path: str | None) -> str:
    return path if urlparse(uri).scheme == "file" and path else "untitled.py"


def _encoding(server: LanguageServer) -> str:
    encoding = str(server.workspace.position_encoding or "utf-16")
    return encoding if encoding in ("utf-8", "utf-32") else "utf-16"


def _position(source: Source, location: Location, encoding: str) -> types.Position:
    rows = len(source.line_starts)
    row = min(max(location.row, 1), rows)
    line = source.line_text(row)
    column = min(max(location.column - 1, 0), len(line))
    return types.Position(line=row - 1, character=client_units(line[:column], encoding))


def _range(source: Source, start: Location, end: Location, encoding: str) -> types.Range:
    return types.Range(start=_position(source, start, encoding), end=_position(source, end, encoding))


async def lint_document(server: DdplintServer, uri: str, *, superseded=None) -> list[Diagnostic] | None:
    """The document's findings as it is now, checked on the server's worker thread and kept for
    code actions; None when `superseded()` turns true before the check starts or after it ends."""
    document = server.workspace.get_text_document(uri)
    version, text, filename = document.version, document.source, _filename(uri, document.path)
    parser = server.parsers.setdefault(uri, DocumentParser())
    carry = server.carries.setdefault(uri, Carry())

    def check() -> tuple[list[Diagnostic], str | None] | None:
        return None if superseded and superseded() else _lint_text(filename, text, parser, carry)

    checked = await asyncio.get_running_loop().run_in_executor(server.checker, check)
    if checked is None or (superseded and superseded()):
        return None
    diagnostics, problem = checked
    if problem:
        server.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=problem))
    server.results[uri] = (version, diagnostics)
    return diagnostics


def _lint_text(
    filename: str, text: str, parser: DocumentParser | None = None, carry: Carry | None = None
) -> tuple[list[Diagnostic], str | None]:
    """The findings of `text` as `filename`, and a problem with the settings to show, if any."""
    settings, problem = _settings_for(str(Path(filename).resolve().parent))
    try:
        with collector_paused():  # its collections come after, off the path to the diagnostics
            found = check_buffer(filename, text, settings, budget=CONTEXT_BUDGET, parser=parser, carry=carry)
        diagnostics = found.diagnostics
    except Exception as exc:  # a bug of ours must not take the editor's server down
        message = f"internal error in ddplint ({type(exc).__name__}: {exc}) — please report"
        diagnostics = [input_error(INTERNAL_ERROR, filename, message)]
    return diagnostics, problem


def to_lsp(d: Diagnostic, encoding: str) -> types.Diagnostic:
    source = d.source
    if source is None:
        start = types.Position(line=max(d.location.row - 1, 0), character=0)
        where = types.Range(start=start, end=start)
    else:
        where = _range(source, d.location, d.end_location, encoding)
    return types.Diagnostic(
        range=where,
        message=d.message,
        severity=types.DiagnosticSeverity.Warning
        if d.severity == "warning"
        else types.DiagnosticSeverity.Error,
        code=d.code,
        code_description=types.CodeDescription(href=d.url) if d.code.startswith("DDP") else None,
        source=SOURCE,
    )


async def publish(server: DdplintServer, uri: str) -> None:
    """Check the document and publish its findings, unless a newer version arrives first (its
    own check publishes then) or the document is closed."""
    version = server.workspace.get_text_document(uri).version
    server.newest[uri] = version
    diagnostics = await lint_document(server, uri, superseded=lambda: server.newest.get(uri, -1) != version)
    if diagnostics is None:
        return
    encoding = _encoding(server)
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri, diagnostics=[to_lsp(d, encoding) for d in diagnostics], version=version
        )
    )
    server.checker.submit(settle_heap, server)


async def code_actions(server: DdplintServer, uri: str, wanted: types.Range) -> list[types.CodeAction]:
    document = server.workspace.get_text_document(uri)
    version, diagnostics = server.results.get(uri, (None, []))
    if uri not in server.results or version != document.version:
        diagnostics = await lint_document(server, uri) or []
    encoding = _encoding(server)
    actions: list[types.CodeAction] = []
    for d in diagnostics:
        if d.source is None or not d.code.startswith("DDP"):
            continue
        first, last = d.location.row - 1, d.end_location.row - 1
        if last < wanted.start.line or first > wanted.end.line:
            continue
        shown = to_lsp(d, encoding)
        if d.fix is not None and d.fix.edits:
            edits = [
                types.TextEdit(
                    range=_range(d.source, d.edit_location(e.start), d.edit_location(e.end), encoding),
                    new_text=e.content,
                )
                for e in d.fix.edits
            ]
            safe = d.fix.applicability is Applicability.SAFE
            actions.append(
                types.CodeAction(
                    title=f"{d.code}: {d.fix.message}" + ("" if safe else " (unsafe)"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[shown],
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                    is_preferred=safe,
                )
            )
        disable = disable_edit(d)
        if disable is not None:
            row, new_line = disable
            start, end = line_span(d.source, row)
            edit = types.TextEdit(
                range=_range(d.source, d.edit_location(start), d.edit_location(end), encoding),
                new_text=new_line,
            )
            actions.append(
                types.CodeAction(
                    title=f"Disable {d.code} for this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[shown],
                    edit=types.WorkspaceEdit(changes={uri: [edit]}),
                )
            )
    return actions


def create_server() -> DdplintServer:
    server = DdplintServer()
    keep_generated(32)  # the functions its messages name, from one change to the next

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: DdplintServer, params: types.DidOpenTextDocumentParams) -> None:
        await publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: DdplintServer, params: types.DidChangeTextDocumentParams) -> None:
        await publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: DdplintServer, params: types.DidSaveTextDocumentParams) -> None:
        await publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DdplintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.results.pop(uri, None)
        ls.newest.pop(uri, None)  # a check still running publishes nothing
        ls.parsers.pop(uri, None)
        ls.carries.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(ls: DdplintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await code_actions(ls, params.text_document.uri, params.range)

    return server


def serve() -> None:
    create_server().start_io()

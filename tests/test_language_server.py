"""`ddplint server`, driven end to end over stdio by pygls' language client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="`ddplint server` needs the lsp extra (pygls)")

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from ddplint import lint_source
from ddplint.integrations.server import to_lsp
from ddplint.syntax.reparse import DocumentParser

# `😋` is two UTF-16 code units: columns after it differ from code-point columns.
SOURCE = """\
from torch.utils.data import DataLoader, DistributedSampler


def main(ds):
    sampler = DistributedSampler(ds)
    sampler.set_epoch(0)
    s = "😋"; loader = DataLoader(ds, shuffle=True, sampler=sampler)
    other = DataLoader(ds, shuffle=True, sampler=sampler)  # noqa: E501
    return loader, other
"""


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 columns) to `text`."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        units, index = 0, 0
        while units < position.character:
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return sum(len(x) for x in lines[: position.line]) + index

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


class Session:
    """A client talking to a `ddplint server` child process, collecting published diagnostics."""

    def __init__(self) -> None:
        self.client = LanguageClient("ddplint-tests", "1")
        self.published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.put_nowait(params)

    async def start(self, root: Path) -> types.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "ddplint", "server")
        capabilities = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])
        )
        result = await self.client.initialize_async(
            types.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
        )
        self.client.initialized(types.InitializedParams())
        return result

    def change(self, uri: str, version: int, text: str) -> None:
        """Send the document's whole new text."""
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def next_diagnostics(self) -> types.PublishDiagnosticsParams:
        return await asyncio.wait_for(self.published.get(), timeout=60)

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def run_session(tmp_path: Path, script) -> None:
    async def main() -> None:
        session = Session()
        result = await session.start(tmp_path)
        assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf16
        try:
            await script(session)
        finally:
            await session.stop()

    asyncio.run(main())


def test_diagnostics_quick_fixes_and_close(tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()  # never written: the server reads the editor's text

    async def script(session: Session) -> None:
        client = session.client
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)
            )
        )
        published = await session.next_diagnostics()
        assert published.uri == uri
        found = [
            (d.code, d.source, d.severity, d.range.start.line, d.range.start.character, d.range.end.character)
            for d in published.diagnostics
        ]
        # `shuffle=True` starts 37 code points into row 7; UTF-16 counts the emoji twice.
        assert lint_source(SOURCE, filename="train.py")[0].location.column - 1 == 37
        assert found == [
            ("DDP001", "ddplint", types.DiagnosticSeverity.Error, 6, 38, 50),
            ("DDP001", "ddplint", types.DiagnosticSeverity.Error, 7, 27, 39),
        ]
        assert published.diagnostics[0].code_description.href.endswith("/rules/DDP001.md")

        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=published.diagnostics[0].range,
                context=types.CodeActionContext(diagnostics=[published.diagnostics[0]]),
            )
        )
        titles = [a.title for a in actions]
        assert titles == ["DDP001: Remove `shuffle=True`", "Disable DDP001 for this line"]
        assert all(a.kind == types.CodeActionKind.QuickFix for a in actions)
        fixed = apply(SOURCE, actions[0].edit.changes[uri])
        assert '    s = "😋"; loader = DataLoader(ds, sampler=sampler)\n' in fixed
        disabled = apply(SOURCE, actions[1].edit.changes[uri])
        assert (
            '    s = "😋"; loader = DataLoader(ds, shuffle=True, sampler=sampler)  # noqa: DDP001\n'
            in disabled
        )

        # "Disable" merges into an existing noqa comment.
        line = types.Range(start=types.Position(line=7, character=0), end=types.Position(line=7, character=5))
        merged = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=line,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        [disable_other] = [a for a in merged if a.title.startswith("Disable")]
        assert "sampler=sampler)  # noqa: E501, DDP001\n" in apply(SOURCE, disable_other.edit.changes[uri])

        # A change publishes again: the fixed text has only the other finding left.
        session.change(uri, 2, fixed)
        changed = await session.next_diagnostics()
        assert (changed.version, [d.range.start.line for d in changed.diagnostics]) == (2, [7])

        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        saved = await session.next_diagnostics()
        assert [d.range.start.line for d in saved.diagnostics] == [7]

        session.close(uri)
        closed = await session.next_diagnostics()
        assert (closed.uri, list(closed.diagnostics)) == (uri, [])

    run_session(tmp_path, script)


def test_changes_faster_than_checks_publish_the_newest_version_last(tmp_path: Path) -> None:
    """Changes sent back to back: versions are published in order (older checks that a newer
    change superseded publish nothing), the last one published is the newest, with its findings."""
    uri = (tmp_path / "train.py").as_uri()
    # Version n has n - 1 loaders with `shuffle=True` beside a sampler (one finding each).
    bad = "    bad{} = DataLoader(ds, shuffle=True, sampler=sampler)\n"
    head = SOURCE.split("    s = ")[0]

    def version_text(n: int) -> str:
        return head + "".join(bad.format(i) for i in range(n - 1)) + "    return sampler\n"

    async def script(session: Session) -> None:
        client = session.client
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=version_text(1))
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        for version in range(2, 8):
            session.change(uri, version, version_text(version))
        published = []
        while not published or published[-1].version != 7:
            published.append(await session.next_diagnostics())
        versions = [p.version for p in published]
        assert versions == sorted(set(versions))
        # The first check (which imports the parser) outlasts the sending of all six changes:
        # the ones it overtook are never checked.
        assert len(versions) < 7
        assert all(len(p.diagnostics) == p.version - 1 for p in published)
        assert [d.range.start.line for d in published[-1].diagnostics] == [6, 7, 8, 9, 10, 11]
        # Nothing older arrives afterwards.
        session.close(uri)
        closed = await session.next_diagnostics()
        assert (closed.version, list(closed.diagnostics)) == (None, [])

    run_session(tmp_path, script)


def test_diagnostics_after_edits_equal_a_fresh_check_of_the_text(tmp_path: Path) -> None:
    """A document long enough that each change parses only what it changed: after every change,
    the published findings are those of checking its text afresh (a syntax error included)."""
    uri = (tmp_path / "train.py").as_uri()
    step = (
        "\n\ndef step_{i}(ds):\n"
        "    sampler = DistributedSampler(ds)\n"
        "    loader = DataLoader(ds, sampler=sampler)\n"
        "    for batch in loader:\n"
        "        print(batch)\n"
        "    return loader\n"
    )
    # Without the emoji, UTF-16 columns are code points, as a fresh check gives them.
    first = SOURCE.replace("😋", "e") + "".join(step.format(i=i) for i in range(60))
    assert DocumentParser().parse(first) is not None  # long enough to be parsed in pieces
    fine, bad = (
        "    loader = DataLoader(ds, sampler=sampler)\n",
        "    loader = DataLoader(ds, shuffle=True, sampler=sampler)\n",
    )
    versions = [
        first.replace(fine, bad, 3),  # three findings more
        first.replace(fine, bad, 3).replace("def step_7(ds):", "def step_7(ds"),  # broken
        first.replace(fine, bad, 2),  # fixed, one finding fewer
        first.replace(fine, bad, 2) + "# the end\n",
        first.replace(fine, bad, 2).replace("    sampler.set_epoch(0)\n", ""),
    ]

    def shown(text: str) -> list[types.Diagnostic]:
        """What the server publishes for the findings of a fresh check of `text`."""
        return [to_lsp(d, "utf-16") for d in lint_source(text, "train.py")]

    async def script(session: Session) -> None:
        client = session.client
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=first)
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        await session.next_diagnostics()
        for version, text in enumerate(versions, start=2):
            session.change(uri, version, text)
            published = await session.next_diagnostics()
            assert published.version == version
            assert list(published.diagnostics) == shown(text), version
        counts = [len(shown(text)) for text in versions]
        assert counts[0] == counts[2] + 1 and [d.code for d in shown(versions[1])] == ["E999"]

    run_session(tmp_path, script)


def test_syntax_error_is_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    uri = (tmp_path / "broken.py").as_uri()

    async def script(session: Session) -> None:
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text="def f(:\n"
                )
            )
        )
        published = await session.next_diagnostics()
        assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("E999", 0)]

    run_session(tmp_path, script)


def test_server_without_pygls_says_which_extra_to_install() -> None:
    import subprocess

    code = (
        "import sys; sys.modules['pygls'] = None; from ddplint.integrations.cli import main; main(['server'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'ddplint[lsp]'" in done.stderr


def test_what_checks_leave_alive_is_frozen_the_first_time_and_every_so_often(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc

    from ddplint.integrations import server
    from ddplint.run.memory import REFREEZE_AFTER

    calls: list[str] = []
    for name in ("unfreeze", "collect", "freeze"):
        monkeypatch.setattr(gc, name, lambda *args, name=name: calls.append(name))
    ls = server.DdplintServer()
    for _ in range(2 * REFREEZE_AFTER + 1):
        server.settle_heap(ls)
    assert calls == ["unfreeze", "collect", "freeze"] * 3

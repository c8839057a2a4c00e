"""Time `ddplint server` as an editor drives it: open a file, then edit it again and again.

    python benchmarks/lsp_timing.py PROJECT FILE [--changes 9]

Each change appends a comment line to the document (a keystroke's worth of text, findings
unchanged) and waits for the diagnostics of that version. Prints one JSON object: the seconds
from didOpen to its diagnostics, and from each didChange to its diagnostics.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient


async def session(project: Path, path: Path, changes: int, interval: float) -> dict:
    client = LanguageClient("ddplint-bench", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    async def diagnostics_of(version: int) -> types.PublishDiagnosticsParams:
        while True:
            params = await asyncio.wait_for(published.get(), timeout=120)
            if params.version == version:
                return params

    await client.start_io(sys.executable, "-m", "ddplint", "server", cwd=str(project))
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=project.as_uri())
    )
    client.initialized(types.InitializedParams())
    uri = path.resolve().as_uri()
    text = path.read_text(encoding="utf-8")
    started = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    opened = await diagnostics_of(1)
    open_seconds = time.perf_counter() - started
    change_seconds = []
    for version in range(2, changes + 2):
        await asyncio.sleep(interval)  # a typist's pause: the server is idle again
        text += f"# edit {version}\n"
        started = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        await diagnostics_of(version)
        change_seconds.append(time.perf_counter() - started)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {
        "open": round(open_seconds, 3),
        "changes": [round(s, 3) for s in change_seconds],
        "change_median": round(statistics.median(change_seconds), 3),
        "findings": len(opened.diagnostics),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("file", type=Path, help="relative to the project")
    parser.add_argument("--changes", type=int, default=9)
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between two changes")
    args = parser.parse_args()
    project = args.project.resolve()
    result = asyncio.run(session(project, project / args.file, args.changes, args.interval))
    print(json.dumps(result))


if __name__ == "__main__":
    main()

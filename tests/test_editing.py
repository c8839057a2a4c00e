"""The editor quick edit "disable for this line", and client column units."""

from __future__ import annotations

from ddplint import lint_source
from ddplint.integrations.editing import client_units, disable_edit, noqa_line

HEAD = "from torch.utils.data import DataLoader\n"


def test_noqa_line_adds_or_merges() -> None:
    assert noqa_line("f(x)   ", "DDP001") == "f(x)  # noqa: DDP001"
    assert noqa_line("f(x)  # noqa: E501", "DDP001") == "f(x)  # noqa: E501, DDP001"
    assert (
        noqa_line("f(x)  # noqa:E501,W291 long line", "DDP001") == "f(x)  # noqa:E501,W291, DDP001 long line"
    )
    assert noqa_line("f(x)  # noqa: DDP001", "DDP001") is None
    assert noqa_line("f(x)  # noqa", "DDP001") is None


def test_disable_edit_on_the_finding_row() -> None:
    [d] = lint_source(HEAD + "a = DataLoader(d, shuffle=True, sampler=s)  # keep this\n", "a.py")
    assert disable_edit(d) == (2, "a = DataLoader(d, shuffle=True, sampler=s)  # keep this  # noqa: DDP001")


def test_disable_edit_never_writes_into_a_string() -> None:
    # The finding's row ends inside a triple-quoted string; the statement starts on that row too.
    [d] = lint_source(HEAD + 'a = DataLoader(d, shuffle=True, sampler=s, m="""x\ny""")\n', "a.py")
    assert disable_edit(d) is None
    # Here the statement's first row is code: the comment goes there.
    text = HEAD + 'a = DataLoader(\n    d, shuffle=True, sampler=s, m="""x\ny""")\n'
    [d] = lint_source(text, "a.py")
    assert (d.location.row, d.noqa_row) == (3, 2)
    assert disable_edit(d) == (2, "a = DataLoader(  # noqa: DDP001")


def test_client_units() -> None:
    assert [client_units('s = "😋"', e) for e in ("utf-16", "utf-8", "utf-32")] == [8, 10, 7]

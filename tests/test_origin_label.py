"""A divergent value's origin label finds its line only when its text is needed."""

from __future__ import annotations

from ddplint.analysis.divergence.domain import Kind, OriginLabel, Val, join
from ddplint.config import Settings
from ddplint.run.runner import RunOptions, run


def _label(label: str, node: object, line: int, asked: list[object]) -> OriginLabel:
    def find_line() -> int:
        asked.append(node)
        return line

    return OriginLabel(label, "train.py", node, find_line)


def test_the_line_is_found_only_for_the_text_and_once() -> None:
    asked: list[object] = []
    node = object()
    label = _label("`loss.item()`", node, 12, asked)
    value = Val(Kind.DATA, origin=label)
    assert hash(value) == hash(Val(Kind.DATA, origin=label))
    assert value == Val(Kind.DATA, origin=_label("`loss.item()`", node, 12, asked))  # same node
    assert asked == []
    assert str(label) == "`loss.item()` (train.py:12)"
    assert str(label) == "`loss.item()` (train.py:12)"
    assert asked == [node]


def test_labels_are_equal_as_their_texts_would_be() -> None:
    asked: list[object] = []
    first, second, third = object(), object(), object()
    on_line_3 = _label("`rank`", first, 3, asked)
    assert on_line_3 == _label("`rank`", second, 3, asked)  # two spellings on one line
    assert on_line_3 != _label("`rank`", third, 4, asked)
    assert on_line_3 != _label("`world`", first, 3, asked)
    assert _label("`rank`", first, 3, asked) != OriginLabel("`rank`", "eval.py", first, lambda: 3)
    # Equal values join to themselves, as they did when labels were text.
    zero = Val(Kind.CONST, 0, rank=True, origin=on_line_3)
    assert join(zero, Val(Kind.CONST, 0, rank=True, origin=_label("`rank`", second, 3, asked))) is zero


def test_messages_give_the_line_of_the_origin(tmp_path) -> None:
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\n"
        "\n"
        "def train(model, loader):\n"
        "    for batch in loader:\n"
        "        loss = model(batch)\n"
        "        if loss.isnan():\n"
        "            continue\n"
        "        dist.all_reduce(loss)\n"
    )
    result = run([str(tmp_path)], Settings(root=tmp_path), RunOptions(context_budget=0))
    [finding] = result.diagnostics
    assert (finding.code, finding.location.row) == ("DDP004", 7)
    assert "depends on items of `loader` (train.py:4)" in finding.message

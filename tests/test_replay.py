"""What counts as the same answer when a summary's questions are asked again (see
ddplint.analysis.divergence.replay)."""

from __future__ import annotations

import libcst as cst

from ddplint.analysis.divergence.domain import Kind, OriginLabel, Val
from ddplint.analysis.divergence.replay import Recorder, answers_hold, same
from ddplint.analysis.divergence.results import Summary


def label(node: cst.CSTNode) -> OriginLabel:
    return OriginLabel("`loss.item()`", "train.py", node, lambda: 12)


def test_nodes_count_as_themselves_and_values_by_what_they_hold() -> None:
    node, twin = cst.Name("loss"), cst.Name("loss")
    assert same(node, node) and not same(node, twin)
    origin = label(node)
    assert same(Val(Kind.DATA, origin=origin), Val(Kind.DATA, origin=origin))
    # Labels equal as messages, even of the same node: it may stand at another line now.
    assert label(node) == label(node) == label(twin)
    assert not same(Val(Kind.DATA, origin=origin), Val(Kind.DATA, origin=label(node)))
    assert same((1, "a", None, frozenset({2})), (1, "a", None, frozenset({2})))
    assert not same(1, True) and not same((1,), [1]) and not same(0, 0.0)
    assert same(
        Summary((), Val(Kind.UNIFORM), complete=False), Summary((), Val(Kind.UNIFORM), complete=False)
    )
    assert not same(Summary((), Val(Kind.UNIFORM)), Summary((), Val(Kind.UNIFORM), complete=False))


def test_questions_are_recorded_in_order_and_asked_again_the_same_way() -> None:
    class Project:
        def __init__(self, wrapped: bool) -> None:
            self.wrapped = wrapped
            self.asked: list[str] = []

        def distributed(self, facts: object) -> bool:
            self.asked.append("distributed")
            return self.wrapped

        def string_value(self, node: object) -> str:
            self.asked.append("string_value")
            return "x"

    log: list = []
    recorder = Recorder(Project(True), log)
    assert recorder.distributed("facts") is True and recorder.string_value("node") == "x"
    assert log == [("distributed", ("facts",), {}, True)]  # what follows from its argument alone: not kept
    again = Project(True)
    assert answers_hold(again, log) and again.asked == ["distributed"]
    assert not answers_hold(Project(False), log)

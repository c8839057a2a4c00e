"""The project index: which function a call runs, and which calls run a function."""

from __future__ import annotations

from ddplint.engine.checker import Linter
from ddplint.model.project import Project
from ddplint.syntax.source import Source


def _facts(name: str, text: str):
    return Linter().facts_for(Source.from_bytes(f"{name}.py", text.encode()), name)


def test_the_calls_that_run_a_function_in_module_order_and_after_a_module_is_added() -> None:
    helpers = _facts("helpers", "def make_loader():\n    pass\n\n\ndef other():\n    pass\n")
    train = _facts(
        "train",
        "from helpers import make_loader, other\n\n\ndef main():\n    a = make_loader()\n"
        "    other()\n    b = make_loader()\n",
    )
    project = Project([helpers, train])
    target = helpers.functions["make_loader"]
    assert [(f.module_name, c.target) for f, c in project.calls_to(target)] == [
        ("train", "a"),
        ("train", "b"),
    ]
    assert project.calls_to(train.functions["main"]) == []
    evaluate = _facts("evaluate", "from helpers import make_loader\n\nloader = make_loader()\n")
    project.add(evaluate)
    assert [(f.module_name, c.target) for f, c in project.calls_to(target)] == [
        ("train", "a"),
        ("train", "b"),
        ("evaluate", "loader"),
    ]

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


def test_a_receiver_is_guessed_as_the_one_class_whose_name_starts_or_ends_like_it() -> None:
    models = _facts(
        "models",
        "class EarlyStopper:\n    def step(self):\n        pass\n\n    def reset(self):\n        pass\n\n\n"
        "class EpochCounterWithStopper:\n    def step(self):\n        pass\n\n\n"
        "class Distributed_Checkpointer:\n    def save_checkpoint(self):\n        pass\n",
    )
    train = _facts(
        "train",
        "import models\n\n\ndef run(early_stopper, epoch_counter, checkpointer, stopper):\n"
        "    early_stopper.step()\n    epoch_counter.step()\n    checkpointer.save_checkpoint()\n"
        "    stopper.step()\n",
    )
    project = Project([models, train])
    scope = train.functions["run"]

    def guessed(name: str) -> str | None:
        found = project.guess_method(train, scope, name)
        return found[1].name if found is not None else None

    assert guessed("early_stopper.step") == "EarlyStopper.step"  # the whole name
    assert guessed("epoch_counter.step") == "EpochCounterWithStopper.step"  # its start
    assert guessed("checkpointer.save_checkpoint") == "Distributed_Checkpointer.save_checkpoint"  # its end
    assert guessed("stopper.step") is None  # the end of two classes: no guess
    assert guessed("stopper.reset") == "EarlyStopper.reset"  # the one of them with that method
    assert guessed("earlystopper.reset") == "EarlyStopper.reset"  # spelled alike, another method

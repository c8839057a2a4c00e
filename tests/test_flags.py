"""A function's flags (may reach a collective, may return a rank or data value, calls a
parameter) hold whatever function of the project is asked first: a cycle of calls gives every
function in it what any of them reaches."""

from __future__ import annotations

import itertools
import textwrap

import pytest

from ddplint.analysis.divergence.analysis import Analysis
from ddplint.engine.checker import Linter
from ddplint.model.project import Project
from ddplint.syntax.source import Source

# `gather` reaches a collective itself; `retry` only through `gather`, which calls it back;
# `log` reaches nothing; `apply` calls the function it is given, which `deep` hands it.
MODULE = """\
    import torch.distributed as dist

    def gather(x, tries):
        dist.all_reduce(x)
        return retry(x, tries)

    def retry(x, tries):
        if tries:
            return gather(x, tries - 1)
        return log(x)

    def log(x):
        print(x)
        return x

    def apply(fn, x):
        return fn(x)

    def deep(x):
        return apply(retry, x)
    """

NAMES = ["gather", "retry", "log", "apply", "deep"]


def _flags(order: tuple[str, ...]) -> dict[str, tuple[bool, bool, bool]]:
    facts = Linter().facts_for(Source("train.py", textwrap.dedent(MODULE)), "train")
    analysis = Analysis(Project([facts]))
    for name in order:
        analysis.flags(facts, facts.functions[name])
    return {name: analysis.flags(facts, facts.functions[name]) for name in NAMES}


@pytest.mark.parametrize("order", list(itertools.permutations(["gather", "retry", "deep"])))
def test_flags_do_not_depend_on_which_function_is_asked_first(order: tuple[str, ...]) -> None:
    found = _flags(order)
    assert found == _flags(tuple(NAMES))
    assert [found[name][0] for name in NAMES] == [True, True, False, False, False]
    assert found["apply"][2] and not found["gather"][2]

"""DDP007 names the call of the `try` body that synchronises the ranks: `backward()` first, then
the first collective the code spells (a call before the calls inside it), an optimizer step last."""

from __future__ import annotations

import pytest

from ddplint import lint_source

LOOP = """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer):
    model = DDP(model)
    for batch in loader:
        try:
{body}
        except RuntimeError:
            continue
"""


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (["dist.all_reduce(a)", "dist.broadcast(b, 0)"], "`dist.all_reduce(a)`, line 9"),
        (["dist.broadcast(b, 0)", "dist.all_reduce(a)"], "`dist.broadcast(b, 0)`, line 9"),
        (["dist.all_reduce(a)", "loss.backward()"], "`loss.backward()`, line 10"),
        (["optimizer.step()", "dist.all_reduce(a)"], "`dist.all_reduce(a)`, line 10"),
        (["dist.all_reduce(dist.broadcast(b, 0))"], "`dist.all_reduce(dist.broadcast(b, 0))`, line 9"),
    ],
)
def test_the_step_named_is_the_first_synchronising_call_of_the_try_body(body: list[str], named: str) -> None:
    text = LOOP.format(body="\n".join(" " * 12 + line for line in body))
    [finding] = lint_source(text, "train.py")
    assert (finding.code, finding.location.row) == ("DDP007", 9 + len(body))
    assert f"swallows an error of the training step ({named})" in finding.message

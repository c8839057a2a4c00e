"""The 2-rank scripts, the rule each one proves, and what the rule's message says will happen.

Each bad script `scripts/<name>.py` has a variant `scripts/<name>.handfixed.py` written the way the
rule page recommends. `check_bad` asserts the failure the rule's message claims; `check_fixed`
asserts that a fixed version (by hand or by `ddplint check --fix --unsafe-fixes`) completes with
every rank agreeing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness import Outcome, run_ranks

SCRIPTS = Path(__file__).parent / "scripts"


def completes_agreeing(outcome: Outcome) -> None:
    outcome.assert_completed_agreeing()


def falls_out_of_step(outcome: Outcome) -> None:
    """Hang, collective failure or silent disagreement: the ranks no longer run the same collectives."""
    outcome.assert_diverged()


def raises_at_construction(outcome: Outcome) -> None:
    """DDP001: `ValueError: sampler option is mutually exclusive with shuffle` from `DataLoader(...)`."""
    assert outcome.status == "raised", outcome.summary
    for rank in outcome.ranks:
        assert rank.error == "ValueError: sampler option is mutually exclusive with shuffle", outcome.summary
        where = rank.where(outcome.script) or ""
        assert "DataLoader(" in where, f"not raised at the DataLoader's construction: {outcome.summary}"
        assert rank.report is None, f"a training step ran: {outcome.summary}"


def _orders(outcome: Outcome) -> list[list[list[int]]]:
    """Per rank, per epoch, the sample indices in the order that rank trained on them."""
    return [rank.report["orders"] for rank in outcome.ranks]


def _ranks_partition_each_epoch(outcome: Outcome) -> None:
    """Ranks stay consistent with each other: in every epoch they split the data set between them."""
    orders = _orders(outcome)
    for epoch in range(len(orders[0])):
        seen = sorted(i for rank in orders for i in rank[epoch])
        assert seen == list(range(len(seen))), f"epoch {epoch}: ranks overlap or miss samples: {orders}"


def same_order_every_epoch(outcome: Outcome) -> None:
    """DDP002: every epoch repeats the same permutation; the ranks still agree with each other."""
    outcome.assert_completed_agreeing()
    _ranks_partition_each_epoch(outcome)
    for rank, epochs in enumerate(_orders(outcome)):
        assert len(epochs) >= 2 and all(e == epochs[0] for e in epochs), f"rank {rank}: {epochs}"


def new_order_each_epoch(outcome: Outcome) -> None:
    outcome.assert_completed_agreeing()
    _ranks_partition_each_epoch(outcome)
    for rank, epochs in enumerate(_orders(outcome)):
        assert len({tuple(e) for e in epochs}) == len(epochs), f"rank {rank} repeats an order: {epochs}"


def rank0_stuck_in_evaluation(outcome: Outcome) -> None:
    """DDP005 through the wrapper: rank 0 is left waiting in the wrapper's buffer broadcast.

    The evaluation's `model(x)` is a call of the DDP wrapper, which synchronizes the BatchNorm
    buffers (`_sync_buffers`) even under `no_grad()` in `eval()` mode.
    """
    outcome.assert_diverged()
    rank0 = outcome.ranks[0]
    assert rank0.timed_out or rank0.peer_left, outcome.summary
    assert "model(x)" in (rank0.where(outcome.script) or ""), outcome.summary
    assert "in _sync_buffers" in rank0.stderr, (
        f"rank 0 did not wait in the buffer broadcast: {outcome.summary}"
    )
    # Before that, its evaluation broadcasts were silently paired with rank 1's training steps.
    assert "epoch 0 accuracy" in rank0.stdout, f"rank 0 never finished an evaluation: {outcome.summary}"


def rank0_stuck_in_buffer_broadcast(outcome: Outcome) -> None:
    """DDP005 through a model passed to another module: rank 0 waits in the wrapper's buffer
    broadcast, called from the helper module that the other ranks returned from at once."""
    outcome.assert_diverged()
    rank0 = outcome.ranks[0]
    assert rank0.timed_out or rank0.peer_left, outcome.summary
    assert "in _sync_buffers" in rank0.stderr, (
        f"rank 0 did not wait in the buffer broadcast: {outcome.summary}"
    )


def paired_with_other_sizes(outcome: Outcome) -> None:
    """DDP011 with shapes that differ: a rank's all-reduce meets a gradient of another shape from
    its peer; gloo aborts it (`Received data size doesn't match expected size`), and the peer's
    all-reduce fails as the connection closes."""
    outcome.assert_diverged()
    assert any(rank.mismatched for rank in outcome.ranks), outcome.summary


def silently_wrong_values(outcome: Outcome) -> None:
    """DDP011 with shapes that agree: every all-reduce completes, but pairs different sums, and
    the ranks finish with different results, no error raised."""
    assert outcome.status == "disagreed", outcome.summary
    assert all(rank.ended_cleanly for rank in outcome.ranks), outcome.summary


def replicas_drift_apart(outcome: Outcome) -> None:
    """DDP013: every collective pairs up and every rank finishes, but the replicas end with
    different weights, and no error says so."""
    assert outcome.status == "disagreed", outcome.summary
    assert all(rank.ended_cleanly for rank in outcome.ranks), outcome.summary


@dataclass(frozen=True)
class Case:
    code: str
    script: str
    claim: str  # what the rule's message says happens at run time
    check_bad: Callable[[Outcome], None]
    check_fixed: Callable[[Outcome], None] = completes_agreeing
    # The issue that specifies the rule describes an automatic fix for this pattern.
    autofix: bool = True
    # The hand-fixed variant repairs the script otherwise than the automatic fix does (not only
    # other names and docstrings), so its run proves something the automatic fix's run does not.
    own_hand_fix: bool = False
    # A known false negative of the rule: its proof through ddplint must fail until the rule
    # reports the script (the test is a strict xfail, so it turns red once the gap closes).
    known_miss: str | None = None
    # Modules of the script's program beside it in scripts/, copied with it for the fix.
    helpers: tuple[str, ...] = ()
    # Each rank's PYTHONHASHSEED, for a script whose ranks must hash strings differently, as
    # processes that each draw their own seed do (see harness.run_ranks).
    hash_seeds: tuple[str, ...] | None = None

    def run(self, script: Path) -> Outcome:
        """Run the case's script, or a variant of it, on 2 ranks."""
        return run_ranks(script, hash_seeds=self.hash_seeds)

    @property
    def autofix_is_run(self) -> bool:
        """`--fix --unsafe-fixes` must fix the script, and its copy is run (a test fails otherwise)."""
        return self.autofix and not self.known_miss

    @property
    def path(self) -> Path:
        return SCRIPTS / self.script

    @property
    def handfixed(self) -> Path:
        return SCRIPTS / self.script.replace(".py", ".handfixed.py")

    @property
    def id(self) -> str:
        return self.script.removesuffix(".py")


CASES = [
    Case(
        "DDP001",
        "ddp001_seed_article.py",
        "`ValueError` at the `DataLoader`'s construction",
        raises_at_construction,
        own_hand_fix=True,  # the seed article's own fix: `drop_last=True`, `set_to_none=True`
    ),
    Case(
        "DDP002",
        "ddp002_no_set_epoch.py",
        "the same permutation every epoch; ranks still agree",
        same_order_every_epoch,
        new_order_each_epoch,
    ),
    Case(
        "DDP003",
        "ddp003_manual_rank_slice.py",
        "one rank runs more steps; its all-reduce waits forever",
        falls_out_of_step,
        autofix=False,
    ),
    Case(
        "DDP003",
        "ddp003_iterable_sharded.py",
        "one rank runs more steps; its all-reduce waits forever",
        falls_out_of_step,
        autofix=False,
    ),
    Case(
        "DDP004",
        "ddp004_skip_bad_batch.py",
        "one rank skips the gradient all-reduce the others wait in",
        falls_out_of_step,
    ),
    Case(
        "DDP004",
        "ddp004_nan_skip.py",
        "one rank skips the gradient all-reduce the others wait in",
        falls_out_of_step,
    ),
    Case(
        "DDP004",
        "ddp004_wallclock_break.py",
        "one rank leaves the loop while the others wait in its all-reduce",
        falls_out_of_step,
    ),
    Case(
        "DDP005",
        "ddp005_eval_through_wrapper.py",
        "rank 0 broadcasts buffers alone in the DDP call; it waits forever",
        rank0_stuck_in_evaluation,
    ),
    Case(
        "DDP005",
        "ddp005_barrier_in_rank_branch.py",
        "rank 0 waits in the barrier alone",
        falls_out_of_step,
    ),
    Case(
        "DDP005",
        "ddp005_return_on_other_ranks.py",
        "rank 0 waits in the all-reduce alone",
        falls_out_of_step,
        autofix=False,
    ),
    Case(
        "DDP005",
        "ddp005_model_in_attribute.py",
        "rank 0 broadcasts buffers alone in the DDP call held in an attribute; it waits forever",
        rank0_stuck_in_evaluation,
        autofix=False,
    ),
    Case(
        "DDP005",
        "ddp005_model_to_helper_module.py",
        "rank 0 broadcasts buffers alone in the DDP call made in another module; it waits forever",
        rank0_stuck_in_buffer_broadcast,
        helpers=("e2e_evaluation.py",),
    ),
    Case(
        "DDP009",
        "ddp009_order_mismatch.py",
        "each side waits in a call the other answers with another collective",
        falls_out_of_step,
        autofix=False,
    ),
    Case(
        "DDP011",
        "ddp011_parameter_name_set.py",
        "ranks all-reduce different parameters' gradients: an error when their shapes differ",
        paired_with_other_sizes,
        hash_seeds=("1", "2"),
    ),
    Case(
        "DDP011",
        "ddp011_metric_keys_set.py",
        "ranks all-reduce different sums: wrong values when their shapes agree",
        silently_wrong_values,
        hash_seeds=("1", "2"),
    ),
    Case(
        "DDP013",
        "ddp013_scheduler_on_rank_zero.py",
        "the replicas take steps of different sizes and end with different weights, silently",
        replicas_drift_apart,
        autofix=False,
    ),
]

"""The rule registry: every rule, in code order."""

from __future__ import annotations

from ddplint.rules.base import Context, Rule
from ddplint.rules.ddp001_shuffle_with_sampler import ShuffleWithSampler
from ddplint.rules.ddp002_missing_set_epoch import MissingSetEpoch
from ddplint.rules.ddp003_uneven_rank_data import UnevenRankData
from ddplint.rules.ddp004_divergent_exit_before_collective import DivergentExitBeforeCollective
from ddplint.rules.ddp005_collective_in_rank_branch import CollectiveInRankBranch
from ddplint.rules.ddp006_device_by_global_rank import DeviceByGlobalRank
from ddplint.rules.ddp007_swallowed_exception_in_step import SwallowedExceptionInStep
from ddplint.rules.ddp008_loader_without_distributed_sampler import LoaderWithoutDistributedSampler
from ddplint.rules.ddp009_collective_order_mismatch import CollectiveOrderMismatch
from ddplint.rules.ddp010_sampler_seeded_per_rank import SamplerSeededPerRank
from ddplint.rules.ddp011_unordered_collective_order import UnorderedCollectiveOrder
from ddplint.rules.ddp012_collective_before_set_device import CollectiveBeforeSetDevice
from ddplint.rules.ddp013_replica_divergent_update import ReplicaDivergentUpdate

ALL_RULES: list[Rule] = [
    ShuffleWithSampler(),
    MissingSetEpoch(),
    UnevenRankData(),
    DivergentExitBeforeCollective(),
    CollectiveInRankBranch(),
    DeviceByGlobalRank(),
    SwallowedExceptionInStep(),
    LoaderWithoutDistributedSampler(),
    CollectiveOrderMismatch(),
    SamplerSeededPerRank(),
    UnorderedCollectiveOrder(),
    CollectiveBeforeSetDevice(),
    ReplicaDivergentUpdate(),
]
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "Context", "Rule"]

"""What counts as a collective, a rank source or a data source: data, with where each fact comes from.

Checked against the torch 2.13 sources (`torch/distributed/distributed_c10d.py`,
`torch/nn/parallel/distributed.py`) and 2-rank gloo runs. Users extend the collectives and
rank predicates in `[tool.ddplint]` (`collectives = [...]`, `rank-predicates = [...]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

# torch.distributed functions every rank of the group must call, in the same order.
# The value notes why; object collectives are several tensor collectives under the hood.
TORCH_COLLECTIVES: dict[str, str] = {
    "all_reduce": "tensor collective",
    "all_reduce_coalesced": "tensor collective",
    "all_gather": "tensor collective",
    "all_gather_coalesced": "tensor collective",
    "all_gather_into_tensor": "tensor collective",
    "all_gather_object": "object collective (pickles, then all_gather of sizes and bytes)",
    "broadcast": "tensor collective",
    "broadcast_object_list": "object collective (broadcast of sizes and bytes)",
    "reduce": "tensor collective",
    "reduce_scatter": "tensor collective",
    "reduce_scatter_tensor": "tensor collective",
    "scatter": "tensor collective",
    "scatter_object_list": "object collective",
    "gather": "tensor collective",
    "gather_object": "object collective",
    "all_to_all": "tensor collective",
    "all_to_all_single": "tensor collective",
    "barrier": "synchronization",
    "monitored_barrier": "synchronization (gloo)",
    "new_group": "collective: every rank of the default group must call it, in the same order",
    "new_subgroups": "collective: calls new_group for every subgroup",
    "new_subgroups_by_enumeration": "collective: calls new_group for every subgroup",
    "split_group": "collective",
}
TORCH_COLLECTIVES_QUALIFIED = {f"torch.distributed.{name}": note for name, note in TORCH_COLLECTIVES.items()}

# Collectives whose first argument is filled in place with the agreed result: after the call
# that value is the same on every rank (the cure for divergence: agree, then branch).
IN_PLACE_OUTPUT = frozenset(
    {
        "all_reduce",
        "broadcast",
        "all_gather",
        "all_gather_object",
        "all_gather_into_tensor",
        "broadcast_object_list",
        "reduce_scatter_tensor",
        "all_to_all_single",
    }
)

# torch.distributed.checkpoint: every rank writes or reads its shard with a collective plan.
OTHER_COLLECTIVES: dict[str, str] = {
    "torch.distributed.checkpoint.save": "distributed checkpoint (collective planning)",
    "torch.distributed.checkpoint.load": "distributed checkpoint (collective planning)",
    "torch.distributed.checkpoint.save_state_dict": "distributed checkpoint (collective planning)",
    "torch.distributed.checkpoint.load_state_dict": "distributed checkpoint (collective planning)",
}

# Wrappers whose forward and backward synchronise ranks. DDP's forward broadcasts buffers
# (e.g. BatchNorm statistics) when `broadcast_buffers` is on — even under no_grad and eval();
# a rank-0-only evaluation through the wrapper fails with a collective mismatch on gloo.
DDP_WRAPPERS = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_shard",
    }
)
DISTRIBUTED_ENGINES = frozenset({"deepspeed.initialize", "accelerate.Accelerator"})

# Methods of accelerate's Accelerator that every process must call.
ACCELERATE_COLLECTIVES: dict[str, str] = {
    "gather": "all_gather",
    "gather_for_metrics": "all_gather",
    "gather_object": "all_gather_object",
    "reduce": "all_reduce",
    "pad_across_processes": "all_gather of sizes",
    "wait_for_everyone": "barrier",
    "backward": "gradient all-reduce",
    "save_state": "barrier around the save",
    "check_trigger": "all_reduce of the trigger flag",
}
# Lightning: `self.all_gather(...)` in a LightningModule; `strategy.barrier()`.
LIGHTNING_COLLECTIVES = frozenset({"all_gather"})
# DeepSpeed engine methods documented as "all processes must call this method".
DEEPSPEED_COLLECTIVES: dict[str, str] = {
    "backward": "gradient all-reduce",
    "step": "ZeRO partitioned step",
    "save_checkpoint": "all processes must call this method",
}

# Calls whose result is the same on every rank (configuration of the process group).
UNIFORM_CALLS = frozenset(
    {
        "torch.distributed.get_world_size",
        "torch.distributed.is_initialized",
        "torch.distributed.is_available",
        "torch.distributed.get_backend",
        "torch.cuda.device_count",
        "torch.cuda.is_available",
    }
)

# Calls returning the calling process's rank.
RANK_CALLS = frozenset(
    {
        "torch.distributed.get_rank",
        "torch.distributed.get_node_local_rank",
        "torch_xla.core.xla_model.get_ordinal",
        "torch_xla.core.xla_model.get_local_ordinal",
    }
)
# Calls returning "am I the main process" (true on rank 0 only).
MAIN_CALLS = frozenset(
    {
        "torch_xla.core.xla_model.is_master_ordinal",
    }
)
# Project helpers named like these return the rank / the main-process flag when their source is
# not part of the run (`from utils.dist import is_main_process`).
RANK_FUNCTION_NAMES = frozenset({"get_rank", "get_local_rank", "get_global_rank", "local_rank", "rank"})
MAIN_FUNCTION_NAMES = frozenset(
    {
        "is_main_process",
        "is_main",
        "is_master",
        "is_master_process",
        "is_primary",
        "is_rank_0",
        "is_rank_zero",
        "is_global_zero",
        "is_local_main_process",
        "main_process",
        "is_master_ordinal",
        "is_local_master",
    }
)
# Variables and attributes named like these hold the rank (or the main-process flag) when
# nothing in view assigns them (`args.local_rank`, a `rank` parameter of a spawned worker).
RANK_NAMES = frozenset({"rank", "local_rank", "global_rank", "world_rank", "ddp_rank", "ddp_local_rank"})
MAIN_NAMES = frozenset(
    {
        "master_process",
        "is_master",
        "is_main",
        "is_main_process",
        "is_local_main_process",
        "main_process",
        "is_master_process",
        "is_global_zero",
        "is_primary",
        "is_rank0",
        "is_rank_zero",
        "rank0",
        "rank_zero",
    }
)
RANK_ENV_VARS = frozenset({"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK"})

# Values that differ between ranks for reasons of data or timing, not rank.
DATA_CALLS = frozenset(
    {
        "time.time",
        "time.perf_counter",
        "time.monotonic",
        "time.process_time",
        "random.random",
        "random.randint",
        "random.choice",
        "random.uniform",
        "numpy.random.rand",
        "numpy.random.random",
        "numpy.random.randint",
        "torch.rand",
        "torch.randn",
        "torch.randint",
        "torch.isnan",
        "torch.isinf",
        "torch.isfinite",
        "math.isnan",
        "math.isinf",
        "math.isfinite",
    }
)
# File checks are treated as the same on every rank: checkpoints and logs live on shared storage
# in the common case, and resume logic branches on them everywhere. (On node-local disks they can
# differ; the analysis accepts missing that rather than flagging every resume path.)
FILESYSTEM_CALLS = frozenset({"os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.lexists"})

# Words in the name of an iterated object that make its items per-rank data.
DATA_ITERABLE_WORDS = ("loader", "dataset", "data", "batch", "dl", "iterator", "stream", "shard", "sample")

# Calls that end the process: torchrun tears the job down (fail-fast, not a hang).
EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort"})

# Context managers that run their block on rank 0 first and the other ranks after, with a
# barrier between: a collective inside the block meets a barrier on the other side.
SPLIT_BARRIER_METHODS = frozenset({"main_process_first", "local_main_process_first"})
# Context managers inside which DDP's backward does not all-reduce.
NO_SYNC_METHODS = frozenset({"no_sync"})

# Every name or attribute that can bring a rank into a function (see the simulator's lookups).
RANK_WORDS = frozenset(
    RANK_NAMES
    | MAIN_NAMES
    | RANK_FUNCTION_NAMES
    | MAIN_FUNCTION_NAMES
    | {"environ", "getenv", "get_rank", "is_main_process", "get_ordinal", "is_master_ordinal", "accelerator"}
)

# Text a device string built from a rank spells: `"cuda:{}"`, `f"cuda:{r}"`, `"cuda:%d"`, `"cuda:" +`.
# Looked for when a module is loaded (see ModuleFacts.builds_device_string), while its text is at hand.
BUILT_DEVICE_STRING = re.compile(r"cuda:[{%\"']")


# The table the simulator reads: what each library call means for rank divergence. --------------


class Role(Enum):
    COLLECTIVE = "collective"  # every rank of the group calls it, in the same order
    EXIT = "exit"  # ends the process: the launcher tears the job down (fail-fast)
    RANK = "rank"  # returns this process's rank
    MAIN = "main"  # true on the main process (rank 0) only
    UNIFORM = "uniform"  # returns the same on every rank
    DATA = "data"  # returns what differs per rank by data or timing
    WRAPPER = "wrapper"  # wraps a model for data parallelism: built with a collective, and so is each call
    ENGINE = "engine"  # returns an object whose methods (METHODS[tag]) include collectives


@dataclass(frozen=True)
class LibraryCall:
    role: Role
    why: str = ""
    tag: str | None = None  # ENGINE: the kind of object it returns, for METHODS


def _entries(names, role: Role, why: str = "") -> dict[str, LibraryCall]:
    notes = names if isinstance(names, dict) else dict.fromkeys(names, why)
    return {name: LibraryCall(role, note) for name, note in notes.items()}


# By qualified name, as the module's imports resolve the call.
FUNCTIONS: dict[str, LibraryCall] = {
    **_entries(EXIT_CALLS, Role.EXIT, "ends the process"),
    **_entries(TORCH_COLLECTIVES_QUALIFIED, Role.COLLECTIVE),
    **_entries(OTHER_COLLECTIVES, Role.COLLECTIVE),
    **_entries(RANK_CALLS, Role.RANK, "this process's rank"),
    **_entries(MAIN_CALLS, Role.MAIN, "true on the main process only"),
    **_entries(UNIFORM_CALLS, Role.UNIFORM, "configuration of the process group"),
    **_entries(FILESYSTEM_CALLS, Role.UNIFORM, "shared storage, in the common case"),
    **_entries(DATA_CALLS, Role.DATA, "data or timing of this process"),
    **_entries(DDP_WRAPPERS, Role.WRAPPER, "broadcasts the parameters when built; syncs buffers in forward"),
    "deepspeed.initialize": LibraryCall(Role.ENGINE, "returns the engine first", tag="deepspeed-init"),
    "accelerate.Accelerator": LibraryCall(Role.ENGINE, "accelerate's Accelerator", tag="accelerator"),
}

# By the kind of object the method is called on (a tag the simulator gives values).
METHODS: dict[str, dict[str, LibraryCall]] = {
    "accelerator": _entries(ACCELERATE_COLLECTIVES, Role.COLLECTIVE),
    "deepspeed": _entries(DEEPSPEED_COLLECTIVES, Role.COLLECTIVE),
}

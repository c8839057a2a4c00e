"""What counts as a collective, a rank source or a data source: data, with where each fact comes from.

Checked against the torch 2.13 sources (`torch/distributed/distributed_c10d.py`,
`torch/nn/parallel/distributed.py`) and 2-rank gloo runs. Users extend the collectives and
rank predicates in `[tool.ddplint]` (`collectives = [...]`, `rank-predicates = [...]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ddplint.settings import DISTRIBUTED_TYPES

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
    # torch 2.13 (distributed_c10d.py): the new names of all_gather_into_tensor and
    # reduce_scatter_tensor, and the private forms fairscale still calls
    "all_gather_single": "tensor collective",
    "reduce_scatter_single": "tensor collective",
    "_all_gather_base": "tensor collective",
    "_reduce_scatter_base": "tensor collective",
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
    # state_dict_saver.py (torch 2.13): the same central plan, written in the background
    "torch.distributed.checkpoint.async_save": "distributed checkpoint (collective planning)",
    # checkpoint/state_dict.py: full state dicts are gathered, rank 0's are broadcast
    "torch.distributed.checkpoint.state_dict.get_model_state_dict": "gathers a full state dict",
    "torch.distributed.checkpoint.state_dict.get_optimizer_state_dict": "gathers a full state dict",
    "torch.distributed.checkpoint.state_dict.get_state_dict": "gathers a full state dict",
    "torch.distributed.checkpoint.state_dict.set_model_state_dict": "broadcasts from rank 0",
    "torch.distributed.checkpoint.state_dict.set_optimizer_state_dict": "broadcasts from rank 0",
    "torch.distributed.checkpoint.state_dict.set_state_dict": "broadcasts from rank 0",
    # fsdp/fully_sharded_data_parallel.py: "This needs to be called on all ranks since it uses
    # collective communications" (full_optim_state_dict; optim_state_dict all_gather_object's keys)
    "torch.distributed.fsdp.FullyShardedDataParallel.optim_state_dict": "FSDP: all_gather of keys",
    "torch.distributed.fsdp.FullyShardedDataParallel.full_optim_state_dict": "FSDP: gathers the state",
    "torch.distributed.fsdp.FullyShardedDataParallel.sharded_optim_state_dict": "FSDP: gathers keys",
    "torch.distributed.fsdp.FullyShardedDataParallel.scatter_full_optim_state_dict": "FSDP: scatters",
    "torch.distributed.fsdp.FullyShardedDataParallel.optim_state_dict_to_load": "FSDP: broadcasts keys",
    "torch.distributed.fsdp.FullyShardedDataParallel.summon_full_params": "FSDP: all_gather of params",
}

# Horovod (horovod/torch/mpi_ops.py, functions.py, 0.28.1): "The reduction will not start until
# all processes are ready to send and receive the tensor"; barrier and join block every rank.
HOROVOD_COLLECTIVES: dict[str, str] = {
    f"horovod.torch.{name}": "Horovod collective"
    for name in (
        "allreduce",
        "allreduce_",
        "allreduce_async",
        "allreduce_async_",
        "grouped_allreduce",
        "allgather",
        "allgather_object",
        "broadcast",
        "broadcast_",
        "broadcast_object",
        "broadcast_parameters",
        "broadcast_optimizer_state",
        "alltoall",
        "barrier",
        "join",
    )
}

# accelerate's free functions (utils/operations.py, utils/other.py, 1.15): a torch collective
# under every multi-process type, XLA's under XLA.
ACCELERATE_FUNCTIONS: dict[str, str] = {
    **{
        f"accelerate.utils.{module}{name}": note
        for module in ("", "operations.")
        for name, note in (
            ("gather", "all_gather"),
            ("gather_object", "all_gather_object"),
            ("broadcast", "broadcast"),
            ("broadcast_object_list", "broadcast_object_list"),
            ("reduce", "all_reduce"),
            ("pad_across_processes", "all_gather of sizes"),
        )
    },
    "accelerate.utils.wait_for_everyone": "barrier",
    "accelerate.utils.other.wait_for_everyone": "barrier",
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
# What a module's text spells when a call in it may be one of the wrappers (the last part of the
# name: an import spells it when the call does not), looked for while its text is at hand.
WRAPPER_WORDS = tuple(sorted({name.rsplit(".", 1)[-1] for name in DDP_WRAPPERS}))
DISTRIBUTED_ENGINES = frozenset({"deepspeed.initialize", "accelerate.Accelerator"})
# DeepSpeed's device interface: `get_accelerator().set_device(i)` sets the device.
ACCELERATOR_GETTER = "get_accelerator"

# Methods of accelerate's Accelerator that every process must call (accelerator.py, 1.15).
ACCELERATE_COLLECTIVES: dict[str, str] = {
    "gather": "all_gather",
    "gather_for_metrics": "all_gather",
    "reduce": "all_reduce",
    "pad_across_processes": "all_gather of sizes",
    "wait_for_everyone": "barrier",
    "backward": "gradient all-reduce",
    "check_trigger": "all_reduce of the trigger flag",
}
# ... and those that are collectives only under some launch configurations (see WHEN).
ACCELERATE_CONDITIONAL: dict[str, tuple[str, frozenset[str]]] = {
    # save_state: `wait_for_everyone()` first with automatic checkpoint naming (:3622-3647);
    # gathers the sharded state under FSDP, DeepSpeed (engine.save_checkpoint) and Megatron-LM
    "save_state": (
        "gathers sharded state",
        frozenset({"FSDP", "DEEPSPEED", "MEGATRON_LM", "automatic_checkpoint_naming"}),
    ),
    "load_state": ("loads sharded state", frozenset({"FSDP", "DEEPSPEED", "MEGATRON_LM"})),
    # get_state_dict (:4002-4071): ZeRO-3 consolidation, FSDP full state dict; save_model calls it
    "get_state_dict": ("gathers the full state dict", frozenset({"FSDP", "DEEPSPEED"})),
    "save_model": ("gathers the full state dict", frozenset({"FSDP", "DEEPSPEED"})),
    # clip_grad_norm_ (:2946-3007): FSDP's all_reduce of the norm, XLA's of the gradients
    "clip_grad_norm_": ("all_reduce of the gradient norm", frozenset({"FSDP", "XLA"})),
}
# Lightning: `self.all_gather(...)` in a LightningModule; `strategy.barrier()`.
LIGHTNING_COLLECTIVES = frozenset({"all_gather"})
# DeepSpeed engine methods documented as "all processes must call this method".
DEEPSPEED_COLLECTIVES: dict[str, str] = {
    "backward": "gradient all-reduce",
    "step": "ZeRO partitioned step",
    "save_checkpoint": "all processes must call this method",
    # runtime/engine.py (0.16.5): ZeRO-3 gathers parameters after loading; save_16bit_model
    # "all processes must call" (GatheredParameters per module)
    "load_checkpoint": "ZeRO-3: all_gather of parameters",
    "save_16bit_model": "ZeRO-3: all processes must call this method",
}
# Methods of an FSDP-wrapped module (torch 2.13 fsdp/fully_sharded_data_parallel.py) that
# all-gather: the full state dict (also with rank0_only=True), the norm's all_reduce.
FSDP_COLLECTIVES: dict[str, str] = {
    "state_dict": "all_gather of the parameters (every rank, even with rank0_only=True)",
    "clip_grad_norm_": "all_reduce of the gradient norm",
    "summon_full_params": "all_gather of the parameters",
}

# Calls whose result is the same on every rank (configuration of the process group).
UNIFORM_CALLS = frozenset(
    {
        "torch.distributed.get_backend",
        "torch.cuda.device_count",
        "torch.cuda.is_available",
    }
)
# A hang needs at least two initialised ranks, so the analysis assumes a distributed run: these
# are true (`if not dist.is_initialized(): return` never returns) ...
DISTRIBUTED_CALLS = frozenset({"torch.distributed.is_initialized", "torch.distributed.is_available"})
# ... and the world size is at least 2 (`world_size > 1` is true, `world_size == 1` false).
WORLD_SIZE_CALLS = frozenset(
    {
        "torch.distributed.get_world_size",
        "horovod.torch.size",  # horovod/common/basics.py (0.28.1): the number of processes
        "torch_xla.runtime.world_size",
        "torch_xla.core.xla_model.xrt_world_size",
    }
)
# Names and attributes that hold the world size, or whether the run is distributed, when nothing
# in view assigns them (`args.world_size`, `accelerator.num_processes`, `self.is_distributed`).
WORLD_SIZE_NAMES = frozenset({"world_size", "num_processes", "num_replicas", "ddp_world_size"})
DISTRIBUTED_NAMES = frozenset({"distributed", "is_distributed", "use_distributed"})
WORLD_SIZE_ENV_VARS = frozenset({"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"})

# Calls returning the calling process's rank.
RANK_CALLS = frozenset(
    {
        "torch.distributed.get_rank",
        "torch.distributed.get_node_local_rank",
        # horovod/common/basics.py (0.28.1): this process's rank, its rank on the node
        "horovod.torch.rank",
        "horovod.torch.local_rank",
        "torch_xla.runtime.global_ordinal",
        "torch_xla.runtime.local_ordinal",
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
WORLD_SIZE_FUNCTION_NAMES = frozenset({"get_world_size"})
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
        # transformers Trainer (trainer.py, 5.25): `args.process_index == 0`, and its local twin
        "is_world_process_zero",
        "is_local_process_zero",
    }
)
# Variables and attributes named like these hold the rank (or the main-process flag) when
# nothing in view assigns them (`args.local_rank`, a `rank` parameter of a spawned worker).
RANK_NAMES = frozenset(
    {
        "rank",
        "local_rank",
        "global_rank",
        "world_rank",
        "ddp_rank",
        "ddp_local_rank",
        # accelerate (accelerator.py, 1.15) and transformers' TrainingArguments: the process's rank
        "process_index",
        "local_process_index",
    }
)
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
        # transformers' TrainingArguments (training_args.py, 5.25): true on process 0 (or on each
        # node's first with save_on_each_node / log_on_each_node)
        "should_save",
        "should_log",
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
# Of those, the tests of a number: per-rank when the number is (a local loss), the same on every
# rank when a collective agreed on it first.
NUMERIC_TESTS = frozenset(
    {"torch.isnan", "torch.isinf", "torch.isfinite", "math.isnan", "math.isinf", "math.isfinite"}
)
# Launchers that run one process when built with `devices=1` on one node (Lightning's Trainer,
# Fabric): on such an object the rank is 0 and every test of the main process holds.
ONE_PROCESS_LAUNCHERS = frozenset(
    {
        "lightning.Trainer",
        "lightning.pytorch.Trainer",
        "pytorch_lightning.Trainer",
        "lightning.Fabric",
        "lightning.fabric.Fabric",
        "lightning_fabric.Fabric",
    }
)
# What a tensor of per-rank data holds alike on every rank: set by the code that made it, not
# by the samples (its shape is not: a last batch, a ragged sequence, differ per rank).
TENSOR_METADATA = frozenset({"requires_grad", "dtype", "ndim", "is_cuda", "layout"})
# Tests of what kind of object a value is: `isinstance(batch, dict)`, `torch.is_tensor(stat)`.
TYPE_TESTS = frozenset(
    {"isinstance", "hasattr", "torch.is_tensor", "torch.is_floating_point", "torch.is_complex"}
)
# Methods that put what they are given into a container (list, dict, set, deque, queue).
CONTAINER_MUTATORS = frozenset(
    {"append", "extend", "insert", "add", "update", "appendleft", "extendleft", "setdefault", "put"}
)
# The norm of the gradients, returned by the clipping functions.
GRADIENT_NORMS = frozenset({"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm"})
# File checks are treated as the same on every rank: checkpoints and logs live on shared storage
# in the common case, and resume logic branches on them everywhere. (On node-local disks they can
# differ; the analysis accepts missing that rather than flagging every resume path.)
FILESYSTEM_CALLS = frozenset({"os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.lexists"})

# Words in the name of an iterated object that make its items per-rank data.
DATA_ITERABLE_WORDS = ("loader", "dataset", "data", "batch", "dl", "iterator", "stream", "shard", "sample")
# ... unless the name ends in one of these: a list of names the configuration gives (`data_paths`).
NAMING_WORDS = frozenset({"paths", "names", "files", "dirs", "keys", "configs", "type", "types", "kinds"})

# Decorators that run the function on the main process only and return None elsewhere:
# Lightning's rank_zero_only (fabric/utilities/rank_zero.py), accelerate's on_main_process and
# on_local_main_process (state.py:555-700).
MAIN_PROCESS_DECORATORS = frozenset({"rank_zero_only", "on_main_process", "on_local_main_process"})

# Progress bars whose counter stays 0 where `disable=` is true (tqdm's disabled bar yields its
# items without counting them): a counter read from one differs between ranks.
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm"})

# Start processes that run a function with the process index as its first argument.
SPAWN_CALLS = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.spawn.spawn",
    }
)

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
    WORLD_SIZE = "world size"  # the number of ranks: at least 2 in a run that can hang
    DISTRIBUTED = "distributed"  # whether the run is distributed: true in a run that can hang
    SHARD = "shard"  # returns this rank's share of the data, without padding
    SAME = "same"  # returns its first argument, wrapped: calls of it still run the argument's forward
    WRAPPER = "wrapper"  # wraps a model for data parallelism: built with a collective, and so is each call
    ENGINE = "engine"  # returns an object whose methods (METHODS[tag]) include collectives


# The launch configurations a collective may depend on: accelerate's distributed types, and the
# settings that turn collectives on. A collective with no condition is one under plain DDP too.
CONDITIONS = (*DISTRIBUTED_TYPES, "automatic_checkpoint_naming")
# accelerate's DistributedType member for each (state.py); automatic checkpoint naming is a DDP
# run with that setting on.
ACCELERATE_TYPE = {
    "DDP": "MULTI_GPU",
    "FSDP": "FSDP",
    "DEEPSPEED": "DEEPSPEED",
    "MEGATRON_LM": "MEGATRON_LM",
    "XLA": "XLA",
    "automatic_checkpoint_naming": "MULTI_GPU",
}
# accelerate's DistributedType members that name one of ours (the MULTI_* ones are DDP).
LAUNCH_NAMES = {"FSDP": "FSDP", "DEEPSPEED": "DEEPSPEED", "MEGATRON_LM": "MEGATRON_LM", "XLA": "XLA"}
# Classes a model is an instance of under one launch configuration (`isinstance(model, FSDP)`).
LAUNCH_CLASSES = {
    "torch.distributed.fsdp.FullyShardedDataParallel": "FSDP",
    "fairscale.nn.data_parallel.FullyShardedDataParallel": "FSDP",
    "deepspeed.DeepSpeedEngine": "DEEPSPEED",
    "deepspeed.runtime.engine.DeepSpeedEngine": "DEEPSPEED",
}
# Lightning's `Trainer(strategy=...)` / Fabric's names for them.
STRATEGY_NAMES = {"deepspeed": "DEEPSPEED", "fsdp": "FSDP", "ddp": "DDP", "xla": "XLA"}
# accelerate's state attributes that are set under one distributed type only.
PLUGINS = {"deepspeed_plugin": "DEEPSPEED", "fsdp_plugin": "FSDP", "megatron_lm_plugin": "MEGATRON_LM"}


@dataclass(frozen=True)
class LibraryCall:
    role: Role
    why: str = ""
    tag: str | None = None  # ENGINE, WRAPPER: the kind of object it returns, for METHODS
    # COLLECTIVE: only under these launch configurations (empty: always).
    when: frozenset[str] = frozenset()


def _entries(names, role: Role, why: str = "") -> dict[str, LibraryCall]:
    notes = names if isinstance(names, dict) else dict.fromkeys(names, why)
    return {name: LibraryCall(role, note) for name, note in notes.items()}


# By qualified name, as the module's imports resolve the call.
FUNCTIONS: dict[str, LibraryCall] = {
    **_entries(EXIT_CALLS, Role.EXIT, "ends the process"),
    **_entries(TORCH_COLLECTIVES_QUALIFIED, Role.COLLECTIVE),
    **_entries(OTHER_COLLECTIVES, Role.COLLECTIVE),
    **_entries(HOROVOD_COLLECTIVES, Role.COLLECTIVE),
    **_entries(ACCELERATE_FUNCTIONS, Role.COLLECTIVE),
    **_entries(RANK_CALLS, Role.RANK, "this process's rank"),
    **_entries(MAIN_CALLS, Role.MAIN, "true on the main process only"),
    **_entries(UNIFORM_CALLS, Role.UNIFORM, "configuration of the process group"),
    **_entries(WORLD_SIZE_CALLS, Role.WORLD_SIZE, "the number of ranks"),
    **_entries(DISTRIBUTED_CALLS, Role.DISTRIBUTED, "true in a distributed run"),
    **_entries(FILESYSTEM_CALLS, Role.UNIFORM, "shared storage, in the common case"),
    **_entries(DATA_CALLS, Role.DATA, "data or timing of this process"),
    **_entries(DDP_WRAPPERS, Role.WRAPPER, "broadcasts the parameters when built; syncs buffers in forward"),
    # FSDP1: its state_dict() and clip_grad_norm_ gather too (METHODS["fsdp"]); FSDP2's
    # fully_shard shards in place, and its state_dict() is not a collective.
    "torch.distributed.fsdp.FullyShardedDataParallel": LibraryCall(
        Role.WRAPPER, "all-gathers parameters in forward; its full state dict gathers", tag="fsdp"
    ),
    # deepspeed/__init__.py, runtime/engine.py:1283 (0.16.5): broadcasts the model; returns the
    # engine first
    "deepspeed.initialize": LibraryCall(Role.ENGINE, "returns the engine first", tag="deepspeed-init"),
    "accelerate.Accelerator": LibraryCall(Role.ENGINE, "accelerate's Accelerator", tag="accelerator"),
    # torch/__init__.py (2.13): an OptimizedModule whose forward calls the module it was given
    "torch.compile": LibraryCall(Role.SAME, "compiles the module; its calls run the module's forward"),
    # datasets/distributed.py and iterable_dataset.py (5.0): a map-style dataset in contiguous
    # blocks that differ by one; an iterable one by whole shards when n_shards % world_size == 0
    # (ranks differ by any amount), else every world_size-th example (they differ by one)
    "datasets.distributed.split_dataset_by_node": LibraryCall(
        Role.SHARD, "splits by node without padding: whole files (or every world_size-th example) per rank"
    ),
    # deepspeed/runtime/zero/partition_parameters.py: all-gathers ZeRO-3 partitions on entry
    "deepspeed.zero.GatheredParameters": LibraryCall(Role.COLLECTIVE, "ZeRO-3: all_gather of partitions"),
}

# By the kind of object the method is called on (a tag the simulator gives values).
METHODS: dict[str, dict[str, LibraryCall]] = {
    "accelerator": {
        **_entries(ACCELERATE_COLLECTIVES, Role.COLLECTIVE),
        **{
            name: LibraryCall(Role.COLLECTIVE, why, when=when)
            for name, (why, when) in ACCELERATE_CONDITIONAL.items()
        },
    },
    "deepspeed": _entries(DEEPSPEED_COLLECTIVES, Role.COLLECTIVE),
    "fsdp": _entries(FSDP_COLLECTIVES, Role.COLLECTIVE),
}


@dataclass(frozen=True)
class NamedMethods:
    """Methods known by the name of the object they are called on, for objects whose
    construction is out of view (passed in, held by another object), in programs that import
    one of `libraries`."""

    libraries: tuple[str, ...]
    receivers: frozenset[str]  # the receiver's last name: `trainer` in `self.trainer.fit()`
    methods: dict[str, LibraryCall]


NAMED_METHODS: tuple[NamedMethods, ...] = (
    NamedMethods(
        ("deepspeed",),
        frozenset({"engine", "model_engine", "deepspeed_engine", "ds_engine"}),
        _entries(DEEPSPEED_COLLECTIVES, Role.COLLECTIVE),
    ),
    # Lightning (src/lightning, 2.6.2): Trainer.save_checkpoint ends in strategy.barrier
    # (trainer.py:1471); a strategy's barrier/broadcast/reduce/all_gather are collectives under
    # every parallel strategy; Fabric's save and load end in a barrier (fabric.py:866, :915).
    NamedMethods(
        ("lightning", "pytorch_lightning"),
        frozenset({"trainer"}),
        {"save_checkpoint": LibraryCall(Role.COLLECTIVE, "ends in strategy.barrier")},
    ),
    NamedMethods(
        ("lightning", "pytorch_lightning", "lightning_fabric"),
        frozenset({"strategy"}),
        _entries(
            ("barrier", "broadcast", "reduce", "all_gather", "reduce_boolean_decision"), Role.COLLECTIVE
        ),
    ),
    NamedMethods(
        ("lightning", "lightning_fabric"),
        frozenset({"fabric"}),
        _entries(("barrier", "broadcast", "all_gather", "all_reduce", "save", "load"), Role.COLLECTIVE),
    ),
    # transformers (trainer.py, 5.25): evaluate/predict gather every batch; save_model gathers
    # the state under FSDP (full state dict), DeepSpeed ZeRO-3 and XLA, and not under plain DDP.
    NamedMethods(
        ("transformers", "trl"),
        frozenset({"trainer", "sfttrainer", "seq2seqtrainer", "dpotrainer", "rewardtrainer"}),
        {
            "evaluate": LibraryCall(Role.COLLECTIVE, "gathers every batch's outputs"),
            "predict": LibraryCall(Role.COLLECTIVE, "gathers every batch's outputs"),
            "save_model": LibraryCall(
                Role.COLLECTIVE, "gathers the full state dict", when=frozenset({"FSDP", "DEEPSPEED", "XLA"})
            ),
        },
    ),
)

# Libraries whose classes a project subclasses and calls the methods of on `self`.
LIBRARY_ROOTS = frozenset({"transformers", "trl"})


# State every DDP replica must hold identically, which DDP itself never synchronises after
# construction (torch/nn/parallel/distributed.py: parameters and buffers are broadcast from
# rank 0 in `__init__`; afterwards only gradients are all-reduced, in `backward()`): changed
# on some ranks only, the replicas drift apart without any error (DDP013).
@dataclass(frozen=True)
class ReplicaState:
    kind: str  # "optimizer", "scheduler", "scaler", "model"
    methods: frozenset[str]
    # What the change does to the replicas, for messages.
    effect: str


REPLICA_STATES = (
    ReplicaState(
        "optimizer",
        frozenset({"step"}),
        "only these ranks' parameters move, so the replicas hold different weights from then on",
    ),
    ReplicaState(
        "optimizer",
        frozenset({"load_state_dict"}),
        "the optimizer state (momentum, step counts) then differs between replicas, and DDP never "
        "synchronises optimizer state",
    ),
    ReplicaState(
        "scheduler",
        frozenset({"step", "load_state_dict"}),
        "the learning rate changes on these ranks only, so the replicas take steps of different sizes",
    ),
    ReplicaState(
        "scaler",
        frozenset({"update", "load_state_dict"}),
        "the loss scale changes on these ranks only, so the replicas scale, and skip, steps differently",
    ),
    ReplicaState(
        "model",
        frozenset({"load_state_dict", "apply"}),
        "the weights change on these ranks only, and DDP broadcast the parameters once, when it "
        "wrapped the model, never again",
    ),
)


# In-place writes to a parameter of a DDP model (`p.data.copy_(...)`, `torch.nn.init.*(p)`).
PARAMETER_WRITE = ReplicaState(
    "model",
    frozenset(),
    "these ranks' weights change, and DDP broadcast the parameters once, when it wrapped the "
    "model, never again",
)

REPLICA_METHODS = frozenset(method for state in REPLICA_STATES for method in state.methods)


def built_replica_kind(constructor: str) -> str | None:
    """What an object built by `constructor` (a qualified name) holds: `torch.optim.AdamW`,
    `torch.optim.lr_scheduler.ReduceLROnPlateau`, `torch.cuda.amp.GradScaler`."""
    if constructor.startswith("torch.optim.lr_scheduler."):
        return "scheduler"
    if constructor.startswith("torch.optim."):
        return "optimizer"
    if constructor.rsplit(".", 1)[-1] == "GradScaler":
        return "scaler"
    return None


def replica_kind(receiver: str) -> str | None:
    """What a receiver's name says it holds: `optimizer`, `self.opt_g`, `lr_scheduler`, `scaler`."""
    last = receiver.rsplit(".", 1)[-1].lower().strip("_")
    if (
        last in ("optim", "opt", "optimiser")
        or last.startswith("optimizer")
        or last.endswith(("_optimizer", "_opt", "_optim"))
    ):
        return "optimizer"
    if last.endswith(("scheduler", "sched")):
        return "scheduler"
    if last.endswith("scaler"):
        return "scaler"
    return None

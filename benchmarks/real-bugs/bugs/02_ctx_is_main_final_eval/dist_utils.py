import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


@dataclass
class DistContext:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self):
        return self.rank == 0


def setup_distributed():
    if "RANK" not in os.environ:
        return DistContext(0, 0, 1, torch.device("cuda"))
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return DistContext(dist.get_rank(), local_rank, dist.get_world_size(), torch.device("cuda", local_rank))


def ddp_wrap(model, ctx, find_unused_parameters=False):
    model = model.to(ctx.device)
    if ctx.world_size > 1:
        model = DDP(model, device_ids=[ctx.local_rank], find_unused_parameters=find_unused_parameters)
    return model


def cleanup():
    if dist.is_initialized():
        dist.destroy_process_group()

import os

import torch
import torch.distributed as dist


def suppress_output(rank):
    import builtins

    original_print = builtins.print

    def print(*args, **kwargs):
        if rank == 0 or kwargs.pop("force", False):
            original_print(*args, **kwargs)

    builtins.print = print


def init_distributed():
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    rank = int(os.environ.get("RANK", 0))
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://", world_size=world_size, rank=rank)
    torch.cuda.set_device(rank)
    device = torch.device(f"cuda:{rank}")
    if world_size > 1:
        x = torch.ones(1, device=device)
        dist.all_reduce(x)
        torch.cuda.synchronize(device)
    suppress_output(rank)
    return device

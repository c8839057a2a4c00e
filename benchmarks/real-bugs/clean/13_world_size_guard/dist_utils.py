import torch
import torch.distributed as dist


def get_world_size():
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def reduce_mean(tensor):
    world_size = get_world_size()
    if world_size > 1:
        tensor = tensor.clone()
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        tensor /= world_size
    return tensor


def synchronize():
    if not dist.is_initialized():
        return
    if dist.get_world_size() == 1:
        return
    dist.barrier()

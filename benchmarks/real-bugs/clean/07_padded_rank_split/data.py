import math

import torch.distributed as dist
from torch.utils.data import DataLoader, Subset


def padded_shard(dataset):
    rank = dist.get_rank()
    world = dist.get_world_size()
    indices = list(range(len(dataset)))
    per_rank = math.ceil(len(indices) / world)
    indices += indices[: per_rank * world - len(indices)]
    assert len(indices) == per_rank * world
    return Subset(dataset, indices[rank::world])


def make_loader(dataset, batch_size):
    return DataLoader(padded_shard(dataset), batch_size=batch_size, shuffle=True, drop_last=True)

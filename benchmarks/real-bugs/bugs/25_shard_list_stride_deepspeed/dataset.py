import random

import torch.distributed as dist
from torch.utils.data import IterableDataset


def partition_shards(shards, rank, world_size):
    return shards[rank::world_size]


class ShardDataset(IterableDataset):
    def __init__(self, shard_list, read_shard, shuffle=True):
        rank = dist.get_rank()
        world_size = dist.get_world_size()
        self.shards = partition_shards(shard_list, rank, world_size)
        self.read_shard = read_shard
        self.shuffle = shuffle

    def __iter__(self):
        shards = list(self.shards)
        if self.shuffle:
            random.shuffle(shards)
        for shard in shards:
            yield from self.read_shard(shard)

import random

import torch.distributed as dist
from torch.utils.data import Sampler


class DistributedBucketBatchSampler(Sampler):
    def __init__(self, lengths, batch_size, seed=0):
        self.lengths = lengths
        self.batch_size = batch_size
        self.seed = seed
        self.epoch = 0
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: self.lengths[i])
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        random.Random(self.seed + self.epoch).shuffle(batches)
        return iter(batches[self.rank::self.world_size])

    def __len__(self):
        n = (len(self.lengths) + self.batch_size - 1) // self.batch_size
        return (n - self.rank + self.world_size - 1) // self.world_size

import itertools

import torch.distributed as dist
from torch.utils.data import IterableDataset


class RankStridedStream(IterableDataset):
    def __init__(self, source):
        self.source = source

    def __iter__(self):
        rank = dist.get_rank() if dist.is_initialized() else 0
        world = dist.get_world_size() if dist.is_initialized() else 1
        yield from itertools.islice(iter(self.source), rank, None, world)

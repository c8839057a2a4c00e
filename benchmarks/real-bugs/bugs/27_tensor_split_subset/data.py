import torch
from torch.utils.data import DataLoader, Subset


def rank_shard(dataset, rank, world_size):
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(1234))
    mine = torch.tensor_split(order, world_size)[rank]
    return Subset(dataset, mine.tolist())


def make_train_loader(dataset, rank, world_size, batch_size):
    return DataLoader(rank_shard(dataset, rank, world_size), batch_size=batch_size, shuffle=False, num_workers=8)

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_loaders(opts):
    dataset = TensorDataset(torch.rand(64, 3, 8, 8), torch.randint(0, 10, (64,)))
    sampler = DistributedSampler(dataset, shuffle=True, seed=opts.seed)
    return DataLoader(dataset, batch_size=4, sampler=sampler)
